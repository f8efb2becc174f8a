"""Repair closers close the turn a crash or a fork cut left open (spec/core.md §10.3).

Scenarios 57–63 of spec/core.md §15, format-4 wording and shapes.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import (
    TOOL_NOT_STARTED,
    TOOL_OUTCOME_UNKNOWN,
    Session,
    ToolCallRecovery,
    open_turn_closers,
)
from agentlog import messages as m
from agentlog.lifecycle import open_turn

NOT_STARTED = (
    "The tool call was interrupted before the Harness recorded it as started. "
    "Retry it if it is still needed."
)
OUTCOME_UNKNOWN = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external "
    "state or ask the user. Do not retry blindly."
)
FORKED_NOT_STARTED = (
    "The history inherited by this branch has no record of this tool call starting. The parent "
    "session may have executed it after the fork point. Decide whether to retry from the tool "
    "semantics: retry only if the operation is read-only or idempotent; if it may have side "
    "effects, first verify external state or ask the user. Do not retry blindly."
)
FORKED_STARTED = (
    "The history inherited by this branch records this tool call starting but does not include "
    "its result. The parent session may have completed it after the fork point. Decide whether "
    "to retry from the tool semantics: retry only if the operation is read-only or idempotent; "
    "if it may have side effects, first verify external state or ask the user. Do not retry "
    "blindly."
)


def ev(seq: int, event_type: str, data: Any, time: int = 0, **extra: Any) -> dict[str, Any]:
    return {"type": event_type, "seq": seq, "time": time, "data": data, **extra}


def call_step(turn: int = 2, *calls: str) -> list[dict[str, Any]]:
    """turn/start, step/start and an assistant message asking for ``calls``."""
    content = [m.text("working"), *(m.tool_call(c, "bash", "{}") for c in calls)]
    return [
        ev(0, "turn/start", {"turn": turn}, time=10),
        ev(1, "step/start", {"turn": turn, "step": 1}, time=11),
        ev(
            2,
            "assistant/message",
            m.assistant(content, provider="p", model="x", turn=turn, step=1, id="a"),
            time=12,
            surfaceOp="append",
        ),
    ]


def test_empty_and_balanced_logs_need_no_closers() -> None:
    """§15 scenario 57."""
    assert open_turn_closers([]) == []
    balanced = [ev(0, "turn/start", {"turn": 1}), ev(1, "turn/end", {"turn": 1, "reason": {}})]
    assert open_turn_closers(balanced) == []


def test_open_turn_is_closed_with_the_last_events_time() -> None:
    """§15 scenario 58."""
    assert open_turn_closers([ev(0, "turn/start", {"turn": 1}, time=7)]) == [
        ev(1, "turn/end", {"turn": 1, "reason": {"kind": "interrupted"}}, time=7)
    ]


def test_open_step_is_closed_before_the_turn() -> None:
    """§15 scenario 59."""
    log = [ev(0, "turn/start", {"turn": 1}), ev(1, "step/start", {"turn": 1, "step": 1})]
    assert [(c["type"], c["seq"]) for c in open_turn_closers(log)] == [
        ("step/end", 2),
        ("turn/end", 3),
    ]


def test_unstarted_call_gets_a_not_started_error_result() -> None:
    """§15 scenario 60."""
    closers = open_turn_closers(call_step(2, "call-1"))
    assert [(c["type"], c["seq"]) for c in closers] == [
        ("tool/result", 3),
        ("step/end", 4),
        ("turn/end", 5),
    ]
    result = closers[0]
    assert result == {
        "type": "tool/result",
        "seq": 3,
        "time": 12,
        "data": {
            "turn": 2,
            "step": 1,
            "message": {
                "id": "interrupted-tool-result-call-1-3",
                "role": "tool",
                "toolCallId": "call-1",
                "isError": True,
                "source": {"kind": "tool", "callId": "call-1"},
                "content": [{"type": "text", "text": NOT_STARTED}],
            },
            "error": {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED},
        },
        "surfaceOp": "append",
    }


def test_started_call_gets_an_outcome_unknown_result_citing_its_tool_call() -> None:
    """§15 scenario 61."""
    log = [*call_step(2, "call-1"), ev(3, "tool/call", {"turn": 2, "step": 1, "callId": "call-1"})]
    result = open_turn_closers(log)[0]
    assert result["sourceEventSeqs"] == [3]
    assert result["data"]["error"] == {
        "name": "ToolOutcomeUnknownError",
        "code": TOOL_OUTCOME_UNKNOWN,
    }
    assert result["data"]["message"]["content"][0]["text"] == OUTCOME_UNKNOWN
    assert "retry only if the operation is read-only or idempotent" in OUTCOME_UNKNOWN


def tool_result(seq: int, call: str, turn: int = 2, step: int = 1, **extra: Any) -> dict[str, Any]:
    data = m.tool_result(call, "ok", turn=turn, step=step, id=f"r{seq}")
    return ev(seq, "tool/result", data, surfaceOp=extra.pop("surfaceOp", "append"), **extra)


def test_answered_calls_and_closed_steps_get_no_result() -> None:
    """§15 scenario 62: only the open step's unanswered calls are synthesized."""
    log = [*call_step(2, "c1", "c2"), tool_result(3, "c1")]
    assert [c["data"]["message"]["toolCallId"] for c in open_turn_closers(log)[:-2]] == ["c2"]
    closed = [*log, ev(4, "step/end", {"turn": 2, "step": 1})]
    assert [c["type"] for c in open_turn_closers(closed)] == ["turn/end"]
    orphan = [*call_step(2), ev(3, "tool/call", {"turn": 2, "step": 1, "callId": "zz"})]
    assert [c["type"] for c in open_turn_closers(orphan)] == ["step/end", "turn/end"]


