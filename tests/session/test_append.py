"""``Session.append``: the acceptance pipeline, its order, and what a refusal leaves behind.

Covers spec/core.md §4 (stages in order: data snapshot E1, metadata snapshot E2, candidate,
data rules, surface validation, commit), §3 (``events`` views, ``seq``), DESIGN decisions 3–5
and the deliberate differences of conformance/README.md: append refuses undeclared types unless
``ignorable=True`` (D2), runs the seed shape checks with the subject
``session event "<type>" at seq <n>`` (D1), and refuses integers beyond ±(2**53-1) (D4).
Every refusal is checked with "rejected(X)": nothing observable changes and no seq is used.
§15 scenarios 1–7 and 84.
"""

from __future__ import annotations

import collections
import pickle
from typing import Any

import pytest

from agentlog import EventRejected, NotLosslessJson, Session
from agentlog import messages as m
from agentlog.values import FrozenList
from tests.session.support import (
    CLOCK_MS,
    TR,
    A,
    U,
    assert_append_rejected,
    assert_rejected,
    begin,
    call,
    clock,
    finish,
    new_session,
    rep,
    thaw_events,
)
from tests.values.support import deep_list


def e1(event_type: str) -> str:
    return f'session event "{event_type}" carries non-JSON-serializable data'


def e2(event_type: str) -> str:
    return f'session event "{event_type}" carries non-JSON-serializable surface metadata'


class Custom:
    pass


def cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {"id": "u"}
    value["self"] = value
    return value


# --- the value domain (E1, E2) -----------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        float("nan"),
        float("inf"),
        float("-inf"),
        -0.0,
        {1, 2},
        b"bytes",
        (1, 2),
        Custom(),
        len,
        lambda: None,
        [1, {2}],
        {"deep": {"f": len}},
        2**53,
        -(2**53),
        collections.OrderedDict(),
    ],
)
def test_data_outside_the_lossless_domain_is_rejected(bad: Any) -> None:
    """§15 scenario 1 (E1); integers beyond ±(2**53-1) per deviation D4."""
    session = new_session()
    data = {**U("x"), "extra": bad}
    error = assert_append_rejected(
        session, e1("user/message"), "user/message", data, surface_op="append"
    )
    assert isinstance(error.__cause__, NotLosslessJson)
    assert error.__cause__.path.startswith("$.extra")
    assert len(session.events) == 0


def test_cyclic_data_is_rejected() -> None:
    """§15 scenario 1 (E1)."""
    session = new_session()
    error = assert_append_rejected(
        session, e1("user/message"), "user/message", cyclic(), surface_op="append"
    )
    assert error.__cause__.reason == "refers back to an enclosing value (a cycle)"


def test_a_non_string_key_is_rejected() -> None:
    session = new_session()
    assert_append_rejected(session, e1("turn/start"), "turn/start", {"turn": 1, 2: "two"})


def test_the_rejection_names_the_path_and_the_reason() -> None:
    session = new_session()
    data = m.user([m.text("a"), {"type": "text", "text": float("nan")}], id="u")
    error = assert_append_rejected(
        session, e1("user/message"), "user/message", data, surface_op="append"
    )
    assert str(error) == (
        'session event "user/message" carries non-JSON-serializable data: $.content[1].text is '
        "nan (not a finite number)"
    )
    assert error.spec_text == 'session event "user/message" carries non-JSON-serializable data'


def test_non_json_surface_metadata_names_the_path_and_the_reason() -> None:
    session = new_session()
    error = assert_append_rejected(
        session,
        'session event "user/message" carries non-JSON-serializable surface metadata',
        "user/message",
        U("x"),
        surface_op={"op": "replace", "startSeq": -0.0, "endSeq": 0},
    )
    assert str(error).endswith("surface metadata: $.startSeq is -0.0 (no JSON form)")


def test_the_spec_text_survives_pickling() -> None:
    session = new_session()
    with pytest.raises(EventRejected) as refused:
        session.append("todo/write", {"targets": [{"value": -0.0}]})
    copy = pickle.loads(pickle.dumps(refused.value))
    assert str(copy) == str(refused.value)
    assert copy.spec_text == 'session event "todo/write" carries non-JSON-serializable data'
    assert str(copy) == (
        'session event "todo/write" carries non-JSON-serializable data: $.targets[0].value is '
        "-0.0 (no JSON form)"
    )


def test_very_deep_data_is_accepted_and_stored_equal() -> None:
    """§15 scenario 2."""
    session = new_session()
    value = deep_list(5000, "bottom")
    event = session.append("todo/write", {"todos": value})
    stored = event.data["todos"]
    for _ in range(4999):
        assert type(stored) is FrozenList
        stored = stored[0]
    assert stored == ["bottom"]


