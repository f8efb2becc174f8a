"""Surface markers of one event: who may carry ``surfaceOp``/``sourceEventSeqs``, and their shape.

Covers spec/core.md §5.1–§5.3 (format 4): marker eligibility (E7–E9), the shape of
``surfaceOp`` (E10, E11), the ``sourceEventSeqs`` rules 1–5 and the assistant ban (E12–E17), in
their order, first on ``check_markers`` itself and then through ``Session.append``, where a
refusal must leave the session untouched (§15 scenarios 8–15). In the Python API ``None``
means "absent" for both markers.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import EventRejected
from agentlog import messages as m
from agentlog.surface import APPEND, check_markers
from tests.session.support import A, U, assert_append_rejected, new_session, rep, wire

E7 = 'session event "{}" is not surface-eligible and cannot carry surfaceOp'
E8 = 'session event "{}" is not surface-eligible and cannot carry sourceEventSeqs'
E9 = 'session event "{}" is surface-eligible and requires a surfaceOp marker'
E10 = 'session event "{}" carries an invalid surfaceOp'
E11 = 'session event "{}" carries an invalid replace surfaceOp'
E12 = "sourceEventSeqs on event at seq {} must be an array when present"
E13 = "sourceEventSeqs must not be empty"
E14 = 'session event "{}" sourceEventSeqs must densely contain non-negative safe integers'
E15 = "sourceEventSeqs must not contain duplicates"
E17 = "assistant/message embeds its source stream and cannot carry sourceEventSeqs"


def markers_error(event: dict[str, Any]) -> str:
    with pytest.raises(EventRejected) as info:
        check_markers(event)
    return str(info.value)


# --- check_markers -----------------------------------------------------------------------


def test_append_is_returned_as_the_constant() -> None:
    assert check_markers(wire("user/message", 0, U("x"), surfaceOp="append")) is APPEND


def test_a_replace_is_returned_as_its_integer_range() -> None:
    op = check_markers(
        wire("user/message", 5, U("x"), surfaceOp=rep(1, 3), sourceEventSeqs=[1, 2, 3])
    )
    assert op == (1, 3)
    float_op = check_markers(
        wire("user/message", 5, U("x"), surfaceOp={"op": "replace", "startSeq": 1.0, "endSeq": 2.0})
    )
    assert float_op == (1, 2)
    assert all(type(seq) is int for seq in float_op)


@pytest.mark.parametrize("event_type", ["turn/start", "request/context", "plugin/known"])
def test_a_log_only_event_without_markers_never_touches_the_surface(event_type: str) -> None:
    assert check_markers(wire(event_type, 0, {})) is None


def test_an_undeclared_ignorable_event_keeps_opaque_markers_unvalidated() -> None:
    """§5.2 [F4] exception; §15 scenario 85."""
    event = wire(
        "extension/event",
        3,
        None,
        ignorable=True,
        surfaceOp={"opaque": 1},
        sourceEventSeqs={"opaque": 2},
    )
    assert check_markers(event) is None


@pytest.mark.parametrize("event_type", ["turn/start", "assistant/attempt", "request/context"])
def test_a_known_log_only_type_is_checked_even_when_ignorable(event_type: str) -> None:
    """§15 scenario 85: the exception is for unknown types only (E7/E8)."""
    marked = wire(event_type, 1, {}, ignorable=True, surfaceOp={"opaque": 1})
    assert markers_error(marked) == E7.format(event_type)
    cited = wire(event_type, 1, {}, ignorable=True, sourceEventSeqs={"opaque": 1})
    assert markers_error(cited) == E8.format(event_type)


def test_surface_op_is_reported_before_source_event_seqs() -> None:
    event = wire("turn/start", 2, {}, surfaceOp="append", sourceEventSeqs=[0])
    assert markers_error(event) == E7.format("turn/start")


@pytest.mark.parametrize(
    "event_type",
    ["system/message", "developer/message", "user/message", "assistant/message", "tool/result"],
)
def test_every_surface_type_requires_a_surface_op(event_type: str) -> None:
    assert markers_error(wire(event_type, 0, {})) == E9.format(event_type)


def test_the_rejection_names_the_event() -> None:
    with pytest.raises(EventRejected) as info:
        check_markers(wire("turn/start", 4, {}, surfaceOp="append"))
    assert (info.value.event_type, info.value.seq) == ("turn/start", 4)


# --- through append: §15 scenarios 8–15 ---------------------------------------------------


def test_a_surface_event_without_a_marker_is_rejected() -> None:
    """§15 scenario 8."""
    session = new_session()
    session.append("turn/start", {"turn": 1})
    assert_append_rejected(session, E9.format("user/message"), "user/message", U("hi"))
    assert len(session.events) == 1


def test_none_means_an_absent_marker() -> None:
    """Python API mapping (deviations.json P1): ``surface_op=None`` is no marker at all."""
    session = new_session()
    assert_append_rejected(
        session, E9.format("user/message"), "user/message", U("hi"), surface_op=None
    )
    event = session.append("user/message", U("hi"), surface_op="append", source_event_seqs=None)
    assert "sourceEventSeqs" not in event


def test_a_log_only_event_cannot_carry_surface_op() -> None:
    """§15 scenario 9."""
    session = new_session()
    assert_append_rejected(
        session, E7.format("turn/start"), "turn/start", {"turn": 1}, surface_op="append"
    )


def test_a_log_only_event_cannot_carry_source_event_seqs() -> None:
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    assert_append_rejected(
        session, E8.format("turn/start"), "turn/start", {"turn": 1}, source_event_seqs=[0]
    )


def test_a_known_log_only_type_appended_as_ignorable_still_cannot_carry_markers() -> None:
    session = new_session()
    assert_append_rejected(
        session,
        E7.format("request/context"),
        "request/context",
        {"provider": "p", "model": "m"},
        surface_op="append",
        ignorable=True,
    )


@pytest.mark.parametrize("surface_op", ["invalid", "Append", "", [], [0, 0], 1, True])
def test_a_surface_op_that_is_neither_append_nor_an_object_is_invalid(surface_op: Any) -> None:
    """§15 scenario 10 (E10)."""
    session = new_session()
    assert_append_rejected(
        session, E10.format("user/message"), "user/message", U("x"), surface_op=surface_op
    )


@pytest.mark.parametrize(
    "surface_op",
    [
        {"op": "replace", "startSeq": -1, "endSeq": 0},
        {"op": "replace", "startSeq": 0, "endSeq": 0, "extra": 1},
        {"op": "replace", "start": 0, "end": 0},
        {"op": "replace", "startSeq": 0},
        {"op": "Replace", "startSeq": 0, "endSeq": 0},
        {"op": "append", "startSeq": 0, "endSeq": 0},
        {"startSeq": 0, "endSeq": 0, "x": "replace"},
        {"op": "replace", "startSeq": 0.5, "endSeq": 0},
        {"op": "replace", "startSeq": True, "endSeq": 0},
        {"op": "replace", "startSeq": "0", "endSeq": 0},
        {"op": "replace", "startSeq": 0, "endSeq": None},
        {},
    ],
)
def test_a_replace_object_must_have_exactly_the_format_4_shape(surface_op: Any) -> None:
    """§15 scenario 10 (E11): including the old ``start/end`` spelling."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    assert_append_rejected(
        session,
        E11.format("user/message"),
        "user/message",
        U("x"),
        surface_op=surface_op,
        source_event_seqs=[0],
    )


