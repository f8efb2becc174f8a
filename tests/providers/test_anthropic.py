"""Anthropic with the real ``anthropic`` client against a fake Messages server.

The shared contract runs first (``TestAnthropicContract``); the tests after it are what only
the Messages API does: signed thinking echoed back to the same model only (the fake server
verifies signatures as the API does), redacted thinking, the system prompt, tool results merged
into one user turn, cache usage buckets, overload errors, refusals and the request parameters.
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from agentlog.loop import ModelRequest
from agentlog.providers import Anthropic, to_anthropic
from tests.providers.contract import MODEL, WEATHER, ProviderContract, request_for
from tests.providers.conversation import Conversation, blocks_of, collect
from tests.providers.fake_anthropic import FakeAnthropic
from tests.providers.fake_server import Answer, Failure, FakeServer, ToolCall, Usage


def claude(server: FakeServer, **options: Any) -> Anthropic:
    assert isinstance(server, FakeAnthropic)
    if "client" not in options:
        options.setdefault("base_url", server.url)
        options.setdefault("api_key", "sk-ant-test")
    return Anthropic(options.pop("model", MODEL), **options)


class TestAnthropicContract(ProviderContract):
    library = "anthropic"
    max_tokens_reason = "max_tokens"

    @pytest.fixture
    def server(self, anthropic_server: FakeAnthropic) -> FakeServer:
        return anthropic_server

    def make_provider(self, server: FakeServer, **options: Any) -> Anthropic:
        return claude(server, **options)

    def official_client(self, server: FakeServer, *, max_retries: int) -> Any:
        assert isinstance(server, FakeAnthropic)
        return anthropic.AsyncAnthropic(
            base_url=server.url, api_key="sk-ant-test", max_retries=max_retries
        )

    def converted(self, request: ModelRequest) -> Any:
        return to_anthropic(request.messages, model=request.model)

    def sent(self, body: dict[str, Any]) -> Any:
        return {"system": body.get("system"), "messages": body["messages"]}

    def context_overflow(self) -> Failure:
        return Failure(status=400, message="prompt is too long: 208310 tokens > 200000 maximum")


def thinking_round(server: FakeAnthropic) -> tuple[Conversation, Anthropic, dict[str, Any]]:
    """One answer with signed thinking and a tool call, logged, its tool answered."""
    server.script(
        Answer(reasoning=["The user wants ", "the weather."], signature="sig-weather-1",
               tool_calls=[ToolCall(id="toolu_1", name="weather", arguments='{"city": "Oslo"}')]),
    )  # fmt: skip
    provider = claude(server)
    conversation = Conversation(system="You are terse.")
    conversation.user("Weather in Oslo?")
    first = conversation.request(provider, tools=[WEATHER])
    chunks, error = collect(provider, first)
    assert error is None
    message = conversation.answer(first, chunks)
    conversation.result("toolu_1", "sunny")
    conversation.end_step()
    return conversation, provider, message


def test_thinking_is_a_reasoning_block_with_its_signature_in_the_envelope(
    anthropic_server: FakeAnthropic,
) -> None:
    _, _, message = thinking_round(anthropic_server)
    assert message["content"][0] == {"type": "reasoning", "text": "The user wants the weather."}
    state = message["source"]["replayState"]
    assert state["response"] == {
        "kind": "anthropic-messages",
        "version": 1,
        "model": MODEL,
        "responseId": "msg_fake",
        "responseModel": MODEL,
        "stopReason": "tool_use",
    }
    assert state["blocks"] == [
        {"type": "reasoning", "signature": "sig-weather-1"},
        {"type": "tool-call"},
    ]


def test_signed_thinking_is_echoed_back_to_the_same_model(anthropic_server: FakeAnthropic) -> None:
    """spec/plugins.md §5.5: the signature comes back verbatim; the API verifies it."""
    conversation, provider, _ = thinking_round(anthropic_server)
    anthropic_server.script(Answer(text="Sunny in Oslo."))
    _chunks, error = collect(provider, conversation.request(provider, tools=[WEATHER]))
    assert error is None
    sent = anthropic_server.bodies[1]
    assert sent["system"] == "You are terse."
    assert sent["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "The user wants the weather.",
             "signature": "sig-weather-1"},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
        ],
    }  # fmt: skip
    assert anthropic_server.requests[1].problems == []


def test_thinking_is_not_sent_to_another_model(anthropic_server: FakeAnthropic) -> None:
    conversation, _, _ = thinking_round(anthropic_server)
    anthropic_server.script(Answer(text="Sunny."))
    other = claude(anthropic_server, model="another-model")
    collect(other, conversation.request(other, tools=[WEATHER]))
    sent = anthropic_server.bodies[1]
    assert [b["type"] for b in sent["messages"][1]["content"]] == ["tool_use"]
    assert anthropic_server.requests[1].problems == []


def test_a_tampered_envelope_degrades_to_history_without_thinking(
    anthropic_server: FakeAnthropic,
) -> None:
    """An envelope that does not match its message is ignored, never sent half-valid."""
    anthropic_server.script(Answer(text="ok"))
    provider = claude(anthropic_server)
    message = {
        "id": "a1", "role": "assistant",
        "content": [{"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "Hi."}],
        "source": {"kind": "model", "provider": "anthropic", "model": MODEL,
                   "replayState": {"response": {"kind": "anthropic-messages", "version": 1,
                                                "model": MODEL},
                                   "blocks": [{"type": "reasoning", "signature": "s"}]}},
    }  # fmt: skip
    user = {"id": "u", "role": "user", "content": [{"type": "text", "text": "x"}],
            "source": {"kind": "user"}}  # fmt: skip
    collect(
        provider, ModelRequest(provider="anthropic", model=MODEL, messages=[user, message, user])
    )
    assert anthropic_server.bodies[0]["messages"][1]["content"] == [{"type": "text", "text": "Hi."}]


def test_redacted_thinking_round_trips_as_it_came(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.script(
        Answer(redacted_thinking="EnCrYpTeD", text="Done."), Answer(text="Again.")
    )
    provider = claude(anthropic_server)
    conversation = Conversation()
    conversation.user("hi")
    first = conversation.request(provider)
    chunks, _ = collect(provider, first)
    assert blocks_of(chunks)[0] == {"type": "reasoning", "text": ""}
    conversation.answer(first, chunks)
    conversation.end_turn()
    conversation.user("again")
    collect(provider, conversation.request(provider))
    assert anthropic_server.bodies[1]["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": "EnCrYpTeD"},
        {"type": "text", "text": "Done."},
    ]


def test_parallel_tool_results_travel_in_one_user_turn(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.script(
        Answer(tool_calls=[ToolCall(id="t1", name="weather"), ToolCall(id="t2", name="weather")]),
        Answer(text="Both done."),
    )
    provider = claude(anthropic_server)
    conversation = Conversation()
    conversation.user("Two cities")
    first = conversation.request(provider, tools=[WEATHER])
    conversation.answer(first, collect(provider, first)[0])
    conversation.result("t1", "sunny")
    conversation.result("t2", "no such city", is_error=True)
    conversation.end_step()
    collect(provider, conversation.request(provider, tools=[WEATHER]))
    assert anthropic_server.bodies[1]["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1",
             "content": [{"type": "text", "text": "sunny"}]},
            {"type": "tool_result", "tool_use_id": "t2",
             "content": [{"type": "text", "text": "no such city"}], "is_error": True},
        ],
    }  # fmt: skip
    assert [r.problems for r in anthropic_server.requests] == [[], []]


def test_cache_reads_and_writes_are_their_own_buckets(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.script(
        Answer(text="ok", usage=Usage(input=5, cache_read=900, cache_write=100, output=40))
    )
    provider = claude(anthropic_server)
    chunks, _ = collect(provider, request_for(provider))
    (usage,) = [c["usage"] for c in chunks if c["type"] == "usage"]
    assert usage == {
        "inputTokens": 5,
        "outputTokens": 40,
        "cacheReadTokens": 900,
        "cacheWriteTokens": 100,
        "totalTokens": 1045,
    }


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (Failure(status=529, message="Overloaded"), "SERVER"),
        (
            Answer(text="a", error=Failure(status=529, message="Overloaded"), error_after=4),
            "SERVER",
        ),
        (Answer(text="a", error=Failure(status=429, message="slow"), error_after=4), "RATE_LIMIT"),
        (
            Failure(status=413, message="Request exceeds the maximum size"),
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        (Failure(status=403, message="no access"), "AUTHENTICATION"),
    ],
    ids=["overloaded-529", "overloaded-event", "rate-limit-event", "too-large-413", "forbidden"],
)
def test_messages_api_failures_map_to_their_codes(
    anthropic_server: FakeAnthropic, reply: Answer | Failure, code: str
) -> None:
    anthropic_server.script(reply)
    provider = claude(anthropic_server)
    _, error = collect(provider, request_for(provider))
    assert error is not None
    assert error.code == code


def test_a_refusal_is_a_failure_not_a_short_answer(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.script(Answer(text="I can", finish="refusal"))
    provider = claude(anthropic_server)
    chunks, error = collect(provider, request_for(provider))
    assert error is not None
    assert error.code == "CONTENT_FILTER"
    assert not any(c["type"] == "finish" for c in chunks)


def test_the_request_carries_the_tools_limits_and_prompt_caching(
    anthropic_server: FakeAnthropic,
) -> None:
    anthropic_server.script(Answer(text="ok"), Answer(text="ok"))
    provider = claude(anthropic_server, max_tokens=1024)
    base = request_for(provider)
    limited = ModelRequest(
        provider="anthropic",
        model=MODEL,
        messages=base.messages,
        tools=[WEATHER],
        stop=["END"],
        reasoning_effort="high",
    )
    collect(provider, limited)
    collect(provider, ModelRequest(provider="anthropic", model=MODEL, messages=base.messages,
                                   max_tokens=99))  # fmt: skip
    first, second = anthropic_server.bodies
    assert first["tools"] == [
        {"name": "weather", "description": "The weather in a city.",
         "input_schema": WEATHER["parameters"]}
    ]  # fmt: skip
    assert (first["max_tokens"], first["stop_sequences"]) == (1024, ["END"])
    assert first["output_config"] == {"effort": "high"}
    assert first["cache_control"] == {"type": "ephemeral"}
    assert "system" not in first
    assert second["max_tokens"] == 99
