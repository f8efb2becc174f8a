"""Payload constructors for the agent loop's structural events: turns, steps, tool calls.

Implements the ``data`` shapes of spec/core.md §2.4 for ``turn/start``, ``turn/end``,
``step/start``, ``step/end`` and ``tool/call``, and of spec/plugins.md §4 for the loop's own
log-only records (``assistant/attempt``, ``request/header``, ``request/context``,
``llm/retry``, ``llm/retry-started``, ``agent/inbox/spliced``). Messages are built by
``agentlog.messages``; these build the events around them, so a hand-written loop (or a test)
writes exactly what ``agentlog.Agent`` writes.

Example:
    >>> from agentlog import Session, messages as m, payloads as p
    >>> s = Session.create("s", clock=lambda: 0)
    >>> _ = s.append("turn/start", p.turn_start(1))
    >>> _ = s.append("user/message", m.user("Run ls", id="u1"), surface_op="append")
    >>> _ = s.append("step/start", p.step_start(1, 1))
    >>> call = m.tool_call("c1", "bash", '{"cmd": "ls"}')
    >>> _ = s.append("assistant/message", m.assistant([call], provider="p", model="x",
    ...              turn=1, step=1, id="a1"), surface_op="append")
    >>> c = s.append("tool/call", p.tool_call(1, 1, "c1", "bash", '{"cmd": "ls"}'))
    >>> _ = s.append("tool/result", m.tool_result("c1", "README.md", turn=1, step=1, id="r1"),
    ...              surface_op="append", source_event_seqs=[c.seq])
    >>> _ = s.append("step/end", p.step_end(1, 1))
    >>> s.append("turn/end", p.turn_end(1)).data["reason"]
    {'kind': 'completed'}
    >>> p.turn_end(2, "aborted")["reason"]
    {'kind': 'aborted', 'reason': {'kind': 'user'}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, NotRequired, TypedDict, get_args

from agentlog.values import JsonValue

__all__ = [
    "CancelCause",
    "StepBoundary",
    "ToolCall",
    "TurnEnd",
    "TurnEndKind",
    "TurnStart",
    "assistant_attempt",
    "inbox_spliced",
    "llm_retry",
    "llm_retry_started",
    "request_context",
    "request_header",
    "step_end",
    "step_start",
    "tool_call",
    "turn_end",
    "turn_start",
]

TurnEndKind = Literal[
    "completed", "aborted", "blocked", "error", "max-tokens", "interrupted", "forked"
]
"""``turn/end.reason.kind`` (spec/core.md §2.4 ``TurnEndReason``)."""

_KINDS = frozenset(get_args(TurnEndKind))


class TurnStart(TypedDict):
    """``turn/start`` data."""

    turn: int


class TurnEnd(TypedDict):
    """``turn/end`` data: the turn and why it ended."""

    turn: int
    reason: dict[str, Any]
    """``{kind, reason?: CancelCause (aborted), error?: LlmFailure (error)}``."""


class StepBoundary(TypedDict):
    """``step/start`` and ``step/end`` data."""

    turn: int
    step: int


class ToolCall(TypedDict):
    """``tool/call`` data: the model's request as dispatched."""

    turn: int
    step: int
    callId: str
    name: str
    arguments: str
    """The raw JSON text the model produced."""


class CancelCause(TypedDict):
    """Why a turn was aborted (spec/core.md §2.4 ``AgentCancelCause``)."""

    kind: str
    """``user``, ``parent``, ``hook`` (with ``reason``) or ``disposed``."""
    reason: NotRequired[str]


def _counter(name: str, value: object) -> int:
    if type(value) is not int or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def turn_start(turn: int) -> TurnStart:
    """Data for ``turn/start``: opens turn ``turn`` (numbered from 1)."""
    return {"turn": _counter("turn", turn)}


def turn_end(
    turn: int,
    kind: TurnEndKind = "completed",
    *,
    cause: Mapping[str, Any] | None = None,
    error: Mapping[str, Any] | None = None,
) -> TurnEnd:
    """Data for ``turn/end`` (spec/plugins.md §4.3 ``turnEnds``).

    Args:
        turn: The open turn.
        kind: Why it ended.
        cause: For ``aborted``: the ``CancelCause`` (default ``{"kind": "user"}``).
        error: For ``error`` (required): the ``LlmFailure`` ``{message, code, ...}``.

    Raises:
        ValueError: for an unknown kind, a missing ``error`` or a field the kind does not take.
    """
    if kind not in _KINDS:
        raise ValueError(f"turn/end kind must be one of {sorted(_KINDS)}, got {kind!r}")
    if cause is not None and kind != "aborted":
        raise ValueError("only an aborted turn/end carries a cause")
    if (error is not None) != (kind == "error"):
        raise ValueError("an error turn/end needs error, and only it carries one")
    reason: dict[str, Any] = {"kind": kind}
    if kind == "aborted":
        reason["reason"] = dict(cause) if cause is not None else {"kind": "user"}
    if error is not None:
        reason["error"] = dict(error)
    return {"turn": _counter("turn", turn), "reason": reason}