def test_stored_data_is_detached_and_deeply_immutable() -> None:
    """§15 scenario 3."""
    session = new_session()
    data = {"todos": [{"content": "a", "status": "pending"}]}
    event = session.append("todo/write", data)
    data["todos"][0]["status"] = "completed"
    data["todos"].append({"content": "b", "status": "pending"})
    assert event.data == {"todos": [{"content": "a", "status": "pending"}]}
    assert session.events[0] is event
    assert session.events[0] == event
    with pytest.raises(TypeError):
        event.data["todos"] = []
    with pytest.raises(TypeError):
        event.data["todos"].append({})
    with pytest.raises(TypeError):
        event.data["todos"][0]["status"] = "done"
    with pytest.raises(TypeError):
        event["type"] = "x"


def test_shared_sub_objects_are_stored_as_independent_copies() -> None:
    """§15 scenario 4."""
    session = new_session()
    shared = {"k": [1]}
    event = session.append("todo/write", {"a": shared, "b": shared})
    assert event.data["a"] == event.data["b"] == shared
    assert event.data["a"] is not event.data["b"]


def test_already_frozen_data_is_stored_without_a_copy() -> None:
    """DESIGN decision 4."""
    session = new_session()
    first = session.append("user/message", U("a"), surface_op="append")
    again = session.append("todo/write", {"copy": first.data})
    assert again.data["copy"] is first.data


@pytest.mark.parametrize(
    ("options", "cause"),
    [
        ({"surface_op": Custom()}, "is of type Custom (not a JSON type)"),
        ({"surface_op": {"op": "replace", "startSeq": float("nan"), "endSeq": 0}}, "not a finite"),
        ({"surface_op": {"op": "replace", "startSeq": -0.0, "endSeq": 0}}, "-0.0"),
        ({"surface_op": {"op": "replace", "startSeq": 2**53, "endSeq": 0}}, "safe integer range"),
        ({"surface_op": ("append",)}, "tuple"),
        ({"surface_op": "append", "source_event_seqs": (0,)}, "tuple"),
        ({"surface_op": "append", "source_event_seqs": [float("inf")]}, "not a finite"),
    ],
)
def test_surface_metadata_outside_the_lossless_domain_is_rejected(
    options: dict[str, Any], cause: str
) -> None:
    """§15 scenario 5 (E2); a ``-0`` endpoint is refused here, before the shape check."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    error = assert_append_rejected(session, e2("user/message"), "user/message", U("x"), **options)
    assert cause in error.__cause__.reason


def test_surface_metadata_is_snapshotted_before_the_marker_rules() -> None:
    session = new_session()
    assert_append_rejected(
        session, e2("turn/start"), "turn/start", {"turn": 1}, surface_op=Custom()
    )


def test_surface_metadata_is_detached_from_the_caller() -> None:
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    op = rep(0, 0)
    cites = [0]
    event = session.append("user/message", U("b"), surface_op=op, source_event_seqs=cites)
    op["startSeq"] = 9
    cites.append(5)
    assert event.surface_op == {"op": "replace", "startSeq": 0, "endSeq": 0}
    assert event.source_event_seqs == [0]


# --- seqs, views and the returned event ---------------------------------------------------


def test_seqs_are_dense_and_a_rejected_append_consumes_none() -> None:
    """§15 scenario 6."""
    session = new_session()
    assert session.append("turn/start", {"turn": 1}).seq == 0
    assert session.append("user/message", U("a"), surface_op="append").seq == 1
    assert_append_rejected(session, e1("user/message"), "user/message", float("nan"))
    assert session.seq == 2
    assert session.append("user/message", U("b"), surface_op="append").seq == 2
    assert [event.seq for event in session.events] == [0, 1, 2]


def test_the_events_view_is_the_same_object_until_the_next_append() -> None:
    """§15 scenario 7."""
    session = new_session()
    session.append("turn/start", {"turn": 1})
    view = session.events
    assert session.events is view
    session.append("user/message", U("a"), surface_op="append")
    assert session.events is not view
    assert len(view) == 1
    assert list(view) == [session.events[0]]
    assert len(session.events) == 2


def test_append_returns_the_stored_event_with_the_clock_time() -> None:
    session = new_session()
    event = session.append("user/message", U("a"), surface_op="append")
    assert session.events[-1] is event
    assert session.event_at(0) is event
    assert event.time == CLOCK_MS
    assert event.to_wire() == {
        "type": "user/message",
        "seq": 0,
        "time": CLOCK_MS,
        "data": U("a"),
        "surfaceOp": "append",
    }


def test_the_event_keys_follow_the_reference_writer_order() -> None:
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    event = session.append("user/message", U("b"), surface_op=rep(0, 0), source_event_seqs=[0])
    assert list(event) == ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"]
    assert list(session.append("turn/start", {"turn": 1})) == ["type", "seq", "time", "data"]


def test_event_at_refuses_a_missing_seq() -> None:
    session = new_session()
    session.append("turn/start", {"turn": 1})
    for seq in (1, -1, True):
        with pytest.raises(IndexError):
            session.event_at(seq)
    assert session.event_at_or_none(1) is None
    assert session.event_at_or_none(0) is session.events[0]


def test_the_clock_is_read_once_per_append() -> None:
    ticks: list[int] = []

    def ticking() -> int:
        ticks.append(len(ticks))
        return 1000 + len(ticks)

    session = Session.create(
        "s", header={"version": 4, "id": "s", "createdAt": 0, "isSeeded": False}, clock=ticking
    )
    first = session.append("turn/start", {"turn": 1})
    second = session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert (first.time, second.time) == (1001, 1002)
    assert len(ticks) == 2


def test_a_clock_that_is_not_epoch_milliseconds_is_refused() -> None:
    session = Session.create(
        "s",
        header={"version": 4, "id": "s", "createdAt": 0, "isSeeded": False},
        clock=lambda: 1.5,  # type: ignore[arg-type, return-value]  # a bad clock, on purpose
    )
    assert_rejected(
        session,
        "session clock returned 1.5, not epoch milliseconds (a safe integer)",
        lambda: session.append("turn/start", {"turn": 1}),
    )


def test_a_clock_beyond_the_safe_range_is_refused() -> None:
    session = Session.create(
        "s",
        header={"version": 4, "id": "s", "createdAt": 0, "isSeeded": False},
        clock=lambda: 2**60,
    )
    with pytest.raises(EventRejected):
        session.append("turn/start", {"turn": 1})


# --- declared types (deviation D2) -------------------------------------------------------


def test_an_undeclared_type_is_refused_unless_ignorable() -> None:
    session = new_session()
    assert_append_rejected(
        session,
        'session event "plugin/unknown" has an undeclared type; declare it or append it as '
        "ignorable",
        "plugin/unknown",
        {"n": 1},
    )
    event = session.append("plugin/unknown", {"n": 1}, ignorable=True)
    assert event.ignorable is True
    assert event.to_wire()["ignorable"] is True
    assert session.surface.nodes == ()


def test_the_type_check_comes_first() -> None:
    session = new_session()
    assert_append_rejected(
        session,
        'session event "plugin/unknown" has an undeclared type; declare it or append it as '
        "ignorable",
        "plugin/unknown",
        float("nan"),
    )


def test_a_declared_type_is_not_marked_ignorable() -> None:
    session = new_session()
    event = session.append("turn/start", {"turn": 1})
    assert "ignorable" not in event
    assert event.ignorable is False


def test_a_known_type_may_be_appended_as_ignorable() -> None:
    session = new_session()
    event = session.append("session/title", {"title": "t"}, ignorable=True)
    assert event.ignorable is True


def test_an_undeclared_ignorable_type_keeps_opaque_markers() -> None:
    """§5.2 [F4]: they are kept verbatim and never touch the surface (§15 scenario 85)."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    event = session.append(
        "extension/event",
        None,
        surface_op={"opaque": 1},
        source_event_seqs={"opaque": 2},
        ignorable=True,
    )
    assert event.surface_op == {"opaque": 1}
    assert event.source_event_seqs == {"opaque": 2}
    assert session.surface.nodes == (0,)


