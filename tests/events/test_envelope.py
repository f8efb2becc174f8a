"""The event envelope: ``Event`` objects, their wire form and the envelope rules.

Covers spec/core.md §2.1 (the seven envelope keys and their constraints) and §9.1 step 2 (the
envelope check of seed entries), through ``Event.from_wire``, ``envelope_is_valid`` and the
``Event`` read API: an ``Event`` is its frozen wire object, readable by attribute too.
"""

from __future__ import annotations

import pickle
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlog import Event, EventRejected, NotLosslessJson, thaw
from agentlog import messages as m
from agentlog.events import (
    ENVELOPE_KEYS,
    RULE_TYPES,
    RuleViolation,
    build_event,
    check_event,
    envelope_is_valid,
    event_or_record,
    new_event,
    settle_owned_wire,
)
from agentlog.events.envelope import event_from_owned_wire
from agentlog.events.rules import _CHECKS as python_rules  # to compare with the accelerator
from agentlog.values import loads, message_rules_hold, settle_event_record, snapshot
from agentlog.values._snapshot import c_snapshot
from tests.values.support import needs_accelerator
from tests.values.test_snapshot import assert_same_tree

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


_PARTS = [
    ("turn/start", 0, 5, {"turn": 1}, None, None, False),
    ("user/message", 3, -7, m.user("hi", id="u1"), None, "append", False),
    (
        "tool/result",
        9,
        0,
        {"x": [1, 2]},
        [0, 2],
        {"op": "replace", "startSeq": 0, "endSeq": 2},
        False,
    ),
    ("plugin/thing", 2**53 - 1, 1, None, [1], None, True),
]


@pytest.mark.parametrize("parts", _PARTS, ids=[parts[0] for parts in _PARTS])
def test_build_event_is_new_event_in_one_call(parts: tuple[Any, ...]) -> None:
    """``build_event`` (the accelerator when built) equals ``new_event``: keys, order, type."""
    import gc

    event_type, seq, time, data, sources, op, ignorable = parts
    data, sources, op = snapshot(data), snapshot(sources), snapshot(op)
    expected = new_event(event_type, seq, time, data, sources, op, ignorable=ignorable)
    built = build_event(event_type, seq, time, data, sources, op, ignorable)
    assert type(built) is Event
    assert list(built.items()) == list(expected.items())
    assert gc.is_tracked(built) is gc.is_tracked(expected)
    with pytest.raises(TypeError):
        built["seq"] = 1


@pytest.mark.skipif(c_snapshot is None, reason="new_event_record is the C accelerator's")
def test_new_event_record_refuses_a_type_that_is_not_a_frozen_dict() -> None:
    from agentlog.values import new_event_record

    assert new_event_record is not None
    with pytest.raises(TypeError, match="slotless FrozenDict subtype"):
        new_event_record(dict, "t", 0, 0, None, None, None, False)
    with pytest.raises(TypeError, match="exactly 8 arguments"):
        new_event_record(Event, "t", 0, 0)


# --- settling a fresh record in one C call (the stores' readers) --------------------------

_MESSAGES: dict[str, Any] = {
    "user/message": m.user("hi", id="u1"),
    "assistant/message": m.assistant(
        [m.text("reading"), m.tool_call("c1", "read_file", '{"path": "a"}')],
        provider="openai",
        model="gpt-4o",
        turn=1,
        step=1,
        usage={"inputTokens": 10, "outputTokens": 2},
        id="a1",
    ),
    "tool/result": m.tool_result("c1", "file text", turn=1, step=1, id="r1"),
    "system/message": m.system("be brief", turn=1, step=1, id="s1"),
}


def _record(event_type: str, data: Any) -> dict[str, Any]:
    """A record as a reader parses it: plain dicts and lists nobody else holds."""
    record: dict[str, Any] = orjson.loads(
        orjson.dumps({"type": event_type, "seq": 3, "time": 5, "data": data})
    )
    return record


@needs_accelerator
@pytest.mark.parametrize("event_type", sorted(_MESSAGES))
def test_a_valid_message_record_settles_into_the_event_the_general_path_builds(
    event_type: str,
) -> None:
    wire = _record(event_type, _MESSAGES[event_type])
    expected = Event.from_wire(thaw(wire))
    settled = settle_event_record(wire, Event, RULE_TYPES)
    assert type(settled) is Event  # every rule held in C: no Python check needed
    assert settled is wire  # frozen in place
    assert_same_tree(settled, expected)


def test_without_the_accelerator_nothing_settles_and_the_general_path_reads() -> None:
    wire = _record("user/message", _MESSAGES["user/message"])
    settled = settle_owned_wire(wire)
    if c_snapshot is None:
        assert settled is None
        assert type(event_or_record(wire)) is dict
    else:
        assert type(settled) is Event
    assert event_from_owned_wire(wire) == Event.from_wire(thaw(wire))


def test_a_record_that_breaks_a_rule_is_left_for_the_general_path_to_name() -> None:
    data = thaw(_MESSAGES["tool/result"])
    data["message"]["toolCallId"] = "another"
    wire = _record("tool/result", data)
    assert type(event_or_record(wire)) is not Event
    with pytest.raises(EventRejected, match="message has mismatched tool call ids"):
        event_from_owned_wire(wire)


_ODD_VALUES: st.SearchStrategy[Any] = st.sampled_from(
    [None, "", "x", 0, 1, -1, 1.0, 2**53 - 1, True, False, [], {}, "developer", "user",
     "assistant", "tool", "system", "model", "system-prompt", "c1", "tool-addition",
     {"type": "tool-addition", "toolName": "t"}, {"type": "text", "text": "t"}]
)  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            paths += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            paths += _paths(item, (*prefix, index))
    return paths


@st.composite
def _mutated_messages(draw: st.DrawFn) -> tuple[str, Any]:
    """A valid message event's data with a few values replaced or removed anywhere."""
    event_type = draw(st.sampled_from(sorted(_MESSAGES)))
    data = thaw(_MESSAGES[event_type])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(_paths(data)))
        if not path:
            data = thaw(draw(_ODD_VALUES))  # a copy: later mutations must not reach the pool
            continue
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = thaw(draw(_ODD_VALUES))
    return event_type, data


@needs_accelerator
@settings(max_examples=400)
@given(_mutated_messages())
def test_the_accelerator_accepts_a_message_only_when_every_python_rule_holds(
    case: tuple[str, Any],
) -> None:
    """Soundness of the C message rules: what they accept, the Python rules accept too;
    what they leave, settle_owned_wire and check_event hand to the Python rules, with the same
    verdict."""
    event_type, data = case
    frozen = snapshot(data)
    try:
        python_rules[event_type](frozen, True)  # the rules alone, without the accelerator
        valid = True
    except RuleViolation:
        valid = False
    settled = settle_event_record(_record(event_type, data), Event, RULE_TYPES)
    if type(settled) is Event:
        assert valid, (event_type, data)
    if message_rules_hold(event_type, frozen):
        assert valid, (event_type, data)
    assert (type(settle_owned_wire(_record(event_type, data))) is Event) is valid
    try:
        check_event(event_type, frozen)
    except RuleViolation:
        assert not valid
    else:
        assert valid
