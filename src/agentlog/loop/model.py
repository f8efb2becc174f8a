"""What the agent loop asks of a model: one request in, one stream of chunks out.

Implements the contract side of spec/plugins.md §5 (the LLM layer vocabulary): the request a
loop builds from the log (§4.4 step 8), the stream chunks of §5.3 (recorded verbatim into the
``stream`` of ``assistant/message`` / ``assistant/attempt``, §5.4), the failure record
``LlmFailure`` with its codes, and the retry policy every provider carries (§4.9).

A provider (``agentlog.providers``) implements ``Provider``: ``stream(request)`` is an async
iterator of chunks that

* emits, per content block, ``block-start`` → deltas → ``block-end`` (with the final block);
  block ``index`` values are 0-based in first-seen order;
* emits at most one ``usage`` chunk, before the finish;
* ends with exactly one ``finish`` chunk (``stop``, ``tool-calls``, ``max-tokens``); nothing
  follows it; a ``replayState`` on the finish is the provider-native envelope of §5.5;
* raises ``ProviderError`` (a mapped ``LlmFailure``) when the call fails, before or during the
  stream — a stream that ends without a finish is a ``TRANSPORT`` failure, never a short
  answer;
* lets ``asyncio.CancelledError`` through (the loop cancels the consuming task to abort), after
  closing its HTTP stream.

The loop owns retries (providers create their clients with retries off) and the conversion of
any other exception into a terminal ``finish{error}`` with code ``UNKNOWN``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NotRequired, Protocol, TypeAlias, TypedDict

from agentlog.errors import ProviderError
from agentlog.values import JsonValue

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

Chunk: TypeAlias = dict[str, JsonValue]
"""One stream chunk, wire-shaped (spec/core.md §2.4 ``StreamChunk``):

``{"type": "block-start", "index", "blockType"}`` · ``{"type": "text-delta", "index", "text"}`` ·
``{"type": "reasoning-delta", "index", "text"}`` ·
``{"type": "tool-call-delta", "index", "id", "name"?, "argumentsDelta"}`` ·
``{"type": "block-end", "index", "block"}`` · ``{"type": "usage", "usage": TokenUsage}`` ·
``{"type": "finish", "reason": {"kind": FinishKind, "failure"?}, "replayState"?}``.
"""

FinishKind: TypeAlias = Literal["stop", "tool-calls", "max-tokens", "aborted", "error"]
"""Why a model attempt ended (``finish.reason.kind``)."""

ErrorCode: TypeAlias = Literal[
    "CONTEXT_WINDOW_EXCEEDED",
    "EMPTY_RESPONSE",
    "RATE_LIMIT",
    "SERVER",
    "TIMEOUT",
    "TRANSPORT",
    "AUTHENTICATION",
    "BAD_REQUEST",
    "NO_ADAPTER",
    "UNSUPPORTED_CONTENT",
    "INVALID_REPLAY_STATE",
    "IMAGE_OFFLOAD_REQUIRED",
    "CONTENT_FILTER",
    "UNKNOWN",
]
"""``LlmFailure.code``: the §5.3 codes, plus ``AUTHENTICATION`` / ``BAD_REQUEST`` for a refused
key or request, ``CONTENT_FILTER`` for an answer the provider's filter stopped or the model
refused (OpenAI ``finish_reason: content_filter``, Anthropic ``stop_reason: refusal``; not
retried by the default policy) and ``UNKNOWN`` for an exception no provider mapped (§4.8)."""


class TokenUsage(TypedDict):
    """Token counts of one attempt; the buckets are disjoint (spec/plugins.md §5.3)."""

    inputTokens: int
    """Uncached input tokens only."""
    outputTokens: int
    totalTokens: NotRequired[int]
    cacheReadTokens: NotRequired[int]
    cacheWriteTokens: NotRequired[int]
    reasoningTokens: NotRequired[int]


class LlmFailure(TypedDict):
    """A failed model call, as logged in ``turn/end``, ``llm/retry`` and attempts (§2.4)."""

    message: str
    code: str
    status: NotRequired[int]
    """The HTTP status, when there was a response."""
    providerRetryAfterMs: NotRequired[int]
    """The provider's ``Retry-After``, in milliseconds."""
    requestId: NotRequired[str]


class ToolSchema(TypedDict):
    """A tool as the model sees it, and as ``request/header.tools`` logs it (§2.4)."""

    name: str
    description: str
    parameters: dict[str, JsonValue]
    """A JSON schema object for the arguments."""


RETRYABLE_CODES: Final = frozenset(
    {"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"}
)
"""The codes the default policy retries (spec/plugins.md §4.9)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How a provider's failed calls are retried by the loop (spec/plugins.md §4.9)."""

    mode: Literal["normal", "always"] = "normal"
    """``normal``: retry the listed codes up to ``max_retries``; ``always``: retry every failure."""
    max_retries: int = 5
    """Retries per step (``normal`` mode)."""
    retryable_codes: frozenset[str] = RETRYABLE_CODES
    """The codes ``normal`` mode retries."""
    initial_delay_ms: int = 500
    """The first backoff delay; it doubles per retry."""
    max_delay_ms: int = 10_000
    """The backoff cap; a longer ``Retry-After`` is not waited for in ``normal`` mode."""
    jitter_ratio: float = 0.1
    """Each delay is scaled by a random factor in ``[1 - j, 1 + j]``."""
    key: str = "default"
    """The ``policyKey`` logged on ``llm/retry`` (retry budgets are kept per provider and key)."""


DEFAULT_RETRY_POLICY: Final = RetryPolicy()
"""The spec's default: mode normal, 5 retries, backoff 500 ms → 10 s, jitter 0.1."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """One model call as the loop dispatches it (spec/plugins.md §4.4 step 8).

    ``messages`` is ``Session.derive_messages()`` at dispatch: the system prompt is its
    ``system`` message (node 0, spec/plugins.md §4.11), tool results are role-``tool``
    messages, and assistant messages may carry another provider's ``replayState`` — a provider
    uses only envelopes it wrote itself, for the same model (§5.5), and treats others as
    provider-neutral history.
    """

    provider: str
    """The provider id logged in the request header (``Provider.name``)."""
    model: str
    messages: Sequence[JsonValue]
    tools: Sequence[ToolSchema] = ()
    reasoning_effort: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    stop: Sequence[str] | None = None
    session_id: str | None = None
    purpose: Literal["compaction", "session-title"] | None = None
    """Set for side calls that are not a turn's step."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Provider-specific extras the caller passes through unchanged (never logged)."""


class Provider(Protocol):
    """A model provider the loop can stream from (implemented in ``agentlog.providers``)."""

    @property
    def name(self) -> str:
        """The provider id recorded in request headers (``openai``, ``deepseek``, ...)."""
        ...

    @property
    def model(self) -> str:
        """The model requests go to unless the caller names another."""
        ...

    @property
    def retry_policy(self) -> RetryPolicy | None:
        """How the loop retries this provider's failures (``None``: never)."""
        ...

    def context_window(self, model: str) -> int | None:
        """The model's context window in tokens, when known (logged in ``request/context``)."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        """Send ``request``; yield its chunks as they arrive (see the module docstring).

        Raises:
            ProviderError: the call failed; ``failure`` says how.
        """
        ...
