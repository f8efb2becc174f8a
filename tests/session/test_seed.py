"""Building a session from a seed: replay, resume (restore) and fork children.

Covers spec/core.md §9: the per-entry checks in order (lossless JSON E30, envelope E31, data
rules and shape checks with the subject ``seed <type> at index <i>`` E34–E58, contiguity E32,
surface transition wrapped as E33), the ``session/end-seed`` marker of §9.4 and the
seeded/inherited rules (E76), plus deviation D3 (restore validates values too). Seeds may hold
undeclared types (§8.1). §15 scenarios 40–49 and 85.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from agentlog import SeedRejected, Session, fold_surface
from agentlog import messages as m
from tests.session.support import (
    CLOCK_MS,
    TR,
    A,
    S,
    U,
    call,
    clock,
    new_session,
    raises_exactly,
    rep,
    thaw_events,
    wire,
)

TURN_START = wire("turn/start", 0, {"turn": 1})
HEADER_CONFIG = {"provider": "mock", "model": "mock"}


def seeded_header(session_id: str = "s", **fields: Any) -> dict[str, Any]:
    return {"version": 4, "id": session_id, "createdAt": 1, "isSeeded": True, **fields}


def refused(seed: list[Any], text: str, **options: Any) -> SeedRejected:
    with raises_exactly(SeedRejected, text) as info:
        Session.from_events("s", seed, clock=clock, **options)
    error: SeedRejected = info.value
    return error


def a_session() -> Session:
    session = new_session()
    session.append("turn/start", {"turn": 1})
    session.append("user/message", U("a"), surface_op="append")
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("assistant/message", A([m.tool_call("c1", "t", "{}")]), surface_op="append")
    call(session, "c1")
    session.append("tool/result", TR("c1", "r"), surface_op="append")
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("user/message", U("s"), surface_op=rep(1, 5), source_event_seqs=[1, 3, 5])
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return session


# --- replay and the end-seed marker ------------------------------------------------------


@pytest.mark.parametrize("as_wire", [False, True])
def test_a_replay_keeps_the_events_and_marks_the_seed_end(as_wire: bool) -> None:
    """§15 scenario 40."""
    source = a_session()
    n = source.seq
    seed = thaw_events(source.events) if as_wire else source.events
    replay = Session.from_events("replay", seed, clock=clock)
    assert list(replay.events)[:n] == list(source.events)
    assert replay.seq == n + 1
    assert replay.events[n].to_wire() == {
        "type": "session/end-seed",
        "seq": n,
        "time": CLOCK_MS,
        "data": {},
    }
    assert replay.first_live_seq == n
    assert replay.first_lifecycle_seq == n
    assert replay.inherited_event_count == 0
    assert replay.surface.nodes == source.surface.nodes
    assert replay.surface.replace_generation == source.surface.replace_generation
    assert replay.derive_messages() == source.derive_messages()


def test_event_entries_are_shared_and_wire_entries_are_copied() -> None:
    source = a_session()
    shared = Session.from_events("shared", source.events, clock=clock)
    assert all(a is b for a, b in zip(shared.events, source.events, strict=False))
    wire_seed = thaw_events(source.events)
    copied = Session.from_events("copied", wire_seed, clock=clock)
    wire_seed[1]["data"]["content"][0]["text"] = "mutated"
    assert copied.events[1].data["content"][0]["text"] == "a"


def test_an_empty_seed_gets_a_marker_and_a_reopen_adds_none() -> None:
    """§15 scenario 41."""
    assert list(Session.create("e", clock=clock).events) == []
    first = Session.from_events("e", [], clock=clock)
    assert [event.to_wire() for event in first.events] == [
        {"type": "session/end-seed", "seq": 0, "time": CLOCK_MS, "data": {}}
    ]
    assert first.first_live_seq == 0
    again = Session.from_events("e", thaw_events(first.events), clock=clock)
    assert again.events == first.events
    assert again.first_live_seq == 1


def test_a_seed_is_accepted_from_any_iterable() -> None:
    source = a_session()
    replay = Session.from_events("gen", (event for event in source.events), clock=clock)
    assert replay.seq == source.seq + 1


def test_an_undeclared_type_in_a_seed_is_kept_verbatim() -> None:
    """§15 scenario 48: unknown types are not Session's concern."""
    entry = wire("plugin/event", 0, None)
    session = Session.from_events("s", [entry], clock=clock)
    assert session.events[0].to_wire() == entry
    assert session.surface.nodes == ()


