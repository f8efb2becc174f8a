"""Summarizers for tests: scripted answers, failures, and a pause to change things meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agentlog.plugins import Summary, SummaryRequest


class Scripted:
    """Answers with ``text`` (or raises ``error``), after running ``meanwhile`` if given.

    ``meanwhile`` runs while the compaction awaits the summary — the moment another task could
    append to the session.
    """

    def __init__(
        self,
        text: str = "## Current Work\n- compacted",
        *,
        error: BaseException | None = None,
        meanwhile: Callable[[], Any] | None = None,
        output: list[dict[str, Any]] | None = None,
    ) -> None:
        self.text = text
        self.error = error
        self.meanwhile = meanwhile
        self.output = output
        self.requests: list[SummaryRequest] = []

    async def __call__(self, request: SummaryRequest) -> Summary:
        self.requests.append(request)
        await asyncio.sleep(0)
        if self.meanwhile is not None:
            self.meanwhile()
        if self.error is not None:
            raise self.error
        return Summary(
            output=self.output or [{"type": "text", "text": self.text}],
            provider="p",
            model="summarizer",
            max_tokens=request.max_tokens,
            usage={"inputTokens": 10, "outputTokens": 5},
            llm_stream_call=True,
        )


class Hanging:
    """Never answers: the compaction waits until its task is cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def __call__(self, request: SummaryRequest) -> Summary:
        self.started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")
