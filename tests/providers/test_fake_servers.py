"""The fake model servers speak the real wire formats: the official clients' own stream
accumulators parse what they send into the messages a real API would have returned.

These tests do not touch agentlog's providers, so a wire-format mistake in a fake cannot hide
behind a matching mistake in a provider.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anthropic
import openai

from tests.providers.fake_anthropic import FakeAnthropic
from tests.providers.fake_openai import FakeOpenAI
from tests.providers.fake_server import Answer, Failure, ToolCall, Usage


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 20))


def test_openais_accumulator_assembles_the_fake_chat_stream(openai_server: FakeOpenAI) -> None:
    openai_server.script(
        Answer(text=["Let me ", "check."], usage=Usage(input=10, cache_read=5, output=3),
               tool_calls=[ToolCall(id="call_1", name="ls", arguments=['{"pa', 'th": "."}'])])
    )  # fmt: skip
    client = openai.AsyncOpenAI(base_url=openai_server.url, api_key="k", max_retries=0)

    async def final() -> Any:
        async with client.chat.completions.stream(
            model="gpt-test",
            messages=[{"role": "user", "content": "hi"}],
            stream_options={"include_usage": True},
        ) as stream:
            return await stream.get_final_completion()

    completion = run(final())
    message = completion.choices[0].message
    assert message.content == "Let me check."
    assert message.tool_calls is not None
    assert [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls] == [
        ("call_1", "ls", '{"path": "."}')
    ]
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (15, 3)
    assert completion.model == "gpt-test"


def test_anthropics_accumulator_assembles_the_fake_messages_stream(
    anthropic_server: FakeAnthropic,
) -> None:
    anthropic_server.script(
        Answer(reasoning=["Hmm, ", "files."], signature="sig-1", text="Listing.",
               tool_calls=[ToolCall(id="toolu_1", name="ls", arguments=['{"pa', 'th": "."}'])],
               usage=Usage(input=10, cache_read=20, cache_write=30, output=4))
    )  # fmt: skip
    client = anthropic.AsyncAnthropic(base_url=anthropic_server.url, api_key="k", max_retries=0)

    async def final() -> Any:
        async with client.messages.stream(
            model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            return await stream.get_final_message()

    message = run(final())
    thinking, text, tool_use = message.content
    assert (thinking.type, thinking.thinking, thinking.signature) == (
        "thinking",
        "Hmm, files.",
        "sig-1",
    )
    assert (text.type, text.text) == ("text", "Listing.")
    assert (tool_use.type, tool_use.id, tool_use.name, tool_use.input) == (
        "tool_use", "toolu_1", "ls", {"path": "."}
    )  # fmt: skip
    assert message.stop_reason == "tool_use"
    usage = message.usage
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens,
            usage.output_tokens) == (10, 20, 30, 4)  # fmt: skip


def test_an_error_response_is_the_clients_status_error(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.script(Failure(status=529, message="Overloaded"))
    client = anthropic.AsyncAnthropic(base_url=anthropic_server.url, api_key="k", max_retries=0)

    async def call() -> Exception:
        try:
            await client.messages.create(
                model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
        except anthropic.APIStatusError as error:
            return error
        raise AssertionError("expected an error")

    error = run(call())
    assert isinstance(error, anthropic.APIStatusError)
    assert error.status_code == 529
    assert error.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_an_invalid_request_is_refused_and_its_problems_kept(openai_server: FakeOpenAI) -> None:
    client = openai.AsyncOpenAI(base_url=openai_server.url, api_key="k", max_retries=0)
    unanswered = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "user", "content": "well?"},
    ]  # fmt: skip

    async def call() -> None:
        try:
            await client.chat.completions.create(model="m", messages=unanswered)  # type: ignore[arg-type]  # deliberately invalid
        except openai.BadRequestError:
            return
        raise AssertionError("expected a 400")

    run(call())
    (problem,) = openai_server.requests[0].problems
    assert "must be followed by tool messages" in problem
    assert openai_server.pending == 0  # nothing of the script was spent on it


def test_a_test_can_wait_for_a_request_to_arrive(openai_server: FakeOpenAI) -> None:
    openai_server.script(Answer(text="slow", hold_after=2))
    client = openai.AsyncOpenAI(base_url=openai_server.url, api_key="k", max_retries=0)

    async def call() -> None:
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        try:
            async for _ in stream:
                pass
        except openai.APIConnectionError:
            pass  # the server is closed under it: the stream never finishes

    thread = threading.Thread(target=lambda: asyncio.run(call()), daemon=True)
    thread.start()
    openai_server.wait_for_requests(1)
    assert openai_server.requests[0].body["messages"] == [{"role": "user", "content": "hi"}]
    openai_server.close()
    thread.join(10)
    assert not thread.is_alive()