@pytest.mark.parametrize("restore", [False, True])
def test_an_unknown_ignorable_event_keeps_opaque_markers(restore: bool) -> None:
    """§15 scenario 85."""
    entry = wire(
        "extension/event",
        0,
        {"x": 1},
        ignorable=True,
        surfaceOp={"opaque": True},
        sourceEventSeqs={"opaque": [1]},
    )
    session = Session.from_events("s", [entry], restore=restore, clock=clock)
    assert session.events[0].to_wire() == entry
    assert session.surface.nodes == ()
    assert fold_surface([entry]).nodes == ()


@pytest.mark.parametrize("event_type", ["turn/start", "assistant/attempt", "request/context"])
@pytest.mark.parametrize("restore", [False, True])
def test_a_known_log_only_type_is_not_excused_by_ignorable(event_type: str, restore: bool) -> None:
    """§15 scenario 85 (E7/E8 wrapped as E33)."""
    data = {
        "turn/start": {"turn": 1},
        "assistant/attempt": {"turn": 1, "step": 1, "stream": []},
        "request/context": {"provider": "p", "model": "m"},
    }[event_type]
    refused(
        [wire(event_type, 0, data, ignorable=True, surfaceOp={"opaque": 1})],
        f'invalid seed event at index 0: session event "{event_type}" is not surface-eligible '
        "and cannot carry surfaceOp",
        restore=restore,
    )
    refused(
        [wire(event_type, 0, data, ignorable=True, sourceEventSeqs={"opaque": 1})],
        f'invalid seed event at index 0: session event "{event_type}" is not surface-eligible '
        "and cannot carry sourceEventSeqs",
        restore=restore,
    )


# --- per-entry checks ---------------------------------------------------------------------


class Shell:
    """A class instance where an event dict is expected."""


@pytest.mark.parametrize(
    "entry",
    [
        wire("turn/start", 0, {"turn": float("nan")}),
        wire("turn/start", 0, {"turn": 1}, extra=(1,)),
        wire("turn/start", 0, [1, {2}]),
        wire("turn/start", 0, {"turn": 2**53}),
        Shell(),
    ],
)
def test_a_seed_entry_must_be_lossless_json(entry: Any) -> None:
    """E30; a class-instance shell fails here, and big integers per deviation D4."""
    error = refused([entry], "seed event at index 0 is not losslessly JSON-serializable")
    assert error.index == 0


def test_a_refused_seed_entry_names_the_path_and_the_reason() -> None:
    entry = wire("turn/start", 0, {"turn": 1, "at": [-0.0]})
    error = refused([entry], "seed event at index 0 is not losslessly JSON-serializable")
    assert str(error) == (
        "seed event at index 0 is not losslessly JSON-serializable: $.data.at[0] is -0.0 (no "
        "JSON form)"
    )
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.spec_text, copy.index) == (str(error), error.spec_text, 0)


def test_restore_validates_values_too() -> None:
    """Deviation D3: the reference skipped the check on restore; agentlog does not."""
    refused(
        [TURN_START, wire("turn/end", 1, {"turn": float("nan")})],
        "seed event at index 1 is not losslessly JSON-serializable",
        restore=True,
    )


@pytest.mark.parametrize("restore", [False, True])
@pytest.mark.parametrize(
    "entry",
    [
        {**TURN_START, "extra": 1},
        {**TURN_START, "type": 1},
        {**TURN_START, "seq": "0"},
        {**TURN_START, "seq": 0.5},
        {**TURN_START, "seq": -1},
        {**TURN_START, "time": "1"},
        {**TURN_START, "time": 0.5},
        {k: v for k, v in TURN_START.items() if k != "data"},
        {**TURN_START, "ignorable": False},
        {**TURN_START, "ignorable": "yes"},
        [TURN_START],
        None,
        "turn/start",
    ],
)
def test_a_seed_entry_must_have_a_valid_envelope(entry: Any, restore: bool) -> None:
    """§15 scenario 42 (E31)."""
    refused([entry], "seed event at index 0 has an invalid event envelope", restore=restore)


