"""The event envelope: ``Event`` objects, their wire form and the envelope rules.

Covers spec/core.md §2.1 (the seven envelope keys and their constraints) and §9.1 step 2 (the
envelope check of seed entries), through ``Event.from_wire``, ``envelope_is_valid`` and the
``Event`` read API: an ``Event`` is its frozen wire object, readable by attribute too.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from agentlog import Event, EventRejected, NotLosslessJson
from agentlog import messages as m
from agentlog.events import ENVELOPE_KEYS, envelope_is_valid, new_event
from agentlog.events.envelope import event_from_owned_wire
from agentlog.values import loads, snapshot

TURN_START: dict[str, Any] = {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}


def test_envelope_keys_are_the_seven_of_the_spec() -> None:
    assert {
        "type",
        "seq",
        "time",
        "data",
        "surfaceOp",
        "sourceEventSeqs",
        "ignorable",
    } == ENVELOPE_KEYS


def test_an_event_reads_as_attributes_and_as_its_wire_mapping() -> None:
    event = Event.from_wire(TURN_START)
    assert (event.type, event.seq, event.time) == ("turn/start", 0, 5)
    assert event.data == {"turn": 1}
    assert event["data"] is event.data
    assert event.surface_op is None
    assert event.source_event_seqs is None
    assert event.ignorable is False
    assert event == TURN_START


def test_surface_markers_read_as_attributes() -> None:
    event = Event.from_wire(
        {
            "type": "user/message",
            "seq": 2,
            "time": 0,
            "data": m.user("x", id="u"),
            "surfaceOp": {"op": "replace", "startSeq": 0, "endSeq": 1},
            "sourceEventSeqs": [0, 1],
            "ignorable": True,
        }
    )
    assert event.surface_op == {"op": "replace", "startSeq": 0, "endSeq": 1}
    assert event.source_event_seqs == [0, 1]
    assert event.ignorable is True


def test_an_event_is_deeply_immutable() -> None:
    event = Event.from_wire(TURN_START)
    with pytest.raises(TypeError):
        event["seq"] = 3
    with pytest.raises(TypeError):
        event.data["turn"] = 2
    assert event == TURN_START


def test_from_wire_detaches_from_its_input() -> None:
    wire: dict[str, Any] = {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}
    event = Event.from_wire(wire)
    wire["data"]["turn"] = 9
    assert event.data == {"turn": 1}


def test_to_wire_gives_a_plain_mutable_copy() -> None:
    event = Event.from_wire(TURN_START)
    plain = event.to_wire()
    assert plain == TURN_START
    assert type(plain) is dict
    assert type(plain["data"]) is dict
    plain["data"]["turn"] = 2
    assert event.data == {"turn": 1}


def test_events_cannot_be_built_field_by_field() -> None:
    with pytest.raises(TypeError, match=r"events are built by Session\.append"):
        Event({"type": "turn/start"})


def test_integral_float_seq_and_time_become_ints() -> None:
    """JSON written elsewhere may hold ``1.0``; seqs must index the log."""
    event = Event.from_wire({**TURN_START, "seq": 3.0, "time": 7.0})
    assert (event.seq, event.time) == (3, 7)
    assert type(event.seq) is int
    assert type(event.time) is int


def test_a_parsed_record_becomes_an_event_with_the_same_checks() -> None:
    """``event_from_owned_wire``: the stores' path, which freezes the parsed dict in place."""
    line = b'{"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}'
    event = event_from_owned_wire(loads(line))
    assert type(event) is Event
    assert event == Event.from_wire(TURN_START)
    with pytest.raises(EventRejected, match="session event has an invalid event envelope"):
        event_from_owned_wire(loads(b'{"type": "turn/start", "seq": -1, "time": 5, "data": {}}'))


@pytest.mark.parametrize("build", [Event.from_wire, event_from_owned_wire])
def test_a_rule_violation_names_an_integral_float_seq_as_the_seq(build: Any) -> None:
    wire = {"type": "tool/result", "seq": 2.0, "time": 5, "data": "not an object"}
    with pytest.raises(EventRejected) as refused:
        build(wire)
    assert str(refused.value) == "session event at seq 2 data must be an object"
    assert refused.value.seq == 2


def test_an_event_pickles_as_an_event() -> None:
    event = Event.from_wire(TURN_START)
    back = pickle.loads(pickle.dumps(event))
    assert type(back) is Event
    assert back == event


def test_from_wire_refuses_non_json_with_the_path() -> None:
    with pytest.raises(NotLosslessJson) as info:
        Event.from_wire({**TURN_START, "data": {"turn": float("nan")}})
    assert info.value.path == "$.data.turn"
    assert str(info.value) == "value is not lossless JSON: $.data.turn is nan (not a finite number)"


@pytest.mark.parametrize(
    "wire",
    [
        {**TURN_START, "extra": 1},
        {**TURN_START, "type": 1},
        {**TURN_START, "seq": "0"},
        {**TURN_START, "seq": 0.5},
        {**TURN_START, "seq": -1},
        {**TURN_START, "seq": True},
        {**TURN_START, "time": "1"},
        {**TURN_START, "time": 0.5},
        {**TURN_START, "time": False},
        {k: v for k, v in TURN_START.items() if k != "data"},
        {k: v for k, v in TURN_START.items() if k != "type"},
        {**TURN_START, "ignorable": False},
        {**TURN_START, "ignorable": "yes"},
        [TURN_START],
        "turn/start",
    ],
)
def test_from_wire_refuses_an_invalid_envelope(wire: Any) -> None:
    assert not envelope_is_valid(wire)
    with pytest.raises(EventRejected) as info:
        Event.from_wire(wire)
    assert str(info.value) == "session event has an invalid event envelope"


@pytest.mark.parametrize(
    "wire",
    [
        TURN_START,
        {**TURN_START, "time": -5},
        {**TURN_START, "data": None},
        {**TURN_START, "ignorable": True},
        {**TURN_START, "seq": 2**53 - 1},
    ],
)
def test_valid_envelopes(wire: dict[str, Any]) -> None:
    assert envelope_is_valid(wire)
    assert Event.from_wire(wire) == wire


def test_from_wire_runs_the_per_type_rules_with_the_adopt_subject() -> None:
    """spec/core.md §9.2: adopt/snapshot use the subject ``session event at seq <n>``."""
    with pytest.raises(EventRejected) as info:
        Event.from_wire(
            {"type": "user/message", "seq": 4, "time": 0, "data": {"id": ""}, "surfaceOp": "append"}
        )
    assert str(info.value) == "session event at seq 4 lacks an identified message"
    assert info.value.seq == 4
    assert info.value.event_type == "user/message"


def test_from_wire_leaves_log_dependent_surface_rules_to_the_log() -> None:
    """Marker rules need the log (contiguity, endpoints); an event alone is accepted."""
    event = Event.from_wire(
        {"type": "user/message", "seq": 0, "time": 0, "data": m.user("x"), "surfaceOp": "bogus"}
    )
    assert event.surface_op == "bogus"


def test_new_event_orders_keys_like_the_reference_writer() -> None:
    event = new_event("user/message", 1, 2, snapshot({}), [0], "append", ignorable=True)
    assert list(event) == [
        "type",
        "seq",
        "time",
        "data",
        "sourceEventSeqs",
        "surfaceOp",
        "ignorable",
    ]
    assert list(new_event("turn/start", 0, 0, snapshot({}))) == ["type", "seq", "time", "data"]
