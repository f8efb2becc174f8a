"""The invariant companion (spec/core.md §11): structure checked before commit.

Scenarios 69–74 of spec/core.md §15, with the exact texts.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import (
    EventRejected,
    InvariantError,
    SeedRejected,
    Session,
    check_invariants,
    install_invariants,
)
from agentlog import messages as m
from agentlog.lifecycle import has_invariants, trace_of_end


@pytest.fixture
def session() -> Session:
    s = Session.create("s", clock=lambda: 0)
    install_invariants(s)
    return s


def assistant(turn: int = 1, step: int = 1, *calls: str) -> dict[str, Any]:
    return m.assistant(
        [m.text("ok"), *(m.tool_call(c, "bash", "{}") for c in calls)],
        provider="p",
        model="x",
        turn=turn,
        step=step,
    )


def rejected(session: Session, event_type: str, data: Any, text: str, **kwargs: Any) -> None:
    seq = session.seq
    with pytest.raises(InvariantError) as raised:
        session.append(event_type, data, **kwargs)
    assert str(raised.value) == text
    assert session.seq == seq


def test_well_formed_turn_is_accepted(session: Session) -> None:
    """§15 scenario 69."""
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("assistant/message", assistant(1, 1, "c1"), surface_op="append")
    session.append(
        "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}
    )
    session.append("tool/result", m.tool_result("c1", "ok", turn=1, step=1), surface_op="append")
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert session.seq == 7


def test_turn_numbering_and_nesting(session: Session) -> None:
    """§15 scenario 70."""
    session.append("turn/start", {"turn": 1})
    rejected(session, "turn/start", {"turn": 2}, "turn/start 2 while turn 1 is still open")
    rejected(
        session, "turn/end", {"turn": 2, "reason": {}}, "turn/end 2 does not match open turn 1"
    )
    session.append("turn/end", {"turn": 1, "reason": {}})
    rejected(session, "turn/start", {"turn": 3}, "turn/start expected turn 2, got 3")
    rejected(
        session, "turn/end", {"turn": 2, "reason": {}}, "turn/end 2 does not match open turn null"
    )


def test_step_numbering_and_nesting(session: Session) -> None:
    """§15 scenario 71."""
    session.append("turn/start", {"turn": 1})
    rejected(
        session, "step/start", {"turn": 2, "step": 1}, "step/start in turn 2 but open turn is 1"
    )
    session.append("step/start", {"turn": 1, "step": 1})
    rejected(
        session, "step/start", {"turn": 1, "step": 2}, "step/start 2 while step 1 is still open"
    )
    rejected(
        session, "turn/end", {"turn": 1, "reason": {}}, "turn/end 1 while step 1 is still open"
    )
    rejected(
        session,
        "step/end",
        {"turn": 1, "step": 2},
        "step/end names turn 1/step 2 but open is turn 1/step 1",
    )
    session.append("step/end", {"turn": 1, "step": 1})
    rejected(
        session, "step/start", {"turn": 1, "step": 3}, "step/start expected step 2 in turn 1, got 3"
    )


def test_step_bound_events_and_tool_results(session: Session) -> None:
    """§15 scenario 72."""
    session.append("turn/start", {"turn": 1})
    rejected(
        session,
        "assistant/attempt",
        {"turn": 1, "step": 1, "stream": []},
        "assistant/attempt names turn 1/step 1 but open is turn 1/step null",
    )
    session.append("step/start", {"turn": 1, "step": 1})
    rejected(
        session,
        "tool/result",
        m.tool_result("c9", "x", turn=1, step=1),
        "tool/result for c9 with no prior tool/call in this step",
        surface_op="append",
    )
    session.append("assistant/message", assistant(1, 1, "c1", "c2"), surface_op="append")
    session.append(
        "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "b", "arguments": ""}
    )
    session.append("step/end", {"turn": 1, "step": 1})  # c1 unresolved: allowed
    session.append("step/start", {"turn": 1, "step": 2})
    rejected(
        session,
        "tool/result",
        m.tool_result("c1", "x", turn=1, step=2),
        "tool/result for c1 with no prior tool/call in this step",
        surface_op="append",
    )
    # a synthetic not-started repair result needs no tool/call
    session.append(
        "tool/result",
        m.tool_result(
            "c2",
            "not started",
            turn=1,
            step=2,
            is_error=True,
            error={"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"},
        ),
        surface_op="append",
    )


def test_turn_enclosure_of_core_events(session: Session) -> None:
    """§15 scenario 73."""
    rejected(
        session,
        "request/context",
        {"provider": "p", "model": "x"},
        "request/context appended outside any open turn (core execution events must be "
        "turn-enclosed)",
    )
    session.append("user/message", m.user("between turns"), surface_op="append")
    session.append("plan/mode", {"on": True})
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("assistant/message", assistant(1, 1, "c1"), surface_op="append")
    session.append(
        "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "b", "arguments": ""}
    )
    result = session.append(
        "tool/result", m.tool_result("c1", "long", turn=1, step=1, id="r"), surface_op="append"
    )
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("turn/end", {"turn": 1, "reason": {}})
    rewrite = m.tool_result("c1", "short", turn=1, step=1, id="r")
    op = {"op": "replace", "startSeq": result.seq, "endSeq": result.seq}
    rejected(
        session,
        "tool/result",
        rewrite,
        "tool/result surface replacement appended outside any open turn",
        surface_op=op,
        source_event_seqs=[result.seq],
    )
    session.append("turn/start", {"turn": 2})
    session.append("tool/result", rewrite, surface_op=op, source_event_seqs=[result.seq])


def test_a_veto_leaves_log_and_trace_untouched() -> None:
    """§15 scenario 74: another validator's veto does not advance the companion's trace."""
    s = Session.create("s", clock=lambda: 0)
    install_invariants(s)

    def veto_once(_session: Session, _event: Any) -> None:
        remove()
        raise RuntimeError("vetoed")

    remove = s.add_validator(veto_once)
    with pytest.raises(RuntimeError, match="vetoed"):
        s.append("turn/start", {"turn": 1})
    assert s.seq == 0
    s.append("turn/start", {"turn": 1})  # the companion still expects turn 1


@pytest.mark.structure_free(
    "the seed breaks structure on purpose to show install_invariants refusing it; the autouse "
    "companion would refuse it already in Session.from_events, so install_invariants would "
    "never run"
)
def test_a_bad_seed_fails_installation() -> None:
    """§15 scenario 74: a seed [turn/start 1, turn/start 2] fails."""
    seed = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        {"type": "turn/start", "seq": 1, "time": 0, "data": {"turn": 2}},
    ]
    with pytest.raises(InvariantError, match="turn/start 2 while turn 1 is still open"):
        install_invariants(Session.from_events("s", seed))
    with pytest.raises(InvariantError):
        check_invariants(seed)


@pytest.mark.structure_free(
    "checks that uninstalling the companion lets a structure-breaking append through; the "
    "autouse companion would still veto it"
)
def test_uninstall_stops_the_checks() -> None:
    s = Session.create("s")
    uninstall = install_invariants(s)
    uninstall()
    s.append("request/context", {"provider": "p", "model": "x"})
    assert s.seq == 1


def test_seq_must_increase() -> None:
    with pytest.raises(InvariantError, match="seq must strictly increase: saw 0 after 0"):
        check_invariants(
            [
                {"type": "plan/mode", "seq": 0, "time": 0, "data": {}},
                {"type": "plan/mode", "seq": 0, "time": 0, "data": {}},
            ]
        )


def test_invariant_errors_are_event_rejections() -> None:
    """An InvariantError is an EventRejected (and so a ValueError), never a SeedRejected."""
    assert issubclass(InvariantError, EventRejected)
    assert not issubclass(InvariantError, SeedRejected)
    s = Session.create("s")
    install_invariants(s)
    with pytest.raises(ValueError, match="does not match open turn null"):
        s.append("turn/end", {"turn": 1, "reason": {}})


# --- installing: once per session, or from a stored log's end ---------------------------------


@pytest.mark.structure_free("the suite's companion would be the first install; this test's is")
def test_installing_twice_is_a_no_op_and_has_invariants_tells() -> None:
    s = Session.create("s", clock=lambda: 0)
    first = install_invariants(s)
    again = install_invariants(s)
    again()  # the second installer's remover does nothing
    assert has_invariants(s)
    with pytest.raises(InvariantError):
        s.append("turn/end", {"turn": 1, "reason": {}})
    first()
    assert not has_invariants(s)


def wire_log(*types_and_data: tuple[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": event_type, "seq": seq, "time": 0, "data": data}
        for seq, (event_type, data) in enumerate(types_and_data)
    ]


class OnlyTheEnd(list[dict[str, Any]]):
    """A log that fails the test if anything before its last ``tail`` events is read."""

    def __init__(self, events: list[dict[str, Any]], tail: int) -> None:
        super().__init__(events)
        self.first_readable = len(events) - tail

    def __getitem__(self, index: Any) -> Any:
        start = index.start if isinstance(index, slice) else index
        if start is not None and start < 0:
            start += len(self)
        assert start is None or start >= self.first_readable, f"read index {start}"
        return super().__getitem__(index)


def test_the_end_of_a_closed_log_expects_the_next_turn_and_reads_only_the_end() -> None:
    """The cost does not grow with the log: nothing before the last ``turn/end`` is read."""
    log = wire_log(
        *[("plan/mode", {})] * 1000,
        ("turn/end", {"turn": 7, "reason": {}}),
        *[("plan/mode", {})] * 3,
    )
    trace = trace_of_end(OnlyTheEnd(log, tail=4))
    assert (trace.next_turn, trace.open_turn, trace.last_seq) == (8, None, 1003)


def test_the_end_of_an_open_turn_is_replayed_through_the_checks() -> None:
    turn = wire_log(
        *[("plan/mode", {})] * 100,
        ("turn/start", {"turn": 2}),
        ("step/start", {"turn": 2, "step": 1}),
        ("tool/call", {"turn": 2, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}),
    )
    trace = trace_of_end(OnlyTheEnd(turn, tail=3))
    assert (trace.next_turn, trace.open_turn, trace.open_step, trace.pending) == (2, 2, 1, {"c1"})
    broken = [*turn, {"type": "step/start", "seq": 103, "time": 0, "data": {"turn": 2, "step": 2}}]
    with pytest.raises(InvariantError, match="step/start 2 while step 1 is still open"):
        trace_of_end(broken)


@pytest.mark.parametrize("turn", ["one", 0, -1, 1.5, None])
def test_an_end_without_a_positive_turn_number_cannot_be_followed(turn: Any) -> None:
    with pytest.raises(InvariantError, match="not a positive integer"):
        trace_of_end(wire_log(("turn/end", {"turn": turn, "reason": {}})))


def test_a_log_without_turns_expects_turn_one() -> None:
    trace = trace_of_end(wire_log(("plan/mode", {}), ("plan/mode", {})))
    assert (trace.next_turn, trace.last_seq) == (1, 1)
    assert trace_of_end([]).last_seq == -1


@pytest.mark.structure_free("the seed breaks structure; the suite's companion would refuse it")
def test_a_loaded_log_is_not_judged_only_its_end_is_followed() -> None:
    seed = wire_log(
        ("turn/end", {"turn": 1, "reason": {}}),  # no turn is open: an anomaly of the past
        ("turn/start", {"turn": 5}),
        ("turn/end", {"turn": 5, "reason": {}}),
    )
    s = Session.from_events("s", seed)
    install_invariants(s, loaded=True)
    assert has_invariants(s)
    with pytest.raises(InvariantError, match="turn/start expected turn 6, got 2"):
        s.append("turn/start", {"turn": 2})
    s.append("turn/start", {"turn": 6})


_TYPES = (
    "turn/start",
    "turn/end",
    "step/start",
    "step/end",
    "assistant/message",
    "tool/call",
    "tool/result",
    "request/context",
    "user/message",
)


def _random_event(rng: Any, seq: int) -> dict[str, Any]:
    event_type = rng.choice(_TYPES)
    data: Any = {"turn": rng.choice([1, 2, 3, None, "1"]), "step": rng.choice([1, 2, None])}
    if event_type == "tool/call":
        data["callId"] = rng.choice(["c1", "c2"])
    if event_type == "tool/result":
        data["message"] = {"source": {"callId": rng.choice(["c1", "c2", None])}}
    if rng.random() < 0.05:
        data = rng.choice([None, [1], "text"])
    event: dict[str, Any] = {"type": event_type, "seq": seq, "data": data}
    if event_type == "tool/result" and rng.random() < 0.8:
        event["surfaceOp"] = "append"
    return event


def test_in_line_checks_accept_exactly_what_the_rules_accept() -> None:
    """``check`` decides the accepting cases in line; each must be one its rule accepts, and
    every event it sends on must get the rule's verdict (checked against the rule alone)."""
    import random

    from agentlog.lifecycle import InvariantTrace
    from agentlog.lifecycle.invariants import _CHECKS

    rng = random.Random(69)
    accepted = rejected = 0
    for _ in range(300):
        trace = InvariantTrace()
        for seq in range(40):
            event = _random_event(rng, seq)
            rule = _CHECKS.get(event["type"], _unconstrained)
            expected = _verdict(rule, trace, event)
            assert _verdict(InvariantTrace.check, trace, event) == expected
            if expected is not None:
                rejected += 1
                continue
            accepted += 1
            trace.apply(event)
    assert accepted > 1000
    assert rejected > 1000


def _unconstrained(trace: Any, event: Any) -> None:
    """The rule of a type the companion does not constrain."""


def _verdict(check: Any, trace: Any, event: Any) -> str | None:
    """The text of the ``InvariantError`` ``check`` raises, or ``None`` when it accepts."""
    try:
        check(trace, event)
    except InvariantError as error:
        return str(error)
    return None
