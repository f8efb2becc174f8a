"""``Session``: construction and the read API of spec/core.md §3.

Covers how sessions are built (only through ``Session.create`` / ``Session.from_events``; a
nonempty string id), the read attributes of a fresh session (``id``, ``header``, ``seq``,
``first_live_seq``, ``first_lifecycle_seq``, ``inherited_event_count``, ``own_events``,
``is_own_seq``, ``clock``, ``projections``) and its ``repr``.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import IMAGE_OFFLOAD, SeedRejected, Session
from tests.session.support import CLOCK_MS, U, clock, new_session, raises_exactly


def test_sessions_are_built_only_by_their_constructors() -> None:
    with pytest.raises(TypeError, match=r"Session\.create"):
        Session()


@pytest.mark.parametrize(("session_id", "shown"), [("", "''"), (None, "None"), (1, "1")])
def test_a_session_id_must_be_a_nonempty_string(session_id: Any, shown: str) -> None:
    with raises_exactly(SeedRejected, f"session id must be a nonempty string, got {shown}"):
        Session.create(session_id, clock=clock)
    with raises_exactly(SeedRejected, f"session id must be a nonempty string, got {shown}"):
        Session.from_events(session_id, [], clock=clock)


def test_a_fresh_session_reads_empty() -> None:
    session = Session.create("fresh", clock=clock)
    assert session.id == "fresh"
    assert session.header["createdAt"] == CLOCK_MS
    assert session.seq == 0
    assert list(session.events) == []
    assert (session.first_live_seq, session.first_lifecycle_seq) == (0, 0)
    assert session.inherited_event_count == 0
    assert session.own_events() == ()
    assert session.surface.nodes == ()
    assert session.derive_messages() == []
    assert session.request_header() is None
    assert session.request_context() is None
    assert session.clock is clock
    assert session.projections == ()


def test_every_event_of_an_unseeded_session_is_its_own() -> None:
    session = new_session()
    session.append("turn/start", {"turn": 1})
    session.append("user/message", U("a"), surface_op="append")
    assert session.own_events() == tuple(session.events)
    assert session.is_own_seq(0)
    assert session.is_own_seq(1)
    assert not session.is_own_seq(2)
    assert not session.is_own_seq(-1)


def test_a_session_keeps_its_projections_in_order() -> None:
    session = Session.create("s", projections=(IMAGE_OFFLOAD,), clock=clock)
    assert session.projections == (IMAGE_OFFLOAD,)


def test_the_repr_names_the_session_and_its_size() -> None:
    session = new_session("r")
    session.append("user/message", U("a"), surface_op="append")
    session.append("turn/start", {"turn": 1})
    assert repr(session) == "Session('r', 2 events, nodes=1)"


def test_the_default_clock_stamps_epoch_milliseconds() -> None:
    """Without a clock, events carry the wall time in epoch ms (``wall_clock``, read in line)."""
    import time

    from agentlog.session import wall_clock

    session = Session.create("wall")
    assert session.clock is wall_clock
    before = time.time_ns() // 1_000_000
    event = session.append("turn/start", {"turn": 1})
    after = time.time_ns() // 1_000_000
    assert type(event.time) is int
    assert before <= event.time <= after


class _AppendingSink:
    """A sink that appends to its session from ``persist`` (the first time only)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.nested = False

    def persist(self, event: Any) -> None:
        if not self.nested:
            self.nested = True
            self.session.append("turn/start", {"turn": 1})

    def hold(self) -> None: ...
    def release(self, *, write: bool) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


def test_an_append_whose_seq_was_taken_while_persisting_is_refused() -> None:
    session = Session.create("nested", clock=lambda: 0)
    session.attach(_AppendingSink(session))
    with pytest.raises(RuntimeError, match="seq 0 was taken while its append was persisted"):
        session.append("turn/start", {"turn": 1})
    assert [(e.seq, e.type) for e in session.events] == [(0, "turn/start")]
    assert session.attached