def test_a_class_instance_shell_fails_the_envelope_on_restore() -> None:
    """Restore checks the envelope first (the reference validates in place)."""
    refused([Shell()], "seed event at index 0 has an invalid event envelope", restore=True)


def test_an_ignorable_true_entry_is_accepted_and_retained() -> None:
    """§15 scenario 42."""
    session = Session.from_events("s", [{**TURN_START, "ignorable": True}], clock=clock)
    assert session.events[0].ignorable is True


def test_seed_seqs_must_be_contiguous_from_zero() -> None:
    """§15 scenario 43 (E32)."""
    end = wire("turn/end", 5, {"turn": 1, "reason": {"kind": "completed"}})
    error = refused(
        [TURN_START, end],
        "seed event at index 1 has seq 5 (expected 1); seed must be contiguous from 0",
    )
    assert error.index == 1
    refused(
        [wire("turn/start", 1, {"turn": 1})],
        "seed event at index 0 has seq 1 (expected 0); seed must be contiguous from 0",
    )


def test_surface_failures_are_wrapped_with_the_index() -> None:
    """§15 scenarios 44–45 (E33 around E9 and E7)."""
    refused(
        [TURN_START, wire("user/message", 1, U("hi"))],
        'invalid seed event at index 1: session event "user/message" is surface-eligible and '
        "requires a surfaceOp marker",
    )
    refused(
        [wire("turn/start", 0, {"turn": 1}, surfaceOp="append")],
        'invalid seed event at index 0: session event "turn/start" is not surface-eligible and '
        "cannot carry surfaceOp",
    )


def test_a_developer_binding_failure_is_wrapped_too() -> None:
    developer = m.developer(turn=1, step=1, additions=["t"], header_seq=0)
    refused(
        [TURN_START, wire("developer/message", 1, developer, surfaceOp="append")],
        "invalid seed event at index 1: developer/message headerSeq must reference an earlier "
        "request/header",
    )


def header_entry(header: dict[str, Any], reason: Any = "initial", **data: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"header": header, **data}
    if reason is not None:
        payload["reason"] = reason
    return wire("request/header", 1, payload)


@pytest.mark.parametrize(
    ("entry", "rule"),
    [
        (header_entry({"config": {"model": "old"}}), "lacks provider/model"),
        (
            header_entry({"config": {**HEADER_CONFIG, "reasoningEffort": ""}}),
            "has an invalid reasoningEffort",
        ),
        (
            header_entry({"config": {**HEADER_CONFIG, "reasoningEffort": 1}}),
            "has an invalid reasoningEffort",
        ),
        (
            header_entry({"config": HEADER_CONFIG, "adapterDefaults": None}),
            "has invalid adapterDefaults",
        ),
        (
            header_entry({"config": HEADER_CONFIG, "adapterDefaults": []}),
            "has invalid adapterDefaults",
        ),
        (
            header_entry({"config": HEADER_CONFIG, "adapterDefaults": {"unknown": True}}),
            "has invalid adapterDefaults",
        ),
        (
            header_entry({"config": HEADER_CONFIG, "adapterDefaults": {"maxTokens": False}}),
            "has invalid adapterDefaults",
        ),
        (
            header_entry({"config": HEADER_CONFIG, "adapterDefaults": {"reasoningEffort": True}}),
            "has invalid adapterDefaults",
        ),
        (header_entry({"config": HEADER_CONFIG}, "fallback"), "has an invalid reason"),
        (header_entry({"config": HEADER_CONFIG}, "unknown"), "has an invalid reason"),
        (header_entry({"config": HEADER_CONFIG}, None), "has an invalid reason"),
        (
            header_entry({"config": HEADER_CONFIG}, startsSeries=False),
            "has an invalid startsSeries marker",
        ),
        (
            header_entry({"config": HEADER_CONFIG}, startsSeries=1),
            "has an invalid startsSeries marker",
        ),
        (
            header_entry({"config": HEADER_CONFIG}, startsSeries="true"),
            "has an invalid startsSeries marker",
        ),
        (
            header_entry({"config": HEADER_CONFIG, "system": ""}),
            "must omit header.system; use system/message",
        ),
        (header_entry({"config": HEADER_CONFIG, "tools": []}), "must omit empty tools"),
        (
            header_entry({"config": HEADER_CONFIG, "adapterDefaults": {}}),
            "must omit empty adapterDefaults",
        ),
        (wire("request/header", 1, None), "data must be an object"),
        (
            wire("request/header", 1, {"header": "h", "reason": "initial"}),
            "header must be an object",
        ),
    ],
)
def test_seed_request_headers_are_checked(entry: dict[str, Any], rule: str) -> None:
    """§15 scenarios 46 and 49 (E34–E38, E54–E57)."""
    refused([TURN_START, entry], f"seed request/header at index 1 {rule}")


