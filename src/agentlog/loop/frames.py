"""Live frames an agent emits while it runs, and the result of a run.

Implements the process-local notifications of spec/plugins.md §4.5 (``agent/assistant-stream``
frames ``start``/``chunk``/``end`` per attempt, with ``attemptId = "<sessionId>:<counter>"``
and the outcome ``committed`` — after the append — or ``abandoned``) and §4.8 (``agent/error``),
plus a frame per committed event and per tool call. Frames are never logged: the log is the
durable record, frames are the view of it as it happens (``Agent.stream()``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from agentlog.events import Event
from agentlog.values import JsonValue

__all__ = [
    "AttemptEnded",
    "AttemptStarted",
    "Committed",
    "Frame",
    "ReasoningDelta",
    "RunReason",
    "RunResult",
    "TextDelta",
    "ToolCallDelta",
    "ToolFinished",
    "ToolStarted",
    "TurnFailed",
]

RunReason: TypeAlias = Literal["completed", "max-tokens", "aborted", "error", "blocked"]
"""How the last turn of a run ended (its ``turn/end`` reason kind)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptStarted:
    """A model request was sent (after its events were made durable)."""

    attempt_id: str
    turn: int
    step: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """Visible answer text as it streams."""

    attempt_id: str
    index: int
    """The content block it belongs to."""
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta:
    """Reasoning (thinking) text as it streams."""

    attempt_id: str
    index: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallDelta:
    """A fragment of a tool call's arguments as it streams."""

    attempt_id: str
    index: int
    call_id: str
    name: str | None
    arguments_delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptEnded:
    """An attempt settled: ``committed`` as the event at ``seq``, or ``abandoned``."""

    attempt_id: str
    outcome: Literal["committed", "abandoned"]
    event_type: str | None = None
    """``assistant/message`` or ``assistant/attempt`` when committed."""
    seq: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStarted:
    """A tool call is about to run (its ``tool/call`` is durable)."""

    call_id: str
    name: str
    arguments: JsonValue
    """The parsed arguments (the raw text when it was not valid JSON)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFinished:
    """A tool call's result was committed (in model order)."""

    call_id: str
    name: str
    is_error: bool
    content: tuple[Any, ...]
    """The result's content blocks."""
    seq: int
    """The ``tool/result`` event."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Committed:
    """The agent appended ``event`` (every event, in log order)."""

    event: Event


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFailed:
    """A turn failed (``agent/error``): ``error`` is the ``LlmFailure`` its ``turn/end`` logs."""

    turn: int
    step: int | None
    error: JsonValue


Frame: TypeAlias = (
    AttemptStarted
    | TextDelta
    | ReasoningDelta
    | ToolCallDelta
    | AttemptEnded
    | ToolStarted
    | ToolFinished
    | Committed
    | TurnFailed
)
"""Anything ``Agent.stream()`` yields."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """What a run did: how its last turn ended, the last answer, and every event it appended."""

    reason: RunReason
    text: str
    """The text of the last assistant message of the run ("" when there was none)."""
    events: tuple[Event, ...]
    """The events appended to the session from the run's start until it was idle."""
    error: JsonValue = None
    """The ``LlmFailure`` of a run that ended in ``error``."""
