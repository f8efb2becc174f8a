"""OpenAIChat with the real ``openai`` client against a fake Chat Completions server.

The shared contract runs first (``TestOpenAIChatContract``); the tests after it are what only
Chat Completions servers do: DeepSeek's ``reasoning_content`` (captured, and sent back to the
same model only), fragment quirks of compatible servers, DeepSeek's usage fields, and the
request parameters.
"""

from __future__ import annotations

from typing import Any

import openai
import pytest

from agentlog.loop import ModelRequest
from agentlog.providers import OpenAIChat, to_chat_completions
from tests.providers.contract import MODEL, WEATHER, ProviderContract, kinds, request_for
from tests.providers.conversation import Conversation, blocks_of, collect
from tests.providers.fake_openai import FakeOpenAI, chat_chunk
from tests.providers.fake_server import Answer, Failure, FakeServer, ToolCall, sse


def chat(server: FakeServer, **options: Any) -> OpenAIChat:
    assert isinstance(server, FakeOpenAI)
    if "client" not in options:
        options.setdefault("base_url", server.url)
        options.setdefault("api_key", "sk-test")
    return OpenAIChat(options.pop("model", MODEL), **options)


class TestOpenAIChatContract(ProviderContract):
    library = "openai"
    max_tokens_reason = "length"

    @pytest.fixture
    def server(self, openai_server: FakeOpenAI) -> FakeServer:
        return openai_server

    def make_provider(self, server: FakeServer, **options: Any) -> OpenAIChat:
        return chat(server, **options)

    def official_client(self, server: FakeServer, *, max_retries: int) -> Any:
        assert isinstance(server, FakeOpenAI)
        return openai.AsyncOpenAI(base_url=server.url, api_key="sk-test", max_retries=max_retries)

    def converted(self, request: ModelRequest) -> Any:
        return to_chat_completions(request.messages, model=request.model)

    def sent(self, body: dict[str, Any]) -> Any:
        return body["messages"]

    def context_overflow(self) -> Failure:
        return Failure(
            status=400,
            message="This model's maximum context length is 65536 tokens. However, you "
            "requested 70000 tokens. Please reduce the length of the messages.",
            code="context_length_exceeded",
        )


def test_deepseek_reasoning_content_becomes_a_reasoning_block(openai_server: FakeOpenAI) -> None:
    openai_server.script(Answer(reasoning=["The user ", "greets."], text="Hello!"))
    provider = chat(openai_server, provider="deepseek", model="deepseek-reasoner")
    chunks, error = collect(provider, request_for(provider))
    assert error is None
    assert blocks_of(chunks) == [
        {"type": "reasoning", "text": "The user greets."},
        {"type": "text", "text": "Hello!"},
    ]
    assert [c["text"] for c in chunks if c["type"] == "reasoning-delta"] == ["The user ", "greets."]
    assert "replayState" not in chunks[-1]  # Chat Completions has no envelope (§5.5)


def test_reasoning_content_is_sent_back_to_the_same_model_only(openai_server: FakeOpenAI) -> None:
    """spec/plugins.md §5.5: reasoning text is re-sent as reasoning_content, to its model."""
    openai_server.script(
        Answer(reasoning="Need the weather.", tool_calls=[ToolCall(id="c1", name="weather")]),
        Answer(text="Sunny."),
        Answer(text="Still sunny."),
    )
    reasoner = chat(openai_server, provider="deepseek", model="deepseek-reasoner")
    conversation = Conversation()
    conversation.user("Weather?")
    first = conversation.request(reasoner, tools=[WEATHER])
    chunks, _ = collect(reasoner, first)
    conversation.answer(first, chunks)
    conversation.result("c1", "sunny")
    conversation.end_step()

    same = conversation.request(reasoner, tools=[WEATHER])
    collect(reasoner, same)
    other = chat(openai_server, provider="deepseek", model="deepseek-chat")
    collect(other, conversation.request(other, tools=[WEATHER]))

    to_same, to_other = openai_server.bodies[1]["messages"], openai_server.bodies[2]["messages"]
    assert to_same[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
        ],
        "reasoning_content": "Need the weather.",
    }
    assert "reasoning_content" not in to_other[1]
    assert [r.problems for r in openai_server.requests] == [[], [], []]


