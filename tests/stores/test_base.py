"""The backend contract's values: what backends hand the coordinator (spec/persistence.md §2.2)."""

from __future__ import annotations

import dataclasses

import pytest

from agentlog.stores import Backend, SessionInfo, StoredLog, TornTail
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
