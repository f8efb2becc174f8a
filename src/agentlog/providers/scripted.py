"""``Scripted``: a model provider that answers from a script, for tests, demos and offline use.

Each request takes the next reply of the script (or asks a function of the request). A reply
is a string (one text block), ``Scripted.call(name, arguments)`` (one tool call), a list of
those and other blocks (``Scripted.reasoning(text)``, content-block dicts), ``Scripted.reply(
*blocks, finish=..., usage=...)`` for full control, an exception (raised as the call's failure:
a ``ProviderError`` carries its ``LlmFailure``), or an async iterable of raw stream chunks. The
reply is streamed as a real provider streams (spec/plugins.md §5.3): per block ``block-start``,
deltas (text word by word), ``block-end``, then ``usage`` when given and ``finish``. Every
request is kept in ``requests``, so a test can check what the model was sent. Nothing leaves
the process (STYLE.md 21: the test double ships with the library).

Example:
    >>> import asyncio
    >>> from agentlog import Agent, Session, tool
    >>> @tool
    ... def weather(city: str) -> str:
    ...     '''Today's weather in a city.'''
    ...     return "sunny"
    >>> model = Scripted([Scripted.call("weather", {"city": "Oslo"}), "Sunny in Oslo."])
    >>> agent = Agent(Session.create("s"), model, tools=[weather])
    >>> asyncio.run(agent.run("Weather in Oslo?")).text
    'Sunny in Oslo.'
    >>> [m["role"] for m in model.requests[1].messages]
    ['user', 'assistant', 'tool']
"""

from __future__ import annotations

import inspect
import itertools
import re
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from agentlog.errors import ProviderError
from agentlog.loop.model import DEFAULT_RETRY_POLICY, Chunk, ModelRequest, RetryPolicy
from agentlog.providers.base import BaseProvider
from agentlog.values import dumps

__all__ = ["Reply", "Scripted"]

_WORDS = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """One scripted answer: its blocks and how it finishes."""

    blocks: tuple[Mapping[str, Any], ...]
    finish: Literal["stop", "tool-calls", "max-tokens"] | None = None
    """``None``: ``tool-calls`` when a block is a tool call, else ``stop``."""
    usage: Mapping[str, int] | None = None
    """Token usage to report (a ``usage`` chunk before the finish)."""
    replay_state: Mapping[str, Any] | None = None
    """A replay envelope for the finish (spec/plugins.md §5.5)."""
    chunk_words: int = field(default=1)
    """How many words each text delta carries."""


_PLAIN = (str, list, tuple, dict, Reply)
"""Reply types that are neither awaitable nor async iterable (no ABC check: once a request)."""

ReplyItem: TypeAlias = Any
"""``str`` | tool-call block | list of blocks | ``Reply`` | ``BaseException`` |
``AsyncIterable[Chunk]``."""
Script: TypeAlias = Iterable[ReplyItem] | Callable[[ModelRequest], Any]


