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
