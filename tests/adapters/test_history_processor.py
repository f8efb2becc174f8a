"""The compaction history processor: unchanged below the threshold, cited summary above it."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from agentlog import ExtractiveSummarizer
from agentlog.adapters.pydantic_ai import compaction_processor
from agentlog.plugins import Summary, SummaryRequest
from tests.adapters.test_pydantic_ai import pairing_problems


def long_history(turns: int) -> list[ModelMessage]:
    messages: list[ModelMessage] = []
    for n in range(turns):
        messages.append(ModelRequest(parts=[UserPromptPart(f"task {n} " + "word " * 120)]))
        messages.append(ModelResponse(parts=[ToolCallPart("bash", {"n": n}, tool_call_id=f"c{n}")]))
        messages.append(
            ModelRequest(parts=[ToolReturnPart("bash", "out " * 100, tool_call_id=f"c{n}")])
        )
        messages.append(ModelResponse(parts=[TextPart(f"done {n} " + "text " * 60)]))
    return messages


def test_a_short_history_goes_out_unchanged() -> None:
    messages = long_history(1)
    process = compaction_processor(ExtractiveSummarizer(), context_window=100_000)
    assert asyncio.run(process(messages)) is messages


def test_a_long_history_is_summarized_and_the_kept_messages_are_the_same_objects() -> None:
    messages = long_history(8)
    process = compaction_processor(ExtractiveSummarizer(), context_window=2000)
    result = asyncio.run(process(messages))
    summary, kept = result[0], result[1:]
    assert summary.parts[0].part_kind == "compaction"
    replaced = summary.parts[0].metadata["agentlog"]["replacedMessages"]
    assert replaced == list(range(len(messages) - len(kept)))
    assert all(a is b for a, b in zip(kept, messages[len(replaced) :], strict=True))
    assert pairing_problems(result) == []


class Broken:
    async def __call__(self, request: SummaryRequest) -> Summary:
        raise RuntimeError("the summary model is down")


def test_a_failed_compaction_sends_the_full_history(caplog: Any) -> None:
    messages = long_history(8)
    process = compaction_processor(Broken(), context_window=2000)
    assert asyncio.run(process(messages)) is messages
    assert "history compaction failed" in caplog.text