def step_start(turn: int, step: int) -> StepBoundary:
    """Data for ``step/start``: opens step ``step`` (from 1) of the open turn."""
    return {"turn": _counter("turn", turn), "step": _counter("step", step)}


def step_end(turn: int, step: int) -> StepBoundary:
    """Data for ``step/end``: closes the open step."""
    return {"turn": _counter("turn", turn), "step": _counter("step", step)}


def tool_call(turn: int, step: int, call_id: str, name: str, arguments: str) -> ToolCall:
    """Data for ``tool/call``, appended before the tool runs (spec/plugins.md §4.6).

    Args:
        turn: The open turn.
        step: The open step.
        call_id: The ``tool-call`` block id.
        name: The tool name.
        arguments: The raw JSON text of the arguments, exactly as the model produced it.
    """
    for label, value in (("call_id", call_id), ("name", name)):
        if type(value) is not str or not value:
            raise ValueError(f"{label} must be a non-empty string, got {value!r}")
    if type(arguments) is not str:
        raise ValueError(f"arguments must be the raw JSON string, got {type(arguments).__name__}")
    return {
        "turn": _counter("turn", turn),
        "step": _counter("step", step),
        "callId": call_id,
        "name": name,
        "arguments": arguments,
    }


def assistant_attempt(turn: int, step: int, stream: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Data for ``assistant/attempt``: a settled attempt that committed no message (§4.5)."""
    return {"turn": turn, "step": step, "stream": [dict(record) for record in stream]}


def request_header(
    header: Mapping[str, Any],
    reason: Literal["initial", "resume", "change", "series"],
    *,
    starts_series: bool = False,
) -> dict[str, Any]:
    """Data for ``request/header`` (spec/core.md §7.4): the header and why it is logged."""
    data: dict[str, Any] = {"header": dict(header), "reason": reason}
    if starts_series:
        data["startsSeries"] = True
    return data


def request_context(
    provider: str,
    model: str,
    context_window: int | None = None,
    *,
    system_prompt_update: Literal["in-history"] | None = None,
) -> dict[str, Any]:
    """Data for ``request/context``: the route and its capacity (spec/core.md §7.5).

    [F4] ``systemPromptUpdate: "in-history"``: the route reads system-prompt updates appended
    later in the history.
    """
    data: dict[str, Any] = {"provider": provider, "model": model}
    if context_window is not None:
        data["contextWindow"] = context_window
    if system_prompt_update is not None:
        data["systemPromptUpdate"] = system_prompt_update
    return data


def llm_retry(
    *,
    retry_id: str,
    turn: int,
    step: int,
    provider: str,
    mode: Literal["normal", "always"],
    policy_key: str,
    retry: int,
    max_retries: int | None,
    delay_ms: int,
    failure: Mapping[str, Any],
) -> dict[str, Any]:
    """Data for ``llm/retry``, appended before the wait (spec/plugins.md §4.9)."""
    data: dict[str, Any] = {
        "retryId": retry_id,
        "turn": turn,
        "step": step,
        "provider": provider,
        "mode": mode,
        "policyKey": policy_key,
        "retry": retry,
    }
    if max_retries is not None:
        data["maxRetries"] = max_retries
    data["delayMs"] = delay_ms
    data["failure"] = dict(failure)
    return data


def llm_retry_started(*, retry_id: str, turn: int, step: int, retry: int) -> dict[str, Any]:
    """Data for ``llm/retry-started``, appended after the wait (spec/plugins.md §4.9)."""
    return {"retryId": retry_id, "turn": turn, "step": step, "retry": retry}


def inbox_spliced(
    target: Literal["next-turn", "next-step"],
    start: int,
    *,
    removed: int = 0,
    inserted: Iterable[JsonValue] = (),
    canceled: bool = False,
) -> dict[str, Any]:
    """Data for ``agent/inbox/spliced``: one edit of the durable inbox (spec/plugins.md §4.1).

    Args:
        target: Which list: input for the next turn, or for the next step.
        start: Where the edit starts in that list.
        removed: How many messages it removes from ``start`` (``removedCount``).
        inserted: The user messages it inserts at ``start``.
        canceled: Removal by the user (``outcome: "canceled"``) rather than a claim by the loop.
    """
    data: dict[str, Any] = {"target": target, "start": start}
    if removed:
        data["removedCount"] = removed
    data["inserted"] = list(inserted)
    if canceled:
        data["outcome"] = "canceled"
    return data
