"""``SurfaceState``: plan a transition without changing anything, then apply it.

Covers spec/core.md §5.4 and §5.8 at the level of the incremental state a ``Session`` keeps:
``plan()`` validates the next event and returns its transition (``None`` for a log-only event,
``("append",)``, ``("replace", i, j, shadowed)`` or ``("project", messages)``) while leaving
the state as it was, so a refused or abandoned candidate costs nothing; ``apply()`` commits a
plan; a state may fold a window of a log starting at ``base_seq``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentlog import IMAGE_OFFLOAD, Event, EventRejected
from agentlog import messages as m
from agentlog.surface import SurfaceState, projection_registry
from tests.session.support import U, rep, wire


class Log:
    """A list of events with the lookup a ``SurfaceState`` needs."""

    def __init__(self, base_seq: int = 0) -> None:
        self.events: list[Mapping[str, Any]] = []
        self.base_seq = base_seq

    def lookup(self, seq: int) -> Mapping[str, Any] | None:
        index = seq - self.base_seq
        return self.events[index] if 0 <= index < len(self.events) else None

    def commit(self, state: SurfaceState, event: dict[str, Any]) -> Any:
        frozen = Event.from_wire(event)
        plan = state.plan(frozen)
        self.events.append(frozen)
        state.apply(plan)
        return plan


def snapshot_of(state: SurfaceState) -> tuple[Any, ...]:
    return (
        list(state.nodes),
        state.expected_seq,
        state.replace_generation,
        state.content_generation,
        dict(state.projected),
    )


def test_plans_name_the_transition() -> None:
    log = Log()
    state = SurfaceState(log.lookup, {})
    assert log.commit(state, wire("turn/start", 0, {"turn": 1})) is None
    assert log.commit(state, wire("user/message", 1, U("a"), surfaceOp="append")) == ("append",)
    assert log.commit(state, wire("user/message", 2, U("b"), surfaceOp="append")) == ("append",)
    plan = log.commit(
        state, wire("user/message", 3, U("c"), surfaceOp=rep(1, 2), sourceEventSeqs=[1, 2])
    )
    assert plan == ("replace", 0, 1, [1, 2])
    assert state.nodes == [3]
    assert (state.expected_seq, state.replace_generation, state.content_generation) == (4, 1, 1)


def test_planning_changes_nothing() -> None:
    log = Log()
    state = SurfaceState(log.lookup, {})
    log.commit(state, wire("user/message", 0, U("a"), surfaceOp="append"))
    before = snapshot_of(state)
    candidate = Event.from_wire(
        wire("user/message", 1, U("b"), surfaceOp=rep(0, 0), sourceEventSeqs=[0])
    )
    assert state.plan(candidate) == ("replace", 0, 0, [0])
    assert snapshot_of(state) == before
    with pytest.raises(EventRejected):
        state.plan(Event.from_wire(wire("user/message", 1, U("b"), surfaceOp=rep(0, 0))))
    assert snapshot_of(state) == before


def test_a_plan_for_a_projection_carries_the_new_messages() -> None:
    log = Log()
    state = SurfaceState(log.lookup, projection_registry([IMAGE_OFFLOAD]))
    image = m.image("a", "image/png", size=1, width=1, height=1)
    log.commit(state, wire("user/message", 0, m.user([image], id="u"), surfaceOp="append"))
    plan = log.commit(
        state, wire("image/offload", 1, {"targets": [{"seq": 0, "imageIndexes": [0]}]})
    )
    assert plan[0] == "project"
    assert plan[1][0]["content"][0]["offloaded"] is True
    assert state.projected[0] == plan[1][0]
    assert (state.replace_generation, state.content_generation) == (0, 1)
    assert state.nodes == [0]


def test_a_state_expects_the_next_seq() -> None:
    log = Log()
    state = SurfaceState(log.lookup, {})
    with pytest.raises(EventRejected) as info:
        state.plan(Event.from_wire(wire("turn/start", 3, {"turn": 1})))
    assert str(info.value) == "session event seq 3 is not contiguous; expected 0"


def test_a_window_state_starts_at_its_base_seq() -> None:
    log = Log(base_seq=100)
    state = SurfaceState(log.lookup, {}, base_seq=100)
    assert state.expected_seq == 100
    log.commit(state, wire("user/message", 100, U("a"), surfaceOp="append"))
    log.commit(
        state, wire("user/message", 101, U("b"), surfaceOp=rep(100, 100), sourceEventSeqs=[100])
    )
    assert state.nodes == [101]


# --- folding a whole log: plain events in bulk --------------------------------------------

_MIXED = [
    wire("turn/start", 0, {"turn": 1}),
    wire("user/message", 1, U("a"), surfaceOp="append"),
    wire("user/message", 2, U("b"), surfaceOp="append"),
    wire("user/message", 3, U("c"), surfaceOp=rep(1, 2), sourceEventSeqs=[1, 2]),
    wire("developer/message", 4, m.developer(turn=1, step=1), surfaceOp="append"),
    wire("user/message", 5, U("d"), surfaceOp="append"),
    wire("turn/end", 6, {"turn": 1, "reason": {"kind": "completed"}}),
]


def test_advance_plain_folds_plain_events_and_stops_at_the_others() -> None:
    events = [Event.from_wire(event) for event in _MIXED]
    state = SurfaceState(lambda seq: None, {})
    log: list[Any] = []
    assert state.advance_plain(events, 0, log) == 3  # the replace needs the full plan
    assert (state.nodes, state.expected_seq, log) == ([1, 2], 3, events[:3])
    state.advance(events[3])
    log.append(events[3])
    assert state.advance_plain(events, 4, log) == 4  # a developer message: its header binding
    state.advance(events[4])
    log.append(events[4])
    assert state.advance_plain(events, 5, log, stop_types={"turn/end"}) == 6
    assert state.advance_plain([*events[:6], _MIXED[6]], 6, log) == 6  # a plain dict
    assert state.advance_plain(events, 6, log) == 7
    assert (state.nodes, log) == ([3, 4, 5], events)


def test_advance_plain_leaves_an_event_at_the_wrong_seq() -> None:
    events = [Event.from_wire(wire("turn/start", 1, {"turn": 1}))]
    state = SurfaceState(lambda seq: None, {})
    assert state.advance_plain(events, 0, []) == 0
    assert state.expected_seq == 0


def test_folding_a_log_in_bulk_equals_advancing_each_event() -> None:
    """The same nodes, generations and projections (with a projection registered)."""
    registry = projection_registry([IMAGE_OFFLOAD])
    events = [Event.from_wire(event) for event in _MIXED]
    one_by_one = SurfaceState(lambda seq: events[seq], registry)
    for event in events:
        one_by_one.advance(event)
    bulk = SurfaceState(lambda seq: events[seq], registry)
    log: list[Any] = []
    index = 0
    while index < len(events):
        index = bulk.advance_plain(events, index, log)
        if index < len(events):
            bulk.advance(events[index])
            log.append(events[index])
            index += 1
    assert snapshot_of(bulk) == snapshot_of(one_by_one)
    assert log == events
