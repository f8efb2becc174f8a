"""``StoreCore``: the decisions a store makes without I/O, the same for ``Store`` and its
asyncio twin (list pages, resume writes, the live view, fork sources and their errors)."""

from __future__ import annotations

import pytest

from agentlog.errors import SessionForkError, StoreError
from agentlog.stores import StoredLog, open_store
from agentlog.stores.core import StoreCore
from tests.stores.contract import clock, one_turn, start_turn


class Core(StoreCore[object]):
    @property
    def url(self) -> str:
        return "core:"


def test_page_arguments_are_checked_before_any_io() -> None:
    core = Core(clock=clock)
    assert core._page_after(5, None) is None
    with pytest.raises(StoreError, match="limit must be an integer from 1 to"):
        core._page_after(0, None)
    with pytest.raises(StoreError):
        core._page_after(5, "not a cursor")


def test_a_resume_writes_closers_and_the_marker_after_the_stored_events() -> None:
    with open_store("memory:", clock=clock) as store:
        session = store.create("s")
        start_turn(session, 1)
        stored = StoredLog(header=session.header, events=[e.to_wire() for e in session.events])
    core = Core(clock=clock)
    restored = core._restore("s", stored, repair=True)
    write = core._resume_write(stored, restored)
    assert write is not None
    events, next_seq = write
    assert next_seq == 3
    assert [e.type for e in events] == ["step/end", "turn/end", "session/end-seed"]


def test_a_fork_of_nothing_is_session_not_found() -> None:
    core = Core(clock=clock)
    with pytest.raises(SessionForkError) as refused:
        core._fork_source("gone", None)
    assert (refused.value.code, str(refused.value)) == (
        "SESSION_NOT_FOUND",
        'session "gone" not found',
    )


def test_a_fork_of_a_stored_log_inherits_only_what_is_stored() -> None:
    with open_store("memory:", clock=clock) as store:
        session = store.create("s")
        one_turn(session)
        stored = StoredLog(header=session.header, events=[e.to_wire() for e in session.events])
    core = Core(clock=clock)
    events, header = core._fork_source("s", stored)
    assert len(events) == len(stored.events)  # not the view's end-seed marker
    child = core._fork_child("s", (events, header), None, "child")
    assert child.header["parentSession"] == "s"