def test_a_valid_seed_header_with_markers_is_kept_verbatim() -> None:
    """§15 scenario 46."""
    entry = header_entry(
        {"config": {**HEADER_CONFIG, "maxTokens": 100}, "adapterDefaults": {"maxTokens": True}},
        "series",
        startsSeries=True,
    )
    session = Session.from_events("s", [TURN_START, entry], clock=clock)
    assert session.events[1].to_wire() == entry


@pytest.mark.parametrize("event_type", ["assistant/attempt", "assistant/message"])
def test_seed_settlement_fields_are_checked(event_type: str) -> None:
    """E39."""
    data = (
        {"turn": 1, "step": -1, "stream": []}
        if event_type == "assistant/attempt"
        else {**A("x"), "stream": "none"}
    )
    extra: dict[str, Any] = {"surfaceOp": "append"} if event_type == "assistant/message" else {}
    refused(
        [TURN_START, wire(event_type, 1, data, **extra)],
        f"seed {event_type} at index 1 has invalid settlement fields",
    )


def _replace_message(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**data, "message": {**data["message"], **changes}}


@pytest.mark.parametrize(
    ("event_type", "data", "rule"),
    [
        ("user/message", None, "lacks an identified message"),
        ("user/message", {**U("x"), "role": "assistant"}, 'message must have role "user"'),
        ("user/message", {**U("x"), "source": None}, "message has invalid source"),
        ("user/message", {**U("x"), "content": "x"}, "message has invalid content"),
        (
            "assistant/message",
            _replace_message(A("x"), source={"kind": "user"}),
            "message must have model source",
        ),
        (
            "tool/result",
            _replace_message(TR("c1", "x"), source={"kind": "user"}),
            "message must have tool source",
        ),
        (
            "tool/result",
            _replace_message(TR("c1", "x"), source={"kind": "tool", "callId": "c2"}),
            "message has mismatched tool call ids",
        ),
        (
            "tool/result",
            _replace_message(TR("c1", "x"), role="user"),
            'message must have role "tool"',
        ),
        (
            "system/message",
            _replace_message(S("x"), source={"kind": "runtime-context"}),
            "message must have system-prompt source",
        ),
        (
            "tool/result",
            TR("c1", "x") | {"error": {"name": "E", "code": "X"}},
            "error requires message.isError === true",
        ),
        (
            "developer/message",
            m.developer(turn=1, step=1, additions=["t"]),
            "requires headerSeq exactly when tool additions are present",
        ),
        (
            "developer/message",
            _replace_message(m.developer(turn=1, step=1), role="user"),
            "developer/message and developer role must occur together",
        ),
        (
            "user/message",
            m.user([{"type": "tool-removal", "toolName": "t"}], id="u"),
            "tool-change blocks require developer role",
        ),
    ],
)
def test_seed_message_shapes_are_checked(event_type: str, data: Any, rule: str) -> None:
    """§15 scenario 47 (E40–E45, E47–E49, E53, E58), subject ``seed <type> at index <i>``."""
    refused(
        [TURN_START, wire(event_type, 1, data, surfaceOp="append")],
        f"seed {event_type} at index 1 {rule}",
    )


