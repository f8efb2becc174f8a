"""``restore_session``: a stored log back to a session — gates, closers, located corruption."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from agentlog import check_invariants
from agentlog import messages as m
from agentlog.errors import CorruptLog, FormatVersionError
from agentlog.stores import StoredLog
from agentlog.stores.restore import collector_paused, restore_session
from agentlog.surface import IMAGE_OFFLOAD
from tests.stores.contract import CLOCK, clock, foreign_header, foreign_turn

STEP = [
    {"type": "step/start", "time": CLOCK, "data": {"turn": 1, "step": 1}},
    {
        "type": "user/message",
        "time": CLOCK,
        "data": m.user("hi", id="u1"),
        "surfaceOp": "append",
    },
    {"type": "step/end", "time": CLOCK, "data": {"turn": 1, "step": 1}},
]


def restore(stored: StoredLog, *, repair: bool = True) -> Any:
    restored = restore_session(
        stored.header["id"], stored, repair=repair, projections=(IMAGE_OFFLOAD,), clock=clock
    )
    assert restored.migrated_from is None
    assert restored.stored_events == len(stored.events)
    return restored.session


def test_a_closed_log_restores_as_it_is_plus_the_end_seed_marker() -> None:
    events = foreign_turn(*STEP)
    session = restore(StoredLog(header=foreign_header("s1"), events=events))
    assert [e.to_wire() for e in session.events][: len(events)] == events
    assert session.events[-1].type == "session/end-seed"
    assert session.header["id"] == "s1"
    assert "type" not in session.header  # the physical record tag is not a header field


def test_an_interrupted_turn_is_closed_only_when_repairing() -> None:
    events = foreign_turn(*STEP)[:2]  # turn/start, step/start: a crash mid-step
    repaired = restore(StoredLog(header=foreign_header("s1"), events=events))
    assert [e.type for e in repaired.events][2:] == ["step/end", "turn/end", "session/end-seed"]
    check_invariants(repaired.events)
    as_stored = restore(StoredLog(header=foreign_header("s1"), events=events), repair=False)
    assert [e.type for e in as_stored.events][2:] == ["session/end-seed"]


def test_an_invalid_event_is_corruption_located_by_line() -> None:
    events = foreign_turn(*STEP)
    events[2] = {**events[2], "data": {"role": "user"}}
    stored = StoredLog(header=foreign_header("s1"), events=events, location="/log", first_line=2)
    with pytest.raises(CorruptLog) as refused:
        restore(stored)
    assert refused.value.line == 4  # events[2], one per line after the header
    assert refused.value.path == "/log"
    assert 'failed validation at "/log" line 4' in str(refused.value)


def test_a_stored_value_outside_the_json_domain_is_corruption_naming_path_and_reason() -> None:
    events = foreign_turn(*STEP)
    events[1] = {**events[1], "data": {"turn": 1, "step": 1, "cost": float("inf")}}
    stored = StoredLog(header=foreign_header("s1"), events=events, location="/log", first_line=2)
    with pytest.raises(CorruptLog) as refused:
        restore(stored)
    assert str(refused.value) == (
        'stored session "s1" failed validation at "/log" line 3: value is not lossless JSON: '
        "$.data.cost is inf (not a finite number)"
    )


def test_version_and_vocabulary_gates_come_first() -> None:
    with pytest.raises(FormatVersionError, match="uses log format v5"):
        restore(StoredLog(header=foreign_header("s1", version=5), events=[{"nonsense": 1}]))
    unknown = {"type": "future/thing", "seq": 0, "time": CLOCK, "data": None}
    with pytest.raises(FormatVersionError, match='event type "future/thing"'):
        restore(StoredLog(header=foreign_header("s1"), events=[unknown]))


def test_the_collector_is_paused_while_loading_and_restored_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is left alone
    finally:
        gc.enable()


def test_the_objects_a_load_made_move_to_the_oldest_generation() -> None:
    with collector_paused():
        made = [[index] for index in range(1000)]  # tracked containers, as a load makes
    assert gc.get_count()[0] < 1000  # not left for the youngest generation to walk
    assert all(gc.is_tracked(item) for item in made)


def test_what_the_application_froze_stays_frozen() -> None:
    """A pre-fork server freezes its heap (``gc.freeze``); a load must not undo that."""
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with collector_paused():
            made = [[index] for index in range(100)]
        assert gc.get_freeze_count() == frozen
        assert made
    finally:
        gc.unfreeze()