def test_a_non_string_type_is_refused() -> None:
    session = new_session()
    assert_rejected(
        session,
        "session event type must be a string, got 1",
        lambda: session.append(1, {}),  # type: ignore[arg-type]  # the point: a bad type
    )


# --- data rules and shape checks at append (deviation D1) ---------------------------------

HEADER = {"config": {"provider": "mock", "model": "mock"}}


@pytest.mark.parametrize(
    ("event_type", "data", "rule"),
    [
        (
            "request/header",
            {"header": {"config": {"model": "old"}}, "reason": "initial"},
            "lacks provider/model",
        ),
        (
            "request/header",
            {
                "header": {"config": {**HEADER["config"], "reasoningEffort": ""}},
                "reason": "initial",
            },
            "has an invalid reasoningEffort",
        ),
        (
            "request/header",
            {"header": {**HEADER, "adapterDefaults": None}, "reason": "initial"},
            "has invalid adapterDefaults",
        ),
        ("request/header", {"header": HEADER, "reason": "fallback"}, "has an invalid reason"),
        ("request/header", {"header": HEADER}, "has an invalid reason"),
        (
            "request/header",
            {"header": HEADER, "reason": "initial", "startsSeries": False},
            "has an invalid startsSeries marker",
        ),
        ("assistant/attempt", {"turn": 1, "step": 1}, "has invalid settlement fields"),
        ("assistant/message", {**A("x"), "stream": None}, "has invalid settlement fields"),
        (
            "user/message",
            {"role": "user", "content": [], "source": {"kind": "user"}},
            "lacks an identified message",
        ),
        ("user/message", None, "lacks an identified message"),
        ("user/message", {**U("x"), "role": "assistant"}, 'message must have role "user"'),
        (
            "tool/result",
            {**TR("c", "x"), "message": {**TR("c", "x")["message"], "role": "user"}},
            'message must have role "tool"',
        ),
        ("user/message", {**U("x"), "source": None}, "message has invalid source"),
        ("user/message", {**U("x"), "content": "x"}, "message has invalid content"),
        (
            "assistant/message",
            {**A("x"), "message": {**A("x")["message"], "source": {"kind": "user"}}},
            "message must have model source",
        ),
        (
            "tool/result",
            {**TR("c", "x"), "message": {**TR("c", "x")["message"], "source": {"kind": "user"}}},
            "message must have tool source",
        ),
        (
            "tool/result",
            {**TR("c", "x"), "message": {**TR("c", "x")["message"], "toolCallId": "other"}},
            "message has mismatched tool call ids",
        ),
        (
            "system/message",
            {
                **m.system("x", turn=1, step=1),
                "message": {
                    **m.system("x", turn=1, step=1)["message"],
                    "source": {"kind": "runtime-context"},
                },
            },
            "message must have system-prompt source",
        ),
    ],
)
def test_append_runs_the_seed_shape_checks(event_type: str, data: Any, rule: str) -> None:
    """Deviation D1 (E34–E48 after the append subject)."""
    session = new_session()
    session.append("turn/start", {"turn": 1})
    surface = (
        {"surface_op": "append"}
        if event_type in {"user/message", "assistant/message", "tool/result", "system/message"}
        else {}
    )
    assert_append_rejected(
        session, f'session event "{event_type}" at seq 1 {rule}', event_type, data, **surface
    )


