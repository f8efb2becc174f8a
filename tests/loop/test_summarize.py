"""Compaction summaries written by the agent's own provider (one ``purpose: compaction`` call)."""

from __future__ import annotations

import asyncio

import pytest

from agentlog import CompactionError
from agentlog.loop import ModelRequest, ProviderError
from agentlog.loop.summarize import ProviderSummarizer
from agentlog.plugins import SummaryRequest
from agentlog.providers import Scripted

REQUEST = SummaryRequest(
    session_id="s",
    messages=[{"id": "u", "role": "user", "content": [], "source": {"kind": "user"}}],
    tools=[{"name": "t", "description": "", "parameters": {}}],
    provider="scripted",
    model="big",
    max_tokens=500,
)


def test_the_summary_is_one_compaction_call_with_the_requests_messages() -> None:
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> object:
        seen.append(request)
        return Scripted.reply("## Summary", usage={"inputTokens": 9, "outputTokens": 2})

    summary = asyncio.run(ProviderSummarizer(Scripted(model))(REQUEST))
    (call,) = seen
    assert (call.purpose, call.model, call.max_tokens, call.session_id) == (
        "compaction", "big", 500, "s",
    )  # fmt: skip
    assert list(call.messages) == list(REQUEST.messages)
    assert list(call.tools) == list(REQUEST.tools)
    assert summary.output == [{"type": "text", "text": "## Summary"}]
    assert (summary.provider, summary.model, summary.llm_stream_call) == ("scripted", "big", True)
    assert summary.usage == {"inputTokens": 9, "outputTokens": 2}


def test_a_failed_or_cut_summary_is_a_compaction_error() -> None:
    with pytest.raises(CompactionError, match="summarization failed: down"):
        asyncio.run(ProviderSummarizer(Scripted([ProviderError.of("down", "SERVER")]))(REQUEST))
    cut = Scripted([Scripted.reply("## Summ", finish="max-tokens")])
    with pytest.raises(CompactionError, match="truncated at the token cap"):
        asyncio.run(ProviderSummarizer(cut)(REQUEST))
