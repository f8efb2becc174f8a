"""Drive a provider by hand and log what it answers, as the loop would (for provider tests).

``collect`` runs one ``provider.stream(request)`` to its end and returns the chunks and the
``ProviderError`` (if any). ``Conversation`` keeps a real ``Session`` and writes the events a
loop writes around each call — turn, user message, step, ``assistant/message`` assembled from
the chunks (content from the ``block-end`` chunks, ``replayState`` from the ``finish``), tool
calls and results — so that the next request's messages are a real ``derive_messages()``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentlog import Session
from agentlog import messages as m
from agentlog.errors import ProviderError
from agentlog.events.stream import record_stream
from agentlog.loop import Chunk, ModelRequest, ToolSchema
from agentlog.providers.base import BaseProvider

__all__ = ["Conversation", "collect", "run"]


def run(coroutine: Any, timeout: float = 20.0) -> Any:
    """Run ``coroutine`` in a fresh event loop, failing the test if it takes too long."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def consume(
    provider: BaseProvider, request: ModelRequest
) -> tuple[list[Chunk], ProviderError | None]:
    chunks: list[Chunk] = []
    try:
        async for chunk in provider.stream(request):
            chunks.append(chunk)
    except ProviderError as error:
        return chunks, error
    return chunks, None


def collect(
    provider: BaseProvider, request: ModelRequest
) -> tuple[list[Chunk], ProviderError | None]:
    """All chunks of one call, and the ``ProviderError`` that ended it (``None``: none)."""
    result: tuple[list[Chunk], ProviderError | None] = run(consume(provider, request))
    return result


def blocks_of(chunks: Sequence[Chunk]) -> list[dict[str, Any]]:
    """The final content blocks, by index (what the loop's block assembler keeps)."""
    ends = sorted((c for c in chunks if c["type"] == "block-end"), key=lambda c: c["index"])
    return [dict(c["block"]) for c in ends]


class Conversation:
    """A session a test grows one model call at a time."""

    def __init__(self, session_id: str = "s1", *, system: str | None = None) -> None:
        self.session = Session.create(session_id, clock=lambda: 0)
        self.turn = 0
        self.step = 0
        self.system = system
        self._calls: dict[str, int] = {}
        self._step_closed = True

    def user(self, text: str) -> None:
        """Open a new turn with a user prompt (and the system prompt on the first turn)."""
        self.turn += 1
        self.step = 0
        self.session.append("turn/start", {"turn": self.turn})
        if self.turn == 1 and self.system is not None:
            self._step()
            self.session.append(
                "system/message", m.system(self.system, turn=1, step=1), surface_op="append"
            )
        self.session.append("user/message", m.user(text), surface_op="append")

    def _step(self) -> None:
        if self._step_closed:
            self.step += 1
            self.session.append("step/start", {"turn": self.turn, "step": self.step})
            self._step_closed = False

    def request(
        self, provider: BaseProvider, *, model: str | None = None, tools: Sequence[ToolSchema] = ()
    ) -> ModelRequest:
        """The request a loop would send now: the derived messages, for ``model``."""
        self._step()
        return ModelRequest(
            provider=provider.name,
            model=model or provider.model,
            messages=self.session.derive_messages(),
            tools=tools,
        )

    def answer(self, request: ModelRequest, chunks: Sequence[Chunk]) -> dict[str, Any]:
        """Log the answer streamed for ``request``; return its assistant message."""
        finish = chunks[-1]
        assert finish["type"] == "finish", finish
        usage = next((c["usage"] for c in chunks if c["type"] == "usage"), None)
        data = m.assistant(
            blocks_of(chunks),
            provider=request.provider,
            model=request.model,
            turn=self.turn,
            step=self.step,
            stream=record_stream((i, c) for i, c in enumerate(chunks)),
            usage=usage,
        )
        if "replayState" in finish:
            data["message"]["source"]["replayState"] = finish["replayState"]
        event = self.session.append("assistant/message", data, surface_op="append")
        for block in data["message"]["content"]:
            if block["type"] == "tool-call":
                call = self.session.append(
                    "tool/call",
                    {
                        "turn": self.turn,
                        "step": self.step,
                        "callId": block["id"],
                        "name": block["name"],
                        "arguments": block["arguments"],
                    },
                )
                self._calls[block["id"]] = call.seq
        message: dict[str, Any] = event.data["message"]
        return message

    def result(self, call_id: str, text: str, *, is_error: bool = False) -> None:
        """Log a tool's result for ``call_id``, citing its ``tool/call``."""
        self.session.append(
            "tool/result",
            m.tool_result(call_id, text, turn=self.turn, step=self.step, is_error=is_error or None),
            surface_op="append",
            source_event_seqs=[self._calls[call_id]],
        )

    def end_step(self) -> None:
        self.session.append("step/end", {"turn": self.turn, "step": self.step})
        self._step_closed = True

    def end_turn(self) -> None:
        if not self._step_closed:
            self.end_step()
        self.session.append("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})