def test_forked_cause_uses_forked_ids_texts_and_reason() -> None:
    """§15 scenario 63."""
    log = [*call_step(2, "c1", "c2"), ev(3, "tool/call", {"turn": 2, "step": 1, "callId": "c1"})]
    closers = open_turn_closers(log, "forked")
    assert [c["data"]["message"]["id"] for c in closers[:2]] == [
        "forked-tool-result-c1-4",
        "forked-tool-result-c2-5",
    ]
    assert [c["data"]["message"]["content"][0]["text"] for c in closers[:2]] == [
        FORKED_STARTED,
        FORKED_NOT_STARTED,
    ]
    assert closers[-1]["data"]["reason"] == {"kind": "forked"}


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param({"surfaceOp": {"op": "replace", "startSeq": 2, "endSeq": 2}}, id="replace"),
        pytest.param({"turn": 3}, id="other-turn"),
        pytest.param({"step": 2}, id="other-step"),
    ],
)
def test_only_an_append_in_the_same_turn_and_step_acknowledges_a_call(
    answer: dict[str, Any],
) -> None:
    """§15 scenario 63: replacements and results of another turn or step do not count."""
    fields = {"turn": answer.pop("turn", 2), "step": answer.pop("step", 1)}
    log = [*call_step(2, "c1"), tool_result(3, "c1", **fields, **answer)]
    closers = open_turn_closers(log, "forked")
    assert closers[0]["data"]["message"]["toolCallId"] == "c1"


def test_tool_call_recovery_tracks_the_same_state_incrementally() -> None:
    log = [*call_step(2, "c1", "c2"), tool_result(3, "c1")]
    recovery = ToolCallRecovery("interrupted")
    for event in log:
        recovery.observe(event)
    assert recovery.open_turn == 2
    assert recovery.closers() == open_turn_closers(log)


def test_unknown_cause_is_refused() -> None:
    with pytest.raises(ValueError, match="closer cause"):
        ToolCallRecovery("crashed")  # type: ignore[arg-type]  # the point of the test


def test_closers_reopen_as_a_valid_session() -> None:
    """Closers are ordinary events: a session seeded with log + closers accepts them."""
    log = [*call_step(1, "c1"), ev(3, "tool/call", {"turn": 1, "step": 1, "callId": "c1"})]
    session = Session.from_events("s", [*log, *open_turn_closers(log)])
    roles = [message["role"] for message in session.derive_messages()]
    assert roles == ["assistant", "tool"]


def test_open_turn_names_the_turn_a_log_leaves_open() -> None:
    def wire(*types: tuple[str, int]) -> list[dict[str, Any]]:
        return [{"type": t, "seq": i, "data": {"turn": n}} for i, (t, n) in enumerate(types)]

    assert open_turn([]) is None
    assert open_turn(wire(("turn/start", 1))) == 1
    assert open_turn(wire(("turn/start", 1), ("step/start", 1))) == 1
    assert open_turn(wire(("turn/start", 1), ("turn/end", 1))) is None
    assert open_turn(wire(("turn/start", 1), ("turn/end", 1), ("turn/start", 2))) == 2