def test_entry_checks_run_in_order() -> None:
    """§9.1: JSON, envelope, data rules, contiguity, then the surface transition."""
    refused(
        [wire("user/message", 3, None, extra=1)],
        "seed event at index 0 has an invalid event envelope",
    )
    refused(
        [wire("user/message", 3, None)], "seed user/message at index 0 lacks an identified message"
    )
    refused(
        [wire("user/message", 3, U("x"))],
        "seed event at index 0 has seq 3 (expected 0); seed must be contiguous from 0",
    )


# --- seeded sessions (fork children) and E76 ----------------------------------------------


def test_a_fork_child_seed_gets_the_tagged_marker_at_its_cut() -> None:
    session = Session.from_events(
        "s", [TURN_START], seeded_header(), inherited_event_count=1, clock=clock
    )
    assert [event.to_wire() for event in session.events][1] == {
        "type": "session/end-seed",
        "seq": 1,
        "time": CLOCK_MS,
        "data": {"inherited": True},
    }
    assert (session.first_live_seq, session.first_lifecycle_seq) == (1, 1)
    assert session.inherited_event_count == 1
    assert [event.seq for event in session.own_events()] == [1]
    assert not session.is_own_seq(0)
    assert session.is_own_seq(1)


def test_a_seed_that_marks_its_cut_keeps_its_marker_and_closers() -> None:
    seed = [
        TURN_START,
        wire("session/end-seed", 1, {"inherited": True}),
        wire("turn/end", 2, {"turn": 1, "reason": {"kind": "forked"}}),
    ]
    session = Session.from_events("s", seed, seeded_header(), inherited_event_count=1, clock=clock)
    assert thaw_events(session.events) == seed
    assert (session.first_live_seq, session.first_lifecycle_seq) == (3, 1)


def test_a_restored_fork_child_gets_only_the_ordinary_marker() -> None:
    seed = [
        TURN_START,
        wire("session/end-seed", 1, {"inherited": True}),
        wire("turn/end", 2, {"turn": 1, "reason": {"kind": "forked"}}),
    ]
    session = Session.from_events(
        "s", seed, seeded_header(), inherited_event_count=1, restore=True, clock=clock
    )
    assert session.events[-1].to_wire() == {
        "type": "session/end-seed",
        "seq": 3,
        "time": CLOCK_MS,
        "data": {},
    }
    assert session.inherited_event_count == 1


@pytest.mark.parametrize(
    ("seed", "header", "inherited", "text"),
    [
        ([], seeded_header(), None, "seeded session requires an inherited event count"),
        ([TURN_START], None, 1, "unseeded session inherited event count must be 0"),
        ([], seeded_header(), 1, "session inherited event count exceeds its event log"),
        (
            [TURN_START],
            seeded_header(),
            0,
            "seeded session constructor seed must equal its inherited prefix or mark its "
            "inherited cut",
        ),
        (
            [
                TURN_START,
                wire("session/end-seed", 1, {"inherited": True}),
                wire("session/end-seed", 2, {"inherited": True}),
            ],
            seeded_header(),
            1,
            "session inherited event count must identify the final inherited marker",
        ),
    ],
)
def test_seeded_and_inherited_counts_must_agree(
    seed: list[Any], header: Any, inherited: int | None, text: str
) -> None:
    """E76."""
    refused(seed, text, header=header, inherited_event_count=inherited)


def test_a_seeded_header_needs_a_constructor_seed() -> None:
    """E76."""
    with raises_exactly(SeedRejected, "seeded session requires an explicit constructor seed"):
        Session.create("s", seeded_header(), clock=clock)


def test_an_unseeded_session_may_state_zero_inherited_events() -> None:
    session = Session.from_events("s", [TURN_START], inherited_event_count=0, clock=clock)
    assert session.inherited_event_count == 0


def test_restore_checks_the_header_before_the_events() -> None:
    bad_header = {"version": 3, "id": "s", "createdAt": 1, "isSeeded": False}
    bad_seed = [{**TURN_START, "extra": 1}]
    with raises_exactly(SeedRejected, "session header version must be 4, got 3"):
        Session.from_events("s", bad_seed, bad_header, restore=True, clock=clock)
    with raises_exactly(SeedRejected, "seed event at index 0 has an invalid event envelope"):
        Session.from_events("s", bad_seed, bad_header, clock=clock)
