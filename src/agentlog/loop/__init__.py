"""The agent loop: turns, steps, tools and retries, written to the session log as they happen.

Implements spec/plugins.md §4 (the loop) over ``agentlog.loop.model`` (what the loop asks of a
model provider, spec/plugins.md §5).
"""

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

__all__ = [
    "DEFAULT_RETRY_POLICY",
    "RETRYABLE_CODES",
    "Chunk",
    "ErrorCode",
    "FinishKind",
    "LlmFailure",
    "ModelRequest",
    "Provider",
    "ProviderError",
    "RetryPolicy",
    "TokenUsage",
    "ToolSchema",
]
