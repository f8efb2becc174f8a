"""``Anthropic``: the Messages API, streamed through the official ``anthropic`` client.

Implements spec/plugins.md §5.3 (the streaming protocol) and §5.5 (replay envelopes) for the
Anthropic Messages API:

* The request is ``to_anthropic(request.messages, model=request.model)`` (the leading system
  messages become ``system``; tool results are paired with their calls) plus the tools,
  ``max_tokens`` (the request's, else the provider's default), and a top-level
  ``cache_control`` so the API caches the conversation prefix between calls.
* Content blocks arrive by index: ``text`` → ``text``, ``thinking`` and ``redacted_thinking``
  → ``reasoning``, ``tool_use`` → ``tool-call`` (its ``input_json_delta`` fragments are the
  argument text). Block kinds agentlog does not model (server tools) are not emitted.
* ``stop_reason`` ``end_turn`` / ``stop_sequence`` / ``pause_turn`` → ``stop``, ``tool_use`` →
  ``tool-calls``, ``max_tokens`` / ``model_context_window_exceeded`` → ``max-tokens``;
  ``refusal`` is a ``CONTENT_FILTER`` failure; an answer with neither text nor tool calls is an
  ``EMPTY_RESPONSE`` failure; a stream without ``message_stop`` is a ``TRANSPORT`` failure.
* Usage buckets are Anthropic's own, already disjoint: ``input_tokens`` (uncached),
  ``cache_read_input_tokens`` → ``cacheReadTokens``, ``cache_creation_input_tokens`` →
  ``cacheWriteTokens``, ``output_tokens`` (thinking included: the API does not split it).
* The ``finish`` chunk carries the replay envelope (``anthropic_messages`` documents its
  shape): the thinking signatures and redacted-thinking data that must be echoed back, verbatim,
  when the conversation continues with the same model.
* Failures map to codes as ``agentlog.providers._failures`` tabulates: 529 ``overloaded_error``
  is ``SERVER``, "prompt is too long" is ``CONTEXT_WINDOW_EXCEEDED``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from agentlog.errors import ProviderError
from agentlog.loop.model import DEFAULT_RETRY_POLICY, Chunk, ModelRequest, RetryPolicy, TokenUsage
from agentlog.providers._failures import status_failure, transport_code
from agentlog.providers._official import ClientProvider, Translator
from agentlog.providers.anthropic_messages import ENVELOPE_KIND, ENVELOPE_VERSION, to_anthropic
from agentlog.providers.base import require_extra
from agentlog.values import JsonValue, thaw

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["DEFAULT_MAX_TOKENS", "Anthropic"]

DEFAULT_MAX_TOKENS: Final = 8192
"""``max_tokens`` of a request that names none (the Messages API requires one)."""

_STOP_REASONS: Final = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "max-tokens",
    "model_context_window_exceeded": "max-tokens",
}


class Anthropic(ClientProvider):
    """An Anthropic Messages model (extra ``anthropic``).

    Implements spec/plugins.md §5 for the Messages streaming API, replay envelopes included.

    Args:
        model: The model requests go to, e.g. ``"claude-sonnet-4-5"``.
        base_url: The API root (default: Anthropic's, or ``$ANTHROPIC_BASE_URL``).
        api_key: The API key (default: ``$ANTHROPIC_API_KEY``).
        client: An ``anthropic.AsyncAnthropic`` to use as given (its own retries included); then
            ``base_url`` and ``api_key`` must not be given.
        max_tokens: ``max_tokens`` of a request that names none.
        retry_policy: How the loop retries failures (spec/plugins.md §4.9; ``None``: never).
        context_window: The model's context window in tokens, when known.

    Raises:
        ImportError: The ``anthropic`` package is not installed
            (``pip install 'agentlog[anthropic]'``).
        ValueError: ``client`` was given together with ``base_url`` or ``api_key``.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncAnthropic | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        retry_policy: RetryPolicy | None = DEFAULT_RETRY_POLICY,
        context_window: int | None = None,
    ) -> None:
        anthropic = require_extra("anthropic", "anthropic")
        if client is not None and (base_url is not None or api_key is not None):
            raise ValueError("pass base_url and api_key to the client you give, not to Anthropic")
        self._anthropic = anthropic
        self._max_tokens = max_tokens
        super().__init__(
            model,
            name="anthropic",
            client=client,
            new_client=lambda: anthropic.AsyncAnthropic(
                api_key=api_key, base_url=base_url, max_retries=0
            ),
            retry_policy=retry_policy,
            context_window=context_window,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body ``stream(request)`` sends (``system``, ``messages``: ``to_anthropic``)."""
        converted = to_anthropic(request.messages, model=request.model)
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens or self._max_tokens,
            "messages": converted["messages"],
            "stream": True,
            "cache_control": {"type": "ephemeral"},
        }
        if converted["system"] is not None:
            body["system"] = converted["system"]
        if request.tools:
            body["tools"] = [
                {
                    "name": tool["name"],
                    "description": tool["description"],
                    "input_schema": thaw(tool["parameters"]),
                }
                for tool in request.tools
            ]
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.stop:
            body["stop_sequences"] = list(request.stop)
        if request.reasoning_effort is not None:
            body["output_config"] = {"effort": request.reasoning_effort}
        return body

    async def _open(self, client: Any, request: ModelRequest) -> Any:
        body = self.request_body(request)
        required = {key: body.pop(key) for key in ("model", "max_tokens", "messages", "stream")}
        # Everything else travels as JSON the client passes through, so that a parameter
        # newer than the installed client (cache_control, output_config) still reaches the API.
        body.update(request.options)
        return await client.messages.create(**required, extra_body=body)

    def _translator(self, request: ModelRequest) -> Translator:
        return _MessagesStream(request.model)

    def map_failure(self, exc: Exception) -> ProviderError | None:
        """The ``ProviderError`` for an exception the ``anthropic`` client raised.

        Implements spec/plugins.md §5.3's error codes for the Messages API.
        """
        anthropic = self._anthropic
        if isinstance(exc, anthropic.APITimeoutError):
            return ProviderError.of("the request timed out", "TIMEOUT")
        if isinstance(exc, anthropic.APIConnectionError):
            cause = f": {exc.__cause__}" if exc.__cause__ is not None else ""
            return ProviderError.of(f"Connection error{cause}", "TRANSPORT")
        if isinstance(exc, anthropic.APIStatusError):
            return status_failure(
                status=exc.status_code,
                body=exc.body,
                headers=exc.response.headers,
                message=exc.message,
                request_id=getattr(exc, "request_id", None),
            )
        if isinstance(exc, anthropic.APIError):
            return status_failure(status=None, body=exc.body, headers=None, message=exc.message)
        code = transport_code(exc)
        return None if code is None else ProviderError.of(str(exc) or type(exc).__name__, code)


@dataclass(slots=True)
class _Block:
    index: int
    kind: str
    parts: list[str] = field(default_factory=list)
    id: str = ""
    name: str = ""
    input: Any = None
    signature: str = ""
    redacted: str | None = None
    closed: bool = False

    def final(self) -> dict[str, Any]:
        text = "".join(self.parts)
        if self.kind == "tool-call":
            if not text.strip():
                text = json.dumps(self.input) if self.input else "{}"
            return {"type": "tool-call", "id": self.id, "name": self.name, "arguments": text}
        return {"type": self.kind, "text": text}

    def envelope(self) -> dict[str, JsonValue]:
        if self.kind != "reasoning":
            return {"type": self.kind}
        if self.redacted is not None:
            return {"type": "reasoning", "redacted": True, "data": self.redacted}
        return (
            {"type": "reasoning", "signature": self.signature}
            if self.signature
            else {"type": "reasoning"}
        )


_KINDS: Final = {
    "text": "text",
    "thinking": "reasoning",
    "redacted_thinking": "reasoning",
    "tool_use": "tool-call",
}


class _MessagesStream:
    """Messages stream events → stream chunks, for one call (spec/plugins.md §5.3, §5.5)."""

    def __init__(self, model: str) -> None:
        self._model = model
        self._blocks: list[_Block] = []
        self._by_wire: dict[int, _Block] = {}  # by the API's content block index
        self._usage: dict[str, int] = {}
        self._response: dict[str, JsonValue] = {}
        self._stop_reason: str | None = None
        self._stopped = False

    def _take_usage(self, usage: Any) -> None:
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(usage, key, None)
            if isinstance(value, int):
                self._usage[key] = value

    def feed(self, event: Any) -> list[Chunk]:
        kind = getattr(event, "type", None)
        out: list[Chunk] = []
        if kind == "message_start":
            message = event.message
            self._response.update(responseId=message.id, responseModel=message.model)
            self._take_usage(getattr(message, "usage", None))
        elif kind == "content_block_start":
            self._start(out, event.index, event.content_block)
        elif kind == "content_block_delta":
            block = self._by_wire.get(event.index)
            if block is not None:
                self._delta(out, block, event.delta)
        elif kind == "content_block_stop":
            block = self._by_wire.get(event.index)
            if block is not None:
                self._close(out, block)
        elif kind == "message_delta":
            self._stop_reason = getattr(event.delta, "stop_reason", None) or self._stop_reason
            self._take_usage(getattr(event, "usage", None))
        elif kind == "message_stop":
            self._stopped = True
        return out

    def _start(self, out: list[Chunk], wire_index: int, content: Any) -> None:
        wire_type = getattr(content, "type", None)
        kind = _KINDS.get(wire_type or "")
        if kind is None:
            return  # a server-tool block agentlog does not model
        block = _Block(index=len(self._blocks), kind=kind)
        self._blocks.append(block)
        self._by_wire[wire_index] = block
        out.append({"type": "block-start", "index": block.index, "blockType": kind})
        if wire_type == "tool_use":
            block.id, block.name, block.input = content.id, content.name, content.input
            out.append(
                {
                    "type": "tool-call-delta",
                    "index": block.index,
                    "id": block.id,
                    "name": block.name,
                    "argumentsDelta": "",
                }
            )
        elif wire_type == "redacted_thinking":
            block.redacted = content.data
        elif wire_type == "thinking":
            block.signature = getattr(content, "signature", None) or ""
            self._text(out, block, getattr(content, "thinking", None))
        else:
            self._text(out, block, getattr(content, "text", None))

    def _text(self, out: list[Chunk], block: _Block, text: Any) -> None:
        if isinstance(text, str) and text:
            block.parts.append(text)
            out.append({"type": f"{block.kind}-delta", "index": block.index, "text": text})

    def _delta(self, out: list[Chunk], block: _Block, delta: Any) -> None:
        kind = getattr(delta, "type", None)
        if kind == "text_delta":
            self._text(out, block, delta.text)
        elif kind == "thinking_delta":
            self._text(out, block, delta.thinking)
        elif kind == "signature_delta":
            block.signature += delta.signature
        elif kind == "input_json_delta" and delta.partial_json:
            block.parts.append(delta.partial_json)
            out.append(
                {
                    "type": "tool-call-delta",
                    "index": block.index,
                    "id": block.id,
                    "argumentsDelta": delta.partial_json,
                }
            )

    def _close(self, out: list[Chunk], block: _Block) -> None:
        if not block.closed:
            block.closed = True
            out.append({"type": "block-end", "index": block.index, "block": block.final()})

    def end(self) -> list[Chunk]:
        if not self._stopped:
            raise ProviderError.of(
                "the stream ended before the model finished its answer", "TRANSPORT"
            )
        out: list[Chunk] = []
        for block in self._blocks:
            self._close(out, block)
        if self._stop_reason == "refusal":
            raise ProviderError.of(
                "the model refused to answer (stop_reason 'refusal')", "CONTENT_FILTER"
            )
        kind = _STOP_REASONS.get(self._stop_reason or "end_turn", "stop")
        has_tools = any(b.kind == "tool-call" for b in self._blocks)
        if kind == "stop" and has_tools:
            kind = "tool-calls"
        if (
            kind != "max-tokens"
            and not has_tools
            and not any(b.kind == "text" and "".join(b.parts).strip() for b in self._blocks)
        ):
            raise ProviderError.of("the model returned an empty answer", "EMPTY_RESPONSE")
        if self._usage:
            out.append({"type": "usage", "usage": dict(_token_usage(self._usage))})
        response: dict[str, JsonValue] = {
            "kind": ENVELOPE_KIND,
            "version": ENVELOPE_VERSION,
            "model": self._model,
            **{k: v for k, v in self._response.items() if isinstance(v, str)},
        }
        if self._stop_reason:
            response["stopReason"] = self._stop_reason
        replay: dict[str, JsonValue] = {
            "response": response,
            "blocks": [block.envelope() for block in self._blocks],
        }
        out.append({"type": "finish", "reason": {"kind": kind}, "replayState": replay})
        return out


def _token_usage(usage: dict[str, int]) -> TokenUsage:
    """``TokenUsage`` from the Messages API's usage, whose buckets are already disjoint."""
    result: TokenUsage = {
        "inputTokens": usage.get("input_tokens", 0),
        "outputTokens": usage.get("output_tokens", 0),
    }
    if usage.get("cache_read_input_tokens"):
        result["cacheReadTokens"] = usage["cache_read_input_tokens"]
    if usage.get("cache_creation_input_tokens"):
        result["cacheWriteTokens"] = usage["cache_creation_input_tokens"]
    result["totalTokens"] = sum(usage.values())
    return result