def test_data_rules_run_before_the_surface_rules() -> None:
    """§4: stage 7 (data rules) precedes stage 8 (surface validation)."""
    session = new_session()
    assert_append_rejected(
        session,
        'session event "user/message" at seq 0 developer/message and developer role must '
        "occur together",
        "user/message",
        {**U("x"), "role": "developer"},
    )


@pytest.mark.parametrize(
    "data",
    [
        TR("c1", "x", err=False) | {"error": {"name": "E", "code": "X"}},
        TR("c1", "x") | {"error": {"name": "E", "code": "X"}, "message": None},
        {"turn": 1, "step": 1, "error": {"name": "E", "code": "X"}},
    ],
)
def test_a_tool_error_needs_is_error_true(data: dict[str, Any]) -> None:
    """§15 scenario 84 (E58): checked before the shape of the message."""
    session = new_session()
    assert_append_rejected(
        session,
        'session event "tool/result" at seq 0 error requires message.isError === true',
        "tool/result",
        data,
        surface_op="append",
    )


def test_a_tool_result_with_or_without_an_error_is_accepted() -> None:
    """§15 scenario 84."""
    session = new_session()
    begin(session)
    for call_id in ("c1", "c2", "c3"):
        call(session, call_id)
    failed = TR("c1", "boom", err=True) | {
        "error": {"name": "ToolError", "code": "X", "reason": "r"}
    }
    session.append("tool/result", failed, surface_op="append")
    session.append("tool/result", TR("c2", "ok"), surface_op="append")
    session.append("tool/result", m.tool_result("c3", "ok", turn=1, step=1), surface_op="append")
    assert session.surface.nodes == (5, 6, 7)


def test_what_append_accepts_reopens_from_its_wire_form() -> None:
    """DESIGN decision 5: every accepted event passes the seed checks."""
    session = new_session()
    begin(session)
    session.append("request/header", {"header": HEADER, "reason": "initial"})
    session.append("user/message", U("q"), surface_op="append")
    session.append("assistant/message", A([m.tool_call("c1", "t", "{}")]), surface_op="append")
    call(session, "c1")
    session.append("tool/result", TR("c1", "r"), surface_op="append")
    session.append("tool/result", TR("c1", "-"), surface_op=rep(6, 6), source_event_seqs=[6])
    finish(session)
    reopened = Session.from_events("s2", thaw_events(session.events), clock=clock)
    assert reopened.derive_messages() == session.derive_messages()


# --- the rejection itself ----------------------------------------------------------------


def test_a_rejection_carries_its_context_and_pickles() -> None:
    session = new_session("ctx")
    session.append("turn/start", {"turn": 1})
    with pytest.raises(EventRejected) as info:
        session.append("user/message", U("x"))
    error = info.value
    assert isinstance(error, ValueError)
    assert (error.session_id, error.event_type, error.seq) == ("ctx", "user/message", 1)
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is EventRejected
    assert str(back) == str(error)
    assert (back.session_id, back.event_type, back.seq) == ("ctx", "user/message", 1)
