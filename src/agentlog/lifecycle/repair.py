"""Repair closers: the synthetic events that close an interrupted or forked turn.

Implements spec/core.md §10.3 (format 4 ``openTurnClosers`` and ``ToolCallRecovery``). A log that
ends inside a turn — a crash, or a fork cut — is closed by: one error ``tool/result`` per call
the model asked for and nobody answered, then ``step/end`` if a step is open, then ``turn/end``
with the cause as its reason. The result is a provider-valid history in which every tool call
is answered and nothing is invented about the tool's outcome.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "TOOL_NOT_STARTED",
    "TOOL_OUTCOME_UNKNOWN",
    "CloserCause",
    "ToolCallRecovery",
    "open_turn",
    "open_turn_closers",
]

CloserCause = Literal["interrupted", "forked"]

TOOL_NOT_STARTED: Final = "TOOL_NOT_STARTED"
"""Error code of a closer for a call that was never logged as started (no ``tool/call``)."""
TOOL_OUTCOME_UNKNOWN: Final = "TOOL_OUTCOME_UNKNOWN"
"""Error code of a closer for a call logged as started whose result was never logged."""

_RETRY_ADVICE: Final = (
    "Decide whether to retry from the tool semantics: retry only if the operation is read-only "
    "or idempotent; if it may have side effects, first verify external state or ask the user. "
    "Do not retry blindly."
)
_TEXTS: Final[dict[tuple[CloserCause, bool], str]] = {
    ("interrupted", False): "The tool call was interrupted before the Harness recorded it as "
    "started. Retry it if it is still needed.",
    ("interrupted", True): "The tool call was interrupted after it was recorded, but no result "
    "was durably recorded. Its outcome is unknown. " + _RETRY_ADVICE,
    ("forked", False): "The history inherited by this branch has no record of this tool call "
    "starting. The parent session may have executed it after the fork point. " + _RETRY_ADVICE,
    ("forked", True): "The history inherited by this branch records this tool call starting but "
    "does not include its result. The parent session may have completed it after the fork "
    "point. " + _RETRY_ADVICE,
}


@dataclass(slots=True)
class _PendingCall:
    turn: Any
    step: Any
    call_seq: int | None = None


class ToolCallRecovery:
    """Track the open turn, step and unanswered tool calls of a log, one event at a time.

    The incremental form of ``open_turn_closers``: ``observe()`` each event in order, then
    ``closers()`` gives the events that would close what is still open.

    Args:
        cause: ``"interrupted"`` (crash recovery) or ``"forked"`` (a fork cut).
    """

    __slots__ = ("_cause", "_last_seq", "_last_time", "_open_step", "_open_turn", "_pending")

    def __init__(self, cause: CloserCause) -> None:
        if cause not in ("interrupted", "forked"):
            raise ValueError(f"closer cause must be 'interrupted' or 'forked', got {cause!r}")
        self._cause: CloserCause = cause
        self._open_turn: Any = None
        self._open_step: Any = None
        self._pending: dict[Any, _PendingCall] = {}
        self._last_seq: int | None = None
        self._last_time: int | None = None

    def observe(self, event: Mapping[str, Any]) -> None:
        """Account for the next event of the log (spec/core.md §10.3 scan rules)."""
        self._last_seq = event["seq"]
        self._last_time = event["time"]
        event_type = event["type"]
        data = event["data"]
        if event_type == "turn/start":
            self._open_turn = _field(data, "turn")
            self._open_step = None
            self._pending.clear()
        elif event_type == "turn/end":
            self._open_turn = self._open_step = None
            self._pending.clear()
        elif event_type == "step/start":
            self._open_step = _field(data, "step")
        elif event_type == "step/end":
            self._open_step = None
            self._pending.clear()
        elif event_type == "assistant/message":
            content = _field(_field(data, "message"), "content")
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict) and block.get("type") == "tool-call":
                    self._pending[block.get("id")] = _PendingCall(
                        _field(data, "turn"), _field(data, "step")
                    )
        elif event_type == "tool/call":
            pending = self._pending.get(_field(data, "callId"))
            if pending is not None:
                pending.call_seq = event["seq"]
        elif event_type == "tool/result" and event.get("surfaceOp") == "append":
            call_id = _field(_field(_field(data, "message"), "source"), "callId")
            pending = self._pending.get(call_id)
            if (
                pending is not None
                and pending.turn == _field(data, "turn")
                and pending.step == _field(data, "step")
            ):
                del self._pending[call_id]

    @property
    def open_turn(self) -> Any:
        """The number of the open turn, or ``None``."""
        return self._open_turn

    def closers(self) -> list[dict[str, Any]]:
        """The wire events that close the open turn, seqs continuing after the last event.

        Returns ``[]`` when no turn is open. Every closer takes the time of the last event.
        """
        if self._open_turn is None or self._last_seq is None:
            return []
        seq = self._last_seq + 1
        time = self._last_time
        closers: list[dict[str, Any]] = []
        for call_id, pending in self._pending.items():
            closers.append(self._tool_result(call_id, pending, seq, time))
            seq += 1
        if self._open_step is not None:
            closers.append(
                {
                    "type": "step/end",
                    "seq": seq,
                    "time": time,
                    "data": {"turn": self._open_turn, "step": self._open_step},
                }
            )
            seq += 1
        closers.append(
            {
                "type": "turn/end",
                "seq": seq,
                "time": time,
                "data": {"turn": self._open_turn, "reason": {"kind": self._cause}},
            }
        )
        return closers

    def _tool_result(
        self, call_id: Any, pending: _PendingCall, seq: int, time: Any
    ) -> dict[str, Any]:
        started = pending.call_seq is not None
        if started:
            error = {"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN}
        else:
            error = {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED}
        closer: dict[str, Any] = {
            "type": "tool/result",
            "seq": seq,
            "time": time,
            "data": {
                "turn": pending.turn,
                "step": pending.step,
                "message": {
                    "id": f"{self._cause}-tool-result-{call_id}-{seq}",
                    "role": "tool",
                    "toolCallId": call_id,
                    "isError": True,
                    "source": {"kind": "tool", "callId": call_id},
                    "content": [{"type": "text", "text": _TEXTS[self._cause, started]}],
                },
                "error": error,
            },
            "surfaceOp": "append",
        }
        if started:
            closer["sourceEventSeqs"] = [pending.call_seq]
        return closer


def _field(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def open_turn_closers(
    events: Iterable[Mapping[str, Any]], cause: CloserCause = "interrupted"
) -> list[dict[str, Any]]:
    """The synthetic events that close the turn a log ends inside (spec/core.md §10.3).

    Args:
        events: A contiguous log (``Event``s or wire dicts), possibly ending mid-turn.
        cause: ``"interrupted"`` for crash repair, ``"forked"`` for a fork cut.

    Returns:
        Wire dicts to append, in order: an error ``tool/result`` per unanswered call of the
        open step, ``step/end`` if a step is open, then ``turn/end`` with ``{kind: cause}``;
        ``[]`` when no turn is open.
    """
    recovery = ToolCallRecovery(cause)
    if isinstance(events, Sequence):
        # Only the last turn can be open, and turn/start and turn/end reset every piece of
        # state: scan from the last one of them (the whole log has none → nothing is open).
        start = _last_turn_boundary(events)
        if start is None:
            return []
        events = events[start:]
    for event in events:
        recovery.observe(event)
    return recovery.closers()


def _last_turn_boundary(events: Sequence[Mapping[str, Any]]) -> int | None:
    for index in range(len(events) - 1, -1, -1):
        if events[index]["type"] in ("turn/start", "turn/end"):
            return index
    return None


def open_turn(events: Sequence[Mapping[str, Any]]) -> Any:
    """The number of the turn ``events`` leave open, or ``None`` between turns.

    A turn is open when its ``turn/start`` has no ``turn/end`` after it.
    """
    for event in reversed(events):
        if event["type"] == "turn/end":
            return None
        if event["type"] == "turn/start":
            return event["data"]["turn"]
    return None
