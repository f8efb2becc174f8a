"""``OpenAIChat``: any Chat Completions server, streamed through the official ``openai`` client.

Implements spec/plugins.md §5.3 (the streaming protocol) for the Chat Completions API, as
OpenAI, DeepSeek, vLLM, Ollama, LiteLLM and other compatible servers speak it:

* The request is ``to_chat_completions(request.messages, model=request.model)`` plus the
  tools, ``stream=True`` and ``stream_options.include_usage`` (the usage arrives in a last
  chunk without choices).
* Content arrives as deltas of one choice: ``reasoning_content`` (DeepSeek; ``reasoning`` on
  some servers) becomes a ``reasoning`` block, ``content`` a ``text`` block, and tool calls are
  assembled from fragments keyed by their ``index`` (the first fragment names the call, later
  ones add argument text). A block ends when another kind of content starts, or at the finish.
* ``finish_reason`` ``stop`` / ``tool_calls`` / ``length`` → ``stop`` / ``tool-calls`` /
  ``max-tokens`` (a reply that carries tool calls finishes ``tool-calls`` whatever some
  servers say); ``content_filter`` is a ``CONTENT_FILTER`` failure; an answer with neither text
  nor tool calls is an ``EMPTY_RESPONSE`` failure; a stream that ends before any
  ``finish_reason`` is a ``TRANSPORT`` failure, never a short answer.
* Usage becomes disjoint ``TokenUsage`` buckets: cached prompt tokens (``cached_tokens``, or
  DeepSeek's ``prompt_cache_hit_tokens``) are ``cacheReadTokens`` and not ``inputTokens``;
  reasoning tokens are ``reasoningTokens`` and not ``outputTokens``.
* Failures map to codes as ``agentlog.providers._failures`` tabulates.

No replay envelope is written: reasoning is content, and it is sent back as
``reasoning_content`` to the same model only (§5.5, see ``to_chat_completions``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentlog.errors import ProviderError
from agentlog.loop.model import DEFAULT_RETRY_POLICY, Chunk, ModelRequest, RetryPolicy, TokenUsage
from agentlog.providers._failures import status_failure, transport_code
from agentlog.providers._official import ClientProvider, Translator
from agentlog.providers.base import require_extra
from agentlog.providers.openai_messages import to_chat_completions
from agentlog.values import thaw

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAIChat"]


class OpenAIChat(ClientProvider):
    """A Chat Completions model: OpenAI, DeepSeek, vLLM, Ollama, LiteLLM, ... (extra ``openai``).

    Implements spec/plugins.md §5 for the Chat Completions streaming API.

    Args:
        model: The model requests go to, e.g. ``"gpt-4o-mini"`` or ``"deepseek-chat"``.
        base_url: The server's API root (default: OpenAI's, or ``$OPENAI_BASE_URL``).
        api_key: The API key (default: ``$OPENAI_API_KEY``).
        client: An ``openai.AsyncOpenAI`` to use as given (its own retries included); then
            ``base_url`` and ``api_key`` must not be given.
        provider: The provider id logged in request headers (``"deepseek"``, ``"vllm"``, ...).
        retry_policy: How the loop retries failures (spec/plugins.md §4.9; ``None``: never).
        context_window: The model's context window in tokens, when known.

    Raises:
        ImportError: The ``openai`` package is not installed (``pip install 'agentlog[openai]'``).
        ValueError: ``client`` was given together with ``base_url`` or ``api_key``.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        provider: str = "openai",
        retry_policy: RetryPolicy | None = DEFAULT_RETRY_POLICY,
        context_window: int | None = None,
    ) -> None:
        openai = require_extra("openai", "openai")
        if client is not None and (base_url is not None or api_key is not None):
            raise ValueError("pass base_url and api_key to the client you give, not to OpenAIChat")
        self._openai = openai
        super().__init__(
            model,
            name=provider,
            client=client,
            new_client=lambda: openai.AsyncOpenAI(
                api_key=api_key, base_url=base_url, max_retries=0
            ),
            retry_policy=retry_policy,
            context_window=context_window,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body ``stream(request)`` sends (the messages are ``to_chat_completions``)."""
        body: dict[str, Any] = {
            "model": request.model,
            "messages": to_chat_completions(request.messages, model=request.model),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool["name"],
                        "description": tool["description"],
                        "parameters": thaw(tool["parameters"]),
                    },
                }
                for tool in request.tools
            ]
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            # OpenAI's own API has replaced max_tokens; compatible servers still expect it.
            key = "max_completion_tokens" if self.name == "openai" else "max_tokens"
            body[key] = request.max_tokens
        if request.stop:
            body["stop"] = list(request.stop)
        if request.reasoning_effort is not None:
            body["reasoning_effort"] = request.reasoning_effort
        return body

    async def _open(self, client: Any, request: ModelRequest) -> Any:
        body = self.request_body(request)
        required = {key: body.pop(key) for key in ("model", "messages", "stream")}
        # Everything else travels as JSON the client passes through, so that a parameter
        # newer than the installed client still reaches the server.
        body.update(request.options)
        return await client.chat.completions.create(**required, extra_body=body)

    def _translator(self, request: ModelRequest) -> Translator:
        return _ChatStream()

    def map_failure(self, exc: Exception) -> ProviderError | None:
        """The ``ProviderError`` for an exception the ``openai`` client raised.

        Implements spec/plugins.md §5.3's error codes for Chat Completions servers.
        """
        openai = self._openai
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError.of(_with_cause(exc.message, exc), "TIMEOUT")
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError.of(_with_cause(exc.message, exc), "TRANSPORT")
        if isinstance(exc, openai.APIStatusError):
            return status_failure(
                status=exc.status_code,
                body=exc.body,
                headers=exc.response.headers,
                message=exc.message,
                request_id=exc.request_id,
            )
        if isinstance(exc, openai.APIError):  # an error event inside a started stream
            return status_failure(status=None, body=exc.body, headers=None, message=exc.message)
        code = transport_code(exc)
        return None if code is None else ProviderError.of(_with_cause(str(exc), exc), code)


def _with_cause(message: str, exc: BaseException) -> str:
    cause = exc.__cause__
    detail = str(cause) if cause is not None else ""
    text = message or type(exc).__name__
    return f"{text.rstrip('.')}: {detail}" if detail else text


@dataclass(slots=True)
class _Block:
    index: int
    kind: str
    parts: list[str] = field(default_factory=list)
    id: str = ""
    name: str = ""

    def final(self) -> dict[str, Any]:
        text = "".join(self.parts)
        if self.kind == "tool-call":
            return {"type": "tool-call", "id": self.id, "name": self.name, "arguments": text}
        return {"type": self.kind, "text": text}


class _ChatStream:
    """Chat Completions chunks → stream chunks, for one call (spec/plugins.md §5.3)."""

    def __init__(self) -> None:
        self._blocks: list[_Block] = []
        self._open: _Block | None = None  # the open text or reasoning block
        self._tools: dict[object, _Block] = {}  # by the wire's tool-call index
        self._closed: set[int] = set()
        self._finish: str | None = None
        self._usage: TokenUsage | None = None

    def feed(self, event: Any) -> list[Chunk]:
        out: list[Chunk] = []
        usage = getattr(event, "usage", None)
        if usage is not None:
            self._usage = _token_usage(usage)
        for choice in getattr(event, "choices", None) or ():
            if getattr(choice, "index", 0) != 0:
                continue  # n > 1 is never requested
            delta = getattr(choice, "delta", None)
            if delta is not None:
                self._deltas(out, delta)
            if getattr(choice, "finish_reason", None):
                self._finish = choice.finish_reason
                self._close_all(out)
        return out

    def _deltas(self, out: list[Chunk], delta: Any) -> None:
        reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            self._delta(out, "reasoning", reasoning)
        content = getattr(delta, "content", None)
        if isinstance(content, str) and content:
            self._delta(out, "text", content)
        for call in getattr(delta, "tool_calls", None) or ():
            self._tool_fragment(out, call)

    def _start(self, out: list[Chunk], kind: str) -> _Block:
        block = _Block(index=len(self._blocks), kind=kind)
        self._blocks.append(block)
        out.append({"type": "block-start", "index": block.index, "blockType": kind})
        return block

    def _close(self, out: list[Chunk], block: _Block) -> None:
        if block.index not in self._closed:
            self._closed.add(block.index)
            out.append({"type": "block-end", "index": block.index, "block": block.final()})

    def _close_all(self, out: list[Chunk]) -> None:
        for block in self._blocks:
            self._close(out, block)
        self._open = None

    def _delta(self, out: list[Chunk], kind: str, text: str) -> None:
        block = self._open
        if block is None or block.kind != kind:
            if block is not None:
                self._close(out, block)
            block = self._open = self._start(out, kind)
        block.parts.append(text)
        out.append({"type": f"{kind}-delta", "index": block.index, "text": text})

    def _tool_fragment(self, out: list[Chunk], call: Any) -> None:
        key = getattr(call, "index", None)
        if not isinstance(key, int):
            key = getattr(call, "id", None) or len(self._tools)
        function = getattr(call, "function", None)
        name = getattr(function, "name", None) or ""
        arguments = getattr(function, "arguments", None) or ""
        block = self._tools.get(key)
        delta: Chunk
        if block is None:
            if self._open is not None:
                self._close(out, self._open)
                self._open = None
            block = self._tools[key] = self._start(out, "tool-call")
            # A server that sends no id still needs one: results are paired with calls by id.
            block.id = getattr(call, "id", None) or f"call_{uuid.uuid4().hex[:24]}"
            block.name = name
            delta = {"type": "tool-call-delta", "index": block.index, "id": block.id}
            if name:
                delta["name"] = name
        elif arguments or (name and not block.name):
            delta = {"type": "tool-call-delta", "index": block.index, "id": block.id}
            if name and not block.name:
                block.name = delta["name"] = name
        else:
            return
        delta["argumentsDelta"] = arguments
        block.parts.append(arguments)
        out.append(delta)

    def end(self) -> list[Chunk]:
        if self._finish is None:
            raise ProviderError.of(
                "the stream ended before the model finished its answer", "TRANSPORT"
            )
        out: list[Chunk] = []
        self._close_all(out)
        has_tools = bool(self._tools)
        if self._finish == "content_filter":
            raise ProviderError.of(
                "the server stopped the answer: finish_reason 'content_filter'", "CONTENT_FILTER"
            )
        if self._finish == "length":
            kind = "max-tokens"
        elif not has_tools and not any(
            b.kind == "text" and "".join(b.parts).strip() for b in self._blocks
        ):
            raise ProviderError.of("the model returned an empty answer", "EMPTY_RESPONSE")
        else:
            kind = "tool-calls" if has_tools else "stop"
        if self._usage is not None:
            out.append({"type": "usage", "usage": dict(self._usage)})
        out.append({"type": "finish", "reason": {"kind": kind}})
        return out


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _token_usage(usage: Any) -> TokenUsage:
    """Disjoint ``TokenUsage`` from a Chat Completions ``usage`` (spec/plugins.md §5.3)."""
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    cached = _count(getattr(prompt_details, "cached_tokens", None)) or _count(
        getattr(usage, "prompt_cache_hit_tokens", None)  # DeepSeek
    )
    written = _count(getattr(prompt_details, "cache_write_tokens", None))
    reasoning = _count(
        getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", None)
    )
    prompt = _count(getattr(usage, "prompt_tokens", None))
    completion = _count(getattr(usage, "completion_tokens", None))
    result: TokenUsage = {
        "inputTokens": max(prompt - cached - written, 0),
        "outputTokens": max(completion - reasoning, 0),
    }
    total = getattr(usage, "total_tokens", None)
    if isinstance(total, int):
        result["totalTokens"] = total
    if cached:
        result["cacheReadTokens"] = cached
    if written:
        result["cacheWriteTokens"] = written
    if reasoning:
        result["reasoningTokens"] = reasoning
    return result
