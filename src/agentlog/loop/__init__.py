"""The agent loop: turns, steps, tools and retries, written to the session log as they happen.

Implements spec/plugins.md §4 (the loop) over ``agentlog.loop.model`` (what the loop asks of a
model provider, spec/plugins.md §5). ``Agent`` and ``tool`` are also exported at the top level
(``from agentlog import Agent, tool``).
"""

from agentlog.loop.agent import Agent, Message
from agentlog.loop.frames import (
    AttemptEnded,
    AttemptStarted,
    Committed,
    Frame,
    ReasoningDelta,
    RunReason,
    RunResult,
    TextDelta,
    ToolCallDelta,
    ToolFinished,
    ToolStarted,
    TurnFailed,
)
from agentlog.loop.hooks import Continue, Enter, PreStep, Reject, TurnStopping
from agentlog.loop.model import (
    DEFAULT_RETRY_POLICY,
    RETRYABLE_CODES,
    Chunk,
    ErrorCode,
    FinishKind,
    LlmFailure,
    ModelRequest,
    Provider,
    ProviderError,
    RetryPolicy,
    TokenUsage,
    ToolSchema,
)
from agentlog.loop.tools import Tool, ToolResult, tool

__all__ = [
    "DEFAULT_RETRY_POLICY",
    "RETRYABLE_CODES",
    "Agent",
    "AttemptEnded",
    "AttemptStarted",
    "Chunk",
    "Committed",
    "Continue",
    "Enter",
    "ErrorCode",
    "FinishKind",
    "Frame",
    "LlmFailure",
    "Message",
    "ModelRequest",
    "PreStep",
    "Provider",
    "ProviderError",
    "ReasoningDelta",
    "Reject",
    "RetryPolicy",
    "RunReason",
    "RunResult",
    "TextDelta",
    "TokenUsage",
    "Tool",
    "ToolCallDelta",
    "ToolFinished",
    "ToolResult",
    "ToolSchema",
    "ToolStarted",
    "TurnFailed",
    "TurnStopping",
    "tool",
]
