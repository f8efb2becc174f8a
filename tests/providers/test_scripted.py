"""The scripted provider streams its replies as a real provider would (spec/plugins.md §5.3)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentlog.loop import ModelRequest, ProviderError
from agentlog.providers import Scripted

REQUEST = ModelRequest(provider="scripted", model="scripted", messages=[])


def chunks(provider: Scripted, request: ModelRequest = REQUEST) -> list[dict[str, Any]]:
    async def collect() -> list[dict[str, Any]]:
        return [chunk async for chunk in provider.stream(request)]

    return asyncio.run(collect())


def test_a_text_reply_streams_word_by_word_between_block_start_and_end() -> None:
    assert chunks(Scripted(["Hello there."])) == [
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": "Hello "},
        {"type": "text-delta", "index": 0, "text": "there."},
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": "Hello there."}},
        {"type": "finish", "reason": {"kind": "stop"}},
    ]


def test_a_call_gets_an_id_and_finishes_with_tool_calls() -> None:
    provider = Scripted([[Scripted.reasoning("Hm."), Scripted.call("f", {"a": 1})]])
    out = chunks(provider)
    delta = out[4]
    assert delta == {
        "type": "tool-call-delta", "index": 1, "id": "call_1", "name": "f",
        "argumentsDelta": '{"a":1}',
    }  # fmt: skip
    assert out[0]["blockType"] == "reasoning"
    assert out[-1] == {"type": "finish", "reason": {"kind": "tool-calls"}}


def test_a_reply_can_set_finish_usage_and_replay_state() -> None:
    reply = Scripted.reply("x", finish="max-tokens", usage={"inputTokens": 1, "outputTokens": 1},
                           replay_state={"response": {}})  # fmt: skip
    out = chunks(Scripted([reply]))
    assert out[-2] == {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 1}}
    assert out[-1] == {
        "type": "finish", "reason": {"kind": "max-tokens"}, "replayState": {"response": {}},
    }  # fmt: skip


def test_replies_are_taken_in_order_and_requests_kept() -> None:
    provider = Scripted(["one", "two"])
    chunks(provider)
    chunks(provider)
    assert len(provider.requests) == 2
    with pytest.raises(ProviderError, match="no reply left for request 3 \\(the script has 2\\)"):
        chunks(provider)


def test_an_exception_is_raised_and_a_function_answers_each_request() -> None:
    with pytest.raises(ProviderError, match="down"):
        chunks(Scripted([ProviderError.of("down", "SERVER")]))

    async def answer(request: ModelRequest) -> str:
        return f"{len(request.messages)} messages"

    assert chunks(Scripted(answer))[1]["text"] == "0 "


def test_a_single_string_is_one_reply() -> None:
    assert chunks(Scripted("hi"))[1]["text"] == "hi"


def test_raw_chunks_pass_through() -> None:
    async def raw() -> Any:
        yield {"type": "finish", "reason": {"kind": "stop"}}

    assert chunks(Scripted([raw()])) == [{"type": "finish", "reason": {"kind": "stop"}}]


def test_a_block_must_be_text_or_a_content_block() -> None:
    with pytest.raises(TypeError, match="not a scripted reply"):
        chunks(Scripted([3]))