@pytest.mark.parametrize("sources", [5, "0", {"0": 0}, True])
def test_source_event_seqs_must_be_an_array(sources: Any) -> None:
    """E12."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    assert_append_rejected(
        session,
        E12.format(1),
        "user/message",
        U("x"),
        surface_op="append",
        source_event_seqs=sources,
    )


@pytest.mark.parametrize("event_type", ["user/message", "tool/result", "system/message"])
def test_source_event_seqs_must_not_be_empty(event_type: str) -> None:
    """§15 scenario 12 [F4] (E13)."""
    session = new_session()
    data = {
        "user/message": U("x"),
        "tool/result": m.tool_result("c", "x", turn=1, step=1),
        "system/message": m.system("x", turn=1, step=1),
    }[event_type]
    assert_append_rejected(
        session, E13, event_type, data, surface_op="append", source_event_seqs=[]
    )


@pytest.mark.parametrize(
    "sources", [[0, -1], [-1], [0.5], ["0"], [None], [True], [0, [1]], [{"seq": 0}]]
)
def test_every_citation_must_be_a_non_negative_safe_integer(sources: list[Any]) -> None:
    """§15 scenario 11 (E14)."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    session.append("user/message", U("b"), surface_op="append")
    assert_append_rejected(
        session,
        E14.format("user/message"),
        "user/message",
        U("x"),
        surface_op="append",
        source_event_seqs=sources,
    )


def test_citations_must_not_repeat() -> None:
    """§15 scenario 13 (E15)."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    assert_append_rejected(
        session, E15, "user/message", U("b"), surface_op="append", source_event_seqs=[0, 0]
    )


def test_an_integral_float_repeating_an_int_citation_is_a_duplicate() -> None:
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    assert_append_rejected(
        session, E15, "user/message", U("b"), surface_op="append", source_event_seqs=[0, 0.0]
    )


def test_a_citation_must_name_an_earlier_event() -> None:
    """§15 scenario 14 (E16)."""
    session = new_session()
    assert_append_rejected(
        session,
        "sourceEventSeqs must reference earlier events: 0 >= current seq 0",
        "user/message",
        U("x"),
        surface_op="append",
        source_event_seqs=[0],
    )


def test_the_first_late_citation_in_array_order_is_reported() -> None:
    session = new_session()
    for text in "abc":
        session.append("user/message", U(text), surface_op="append")
    assert_append_rejected(
        session,
        "sourceEventSeqs must reference earlier events: 7 >= current seq 3",
        "user/message",
        U("x"),
        surface_op="append",
        source_event_seqs=[0, 7, 5.0],
    )
    assert_append_rejected(
        session,
        "sourceEventSeqs must reference earlier events: 5 >= current seq 3",
        "user/message",
        U("x"),
        surface_op="append",
        source_event_seqs=[5.0, 7],
    )


def test_citation_checks_run_in_the_spec_order() -> None:
    """Element types first, then duplicates, then earliness (§5.3)."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    assert_append_rejected(
        session,
        E14.format("user/message"),
        "user/message",
        U("x"),
        surface_op="append",
        source_event_seqs=[9, 9, -1],
    )
    assert_append_rejected(
        session, E15, "user/message", U("x"), surface_op="append", source_event_seqs=[9, 9]
    )


def test_a_citation_may_name_any_earlier_event_not_only_a_node() -> None:
    session = new_session()
    session.append("turn/start", {"turn": 1})
    session.append("user/message", U("a"), surface_op="append")
    event = session.append("user/message", U("b"), surface_op="append", source_event_seqs=[0, 1])
    assert event.source_event_seqs == [0, 1]
    assert session.surface.nodes == (1, 2)


@pytest.mark.parametrize("sources", [[], [0], "x"])
def test_an_assistant_message_can_never_cite(sources: Any) -> None:
    """§15 scenarios 12 and 15 (E17): not even ``[]``."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    assert_append_rejected(
        session, E17, "assistant/message", A("x"), surface_op="append", source_event_seqs=sources
    )
