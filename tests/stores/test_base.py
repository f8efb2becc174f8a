"""The backend contract's values: what backends hand the coordinator (spec/persistence.md §2.2)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentlog.errors import ConcurrentWriteError, SessionAlreadyExists, SessionNotFound
from agentlog.stores import Backend, SessionInfo, StoredLog, TornTail, open_backend
from agentlog.stores.base import DropsTornTails, check_tail, session_not_found, suffix
from agentlog.stores.memory import MemoryBackend


def test_a_stored_log_locates_events_by_file_line_or_by_seq() -> None:
    in_file = StoredLog(header={}, events=[], location="/logs/s1.jsonl", first_line=2)
    assert in_file.where(0) == '"/logs/s1.jsonl" line 2'
    assert in_file.where(5) == '"/logs/s1.jsonl" line 7'
    in_rows = StoredLog(header={}, events=[], location="/db/sessions.db")
    assert in_rows.where(5) == "seq 5"
    assert StoredLog(header={}, events=[]).where(0) == "seq 0"


def test_the_values_are_frozen_with_defaults_for_the_optional_parts() -> None:
    torn = TornTail(position=10, reason="line 3: torn")
    assert torn.recovered == ()
    stored = StoredLog(header={"id": "s1"}, events=[])
    assert (stored.torn, stored.location, stored.first_line) == (None, None, None)
    info = SessionInfo(id="s1", created_at=1, version=4)
    assert (info.cwd, info.parent_session, info.location) == (None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.id = "s2"  # type: ignore[misc]  # the point: it is frozen


def test_a_backend_must_implement_the_storage_primitives() -> None:
    class Incomplete(Backend):
        url = "incomplete:"

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()  # type: ignore[abstract]  # the point: it cannot be built
    MemoryBackend().close()  # close() is optional: the default does nothing


def test_the_tail_check_raises_the_three_errors_of_a_stale_append() -> None:
    check_tail("s", None, 0)  # materializing a new session
    check_tail("s", 5, 5)
    with pytest.raises(SessionAlreadyExists, match='session "s" already exists'):
        check_tail("s", 0, 0)
    with pytest.raises(SessionNotFound, match='session "s" not found') as missing:
        check_tail("s", None, 3)
    assert missing.value.session_id == "s"
    with pytest.raises(
        ConcurrentWriteError, match="starts at seq 3, stored next seq is 5"
    ) as moved:
        check_tail("s", 5, 3)
    assert (moved.value.expected_seq, moved.value.stored_seq) == (3, 5)


def test_one_builder_makes_every_session_not_found() -> None:
    plain = session_not_found("s")
    assert (str(plain), plain.session_id, plain.path) == ('session "s" not found', "s", None)
    assert session_not_found("s", "/db").path == "/db"


def test_a_suffix_keeps_the_header_and_shifts_the_line_numbers() -> None:
    stored = StoredLog(header={"id": "s"}, events=[{"seq": 0}, {"seq": 1}], first_line=2)
    assert suffix(stored, 0) is stored
    tail = suffix(stored, 1)
    assert (tail.events, tail.first_line, tail.header) == ([{"seq": 1}], 3, {"id": "s"})


def test_only_file_stores_drop_torn_tails(tmp_path: Path) -> None:
    assert not isinstance(MemoryBackend(), DropsTornTails)
    jsonl = open_backend(f"jsonl:///{tmp_path}")
    assert isinstance(jsonl, DropsTornTails)
    sqlite = open_backend(f"sqlite:///{tmp_path / 'x.db'}")
    assert not isinstance(sqlite, DropsTornTails)
    sqlite.close()