def test_tool_call_fragments_are_keyed_by_index_even_when_interleaved(
    openai_server: FakeOpenAI,
) -> None:
    """Some servers interleave the fragments of parallel calls; the index keys them."""

    def call(index: int, **fields: Any) -> bytes:
        return chat_chunk({"tool_calls": [{"index": index, **fields}]})

    openai_server.script(
        Answer(
            raw_events=[
                chat_chunk({"role": "assistant", "content": None}),
                call(0, id="a", type="function", function={"name": "f", "arguments": ""}),
                call(1, id="b", type="function", function={"name": "g", "arguments": '{"y"'}),
                call(0, function={"arguments": '{"x"'}),
                call(1, function={"arguments": ":2}"}),
                call(0, function={"arguments": ":1}"}),
                chat_chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        )
    )
    provider = chat(openai_server)
    chunks, error = collect(provider, request_for(provider))
    assert error is None
    assert blocks_of(chunks) == [
        {"type": "tool-call", "id": "a", "name": "f", "arguments": '{"x":1}'},
        {"type": "tool-call", "id": "b", "name": "g", "arguments": '{"y":2}'},
    ]
    assert "usage" not in kinds(chunks)  # a server that sends no usage: none is made up


def test_a_tool_call_without_an_id_gets_one(openai_server: FakeOpenAI) -> None:
    openai_server.script(
        Answer(
            raw_events=[
                chat_chunk(
                    {"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{}"}}]}
                ),
                chat_chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        )
    )
    provider = chat(openai_server, provider="ollama")
    chunks, _ = collect(provider, request_for(provider))
    (block,) = blocks_of(chunks)
    assert block["id"].startswith("call_")
    assert block["name"] == "f"


def test_a_server_that_sends_tool_calls_with_finish_stop_still_finishes_tool_calls(
    openai_server: FakeOpenAI,
) -> None:
    openai_server.script(Answer(tool_calls=[ToolCall(id="c1", name="weather")], finish="stop"))
    provider = chat(openai_server, provider="ollama")
    chunks, _ = collect(provider, request_for(provider))
    assert chunks[-1]["reason"] == {"kind": "tool-calls"}


def test_a_content_filter_stop_is_a_failure_not_a_short_answer(openai_server: FakeOpenAI) -> None:
    openai_server.script(Answer(text="I can", finish="content_filter"))
    provider = chat(openai_server)
    chunks, error = collect(provider, request_for(provider))
    assert error is not None
    assert error.code == "CONTENT_FILTER"
    assert not any(c["type"] == "finish" for c in chunks)


def test_deepseek_cache_hits_and_openai_reasoning_tokens_are_their_own_buckets(
    openai_server: FakeOpenAI,
) -> None:
    openai_server.script(
        Answer(text="ok", raw_usage={"prompt_tokens": 1000, "completion_tokens": 300,
                                     "total_tokens": 1300, "prompt_cache_hit_tokens": 800,
                                     "prompt_cache_miss_tokens": 200,
                                     "completion_tokens_details": {"reasoning_tokens": 250}}),
    )  # fmt: skip
    provider = chat(openai_server, provider="deepseek")
    chunks, _ = collect(provider, request_for(provider))
    (usage,) = [c["usage"] for c in chunks if c["type"] == "usage"]
    assert usage == {
        "inputTokens": 200,
        "cacheReadTokens": 800,
        "outputTokens": 50,
        "reasoningTokens": 250,
        "totalTokens": 1300,
    }


def test_the_request_asks_for_usage_and_names_its_tools(openai_server: FakeOpenAI) -> None:
    openai_server.script(Answer(text="ok"))
    provider = chat(openai_server)
    conversation = Conversation()
    conversation.user("hi")
    base = conversation.request(provider, tools=[WEATHER])
    request = ModelRequest(
        provider=base.provider,
        model=base.model,
        messages=base.messages,
        tools=base.tools,
        max_tokens=500,
        stop=["END"],
        reasoning_effort="low",
    )
    collect(provider, request)
    body = openai_server.bodies[0]
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "description": "The weather in a city.",
                "parameters": WEATHER["parameters"],
            },
        }
    ]
    assert (body["max_completion_tokens"], body["stop"], body["reasoning_effort"]) == (
        500,
        ["END"],
        "low",
    )
    assert body == provider.request_body(request)


def test_compatible_servers_get_max_tokens(openai_server: FakeOpenAI) -> None:
    """OpenAI's own API renamed the limit; DeepSeek, vLLM and Ollama still read max_tokens."""
    openai_server.script(Answer(text="ok"))
    provider = chat(openai_server, provider="deepseek")
    base = request_for(provider)
    collect(
        provider,
        ModelRequest(provider="deepseek", model=MODEL, messages=base.messages, max_tokens=64),
    )
    assert openai_server.bodies[0]["max_tokens"] == 64
    assert "max_completion_tokens" not in openai_server.bodies[0]


def test_a_retry_after_ms_header_is_read_to_the_millisecond(openai_server: FakeOpenAI) -> None:
    openai_server.script(Failure(status=429, headers={"retry-after-ms": "1250"}))
    provider = chat(openai_server)
    _, error = collect(provider, request_for(provider))
    assert error is not None
    assert error.failure is not None
    assert error.failure["providerRetryAfterMs"] == 1250