class Scripted(BaseProvider):
    """A provider that streams scripted replies (see the module docstring).

    Args:
        replies: The replies, one per request in order (a single string is one reply), or a
            function of the ``ModelRequest`` returning a reply (or an awaitable of one).
        model: The model name logged in request headers.
        name: The provider id logged in request headers.
        retry_policy: How the loop retries scripted failures (the spec's default).
        context_windows: Context windows by model, for compaction.
    """

    def __init__(
        self,
        replies: Script | str,
        *,
        model: str = "scripted",
        name: str = "scripted",
        retry_policy: RetryPolicy | None = DEFAULT_RETRY_POLICY,
        context_windows: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__(
            model, name=name, retry_policy=retry_policy, context_windows=context_windows
        )
        if isinstance(replies, str):
            replies = [replies]
        self._function: Callable[[ModelRequest], Any] | None = None
        self._script: list[ReplyItem] = []
        if callable(replies) and not isinstance(replies, (list, tuple)):
            self._function = replies
        else:
            self._script = list(replies)
        self._calls = itertools.count(1)
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""

    @staticmethod
    def call(
        name: str, arguments: Mapping[str, Any] | str = "{}", *, id: str | None = None
    ) -> dict[str, Any]:
        """A tool-call block: ``arguments`` as a mapping (sent as JSON) or raw JSON text."""
        raw = arguments if isinstance(arguments, str) else dumps(dict(arguments)).decode()
        block: dict[str, Any] = {
            "type": "tool-call",
            "id": id or "",
            "name": name,
            "arguments": raw,
        }
        return block

    @staticmethod
    def reasoning(text: str) -> dict[str, Any]:
        """A reasoning (thinking) block."""
        return {"type": "reasoning", "text": text}

    @staticmethod
    def reply(
        *blocks: str | Mapping[str, Any],
        finish: Literal["stop", "tool-calls", "max-tokens"] | None = None,
        usage: Mapping[str, int] | None = None,
        replay_state: Mapping[str, Any] | None = None,
    ) -> Reply:
        """A reply with a chosen finish, usage or replay envelope."""
        return Reply(
            blocks=tuple(_block(b) for b in blocks),
            finish=finish,
            usage=usage,
            replay_state=replay_state,
        )

    @property
    def remaining(self) -> int:
        """How many scripted replies are left (0 for a function)."""
        return len(self._script) - (len(self.requests) if self._function is None else 0)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        """Stream the next reply (spec/plugins.md §5.3 chunk order)."""
        number = len(self.requests)
        self.requests.append(request)
        if self._function is not None:
            item = self._function(request)
            if type(item) not in _PLAIN and inspect.isawaitable(item):
                item = await item
        elif number < len(self._script):
            item = self._script[number]
        else:
            raise ProviderError.of(
                f"Scripted: no reply left for request {number + 1} (the script has "
                f"{len(self._script)})",
                "BAD_REQUEST",
            )
        if isinstance(item, BaseException):
            raise item
        if type(item) not in _PLAIN and isinstance(item, AsyncIterable):
            async for chunk in item:
                yield chunk
            return
        reply = item if isinstance(item, Reply) else Reply(blocks=tuple(_blocks(item)))
        for chunk in self._chunks(reply):
            yield chunk

    def _chunks(self, reply: Reply) -> Iterable[Chunk]:
        has_calls = False
        for index, given in enumerate(reply.blocks):
            block = dict(given)
            kind = block.get("type")
            yield {"type": "block-start", "index": index, "blockType": kind}
            if kind in ("text", "reasoning"):
                delta = "text-delta" if kind == "text" else "reasoning-delta"
                words = _WORDS.findall(block.get("text", ""))
                step = max(1, reply.chunk_words)
                for start in range(0, len(words), step):
                    yield {
                        "type": delta,
                        "index": index,
                        "text": "".join(words[start : start + step]),
                    }
            elif kind == "tool-call":
                has_calls = True
                block["id"] = block.get("id") or f"call_{next(self._calls)}"
                yield {
                    "type": "tool-call-delta",
                    "index": index,
                    "id": block["id"],
                    "name": block["name"],
                    "argumentsDelta": block.get("arguments", ""),
                }
            yield {"type": "block-end", "index": index, "block": block}
        if reply.usage is not None:
            yield {"type": "usage", "usage": dict(reply.usage)}
        finish: dict[str, Any] = {
            "type": "finish",
            "reason": {"kind": reply.finish or ("tool-calls" if has_calls else "stop")},
        }
        if reply.replay_state is not None:
            finish["replayState"] = dict(reply.replay_state)
        yield finish


def _block(value: str | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(value, str):
        return {"type": "text", "text": value}
    if isinstance(value, Mapping) and isinstance(value.get("type"), str):
        return value
    raise TypeError(f"a scripted block is a string or a content block, got {value!r}")


def _blocks(item: ReplyItem) -> list[Mapping[str, Any]]:
    if isinstance(item, (str, Mapping)):
        return [_block(item)]
    if isinstance(item, (list, tuple)):
        return [_block(value) for value in item]
    raise TypeError(f"not a scripted reply: {item!r}")
