"""The provider contract: what every HTTP provider does, whatever API it speaks (STYLE.md 20).

``ProviderContract`` drives a real provider with its real official client against the fake
server of its API, at the provider level (``provider.stream(request)`` consumed directly), and
states the behaviour ``agentlog.loop.model`` requires of every provider: the chunk grammar,
tool calls, usage, the failure codes of spec/plugins.md §5.3, streams cut short, cancellation,
retries left to the loop, and a request that is exactly the message adapter's conversion. A
provider is done when a subclass (one per provider module) passes it.
"""

from __future__ import annotations

import asyncio
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import pytest

from agentlog.loop import DEFAULT_RETRY_POLICY, ModelRequest, ToolSchema
from agentlog.providers._official import ClientProvider
from tests.providers.conversation import Conversation, blocks_of, collect, run
from tests.providers.fake_server import Answer, Failure, FakeServer, ToolCall, Usage

MODEL = "model-under-test"

WEATHER: ToolSchema = {
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def request_for(provider: ClientProvider, text: str = "Hi") -> ModelRequest:
    conversation = Conversation()
    conversation.user(text)
    return conversation.request(provider)


def kinds(chunks: Sequence[dict[str, Any]]) -> list[str]:
    return [str(chunk["type"]) for chunk in chunks]


class ProviderContract(ABC):
    """Subclass once per provider; provide the server fixture and the hooks below."""

    library: str
    """The official client's package (and the extra that installs it)."""

    @pytest.fixture
    @abstractmethod
    def server(self) -> FakeServer:
        """A running fake server of the provider's API."""

    @abstractmethod
    def make_provider(self, server: FakeServer, **options: Any) -> ClientProvider:
        """The provider under test, talking to ``server``."""

    @abstractmethod
    def official_client(self, server: FakeServer, *, max_retries: int) -> Any:
        """An official async client for ``server`` with the given retries."""

    @abstractmethod
    def converted(self, request: ModelRequest) -> Any:
        """What the adapter makes of ``request.messages`` for ``request.model``."""

    @abstractmethod
    def sent(self, body: dict[str, Any]) -> Any:
        """The part of a received body that ``converted`` produces."""

    @abstractmethod
    def context_overflow(self) -> Failure:
        """The API's answer to a prompt longer than the context window."""

    max_tokens_reason: str
    """The wire finish / stop reason of an answer cut by the token limit."""

    # --- the chunk grammar ----------------------------------------------------------------

    def test_a_text_answer_is_one_block_then_usage_then_finish(self, server: FakeServer) -> None:
        server.script(Answer(text=["Hel", "lo", "!"]))
        chunks, error = collect(self.make_provider(server), request_for(self.make_provider(server)))
        assert error is None
        assert kinds(chunks) == [
            "block-start", "text-delta", "text-delta", "text-delta", "block-end", "usage", "finish"
        ]  # fmt: skip
        assert chunks[0] == {"type": "block-start", "index": 0, "blockType": "text"}
        assert [c["text"] for c in chunks if c["type"] == "text-delta"] == ["Hel", "lo", "!"]
        assert blocks_of(chunks) == [{"type": "text", "text": "Hello!"}]
        assert chunks[-1]["reason"] == {"kind": "stop"}

    def test_parallel_tool_calls_are_assembled_from_their_fragments(
        self, server: FakeServer
    ) -> None:
        server.script(
            Answer(
                text="Checking both.",
                tool_calls=[
                    ToolCall(id="call_a", name="weather", arguments=['{"ci', 'ty": "Oslo"}']),
                    ToolCall(id="call_b", name="weather", arguments=['{"city"', ': "Lima"}']),
                ],
            )
        )
        provider = self.make_provider(server)
        chunks, error = collect(provider, request_for(provider))
        assert error is None
        assert blocks_of(chunks) == [
            {"type": "text", "text": "Checking both."},
            {"type": "tool-call", "id": "call_a", "name": "weather",
             "arguments": '{"city": "Oslo"}'},
            {"type": "tool-call", "id": "call_b", "name": "weather",
             "arguments": '{"city": "Lima"}'},
        ]  # fmt: skip
        for index, call_id in ((1, "call_a"), (2, "call_b")):
            deltas = [c for c in chunks if c["type"] == "tool-call-delta" and c["index"] == index]
            assert {d["id"] for d in deltas} == {call_id}
            assert deltas[0]["name"] == "weather"
            assert (
                "".join(str(d["argumentsDelta"]) for d in deltas)
                == blocks_of(chunks)[index]["arguments"]
            )
        assert chunks[-1]["reason"] == {"kind": "tool-calls"}

    def test_every_block_starts_before_its_deltas_and_ends_before_the_finish(
        self, server: FakeServer
    ) -> None:
        server.script(
            Answer(reasoning=["Let me ", "think."], text=["Sure", "."],
                   tool_calls=[ToolCall(id="c1", name="weather", arguments='{"city": "Rome"}')])
        )  # fmt: skip
        provider = self.make_provider(server)
        chunks, error = collect(provider, request_for(provider))
        assert error is None
        started: set[Any] = set()
        ended: set[Any] = set()
        for chunk in chunks[:-1]:
            if chunk["type"] == "block-start":
                assert chunk["index"] == len(started)  # 0-based, in first-seen order
                started.add(chunk["index"])
            elif chunk["type"] == "block-end":
                ended.add(chunk["index"])
            elif chunk["type"] != "usage":
                assert chunk["index"] in started
                assert chunk["index"] not in ended
        assert started == ended == {0, 1, 2}
        assert kinds(chunks).count("usage") == 1
        assert kinds(chunks)[-2:] == ["usage", "finish"]
        assert [b["type"] for b in blocks_of(chunks)] == ["reasoning", "text", "tool-call"]

    def test_an_answer_cut_by_the_token_limit_finishes_max_tokens(self, server: FakeServer) -> None:
        server.script(Answer(text="The answer is", finish=self.max_tokens_reason))
        provider = self.make_provider(server)
        chunks, error = collect(provider, request_for(provider))
        assert error is None
        assert chunks[-1]["reason"] == {"kind": "max-tokens"}

    def test_an_answer_with_nothing_in_it_is_an_empty_response(self, server: FakeServer) -> None:
        server.script(Answer())
        provider = self.make_provider(server)
        _, error = collect(provider, request_for(provider))
        assert error is not None
        assert error.code == "EMPTY_RESPONSE"

    def test_usage_buckets_are_disjoint_and_add_up_to_the_total(self, server: FakeServer) -> None:
        server.script(Answer(text="ok", usage=Usage(input=100, cache_read=400, output=30)))
        provider = self.make_provider(server)
        chunks, _ = collect(provider, request_for(provider))
        (usage,) = [c["usage"] for c in chunks if c["type"] == "usage"]
        assert isinstance(usage, dict)
        assert usage["inputTokens"] == 100
        assert usage["cacheReadTokens"] == 400
        assert usage["outputTokens"] == 30
        buckets = ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens",
                   "reasoningTokens")  # fmt: skip
        assert sum(int(usage.get(key, 0)) for key in buckets) == usage["totalTokens"] == 530

    # --- the request ----------------------------------------------------------------------

    def test_the_request_sent_is_valid_and_is_the_adapters_conversion(
        self, server: FakeServer
    ) -> None:
        """spec/plugins.md §4.4: a request's messages are the derived messages, converted."""
        server.script(
            Answer(tool_calls=[ToolCall(id="c1", name="weather", arguments='{"city": "Oslo"}'),
                               ToolCall(id="c2", name="weather", arguments='{"city": "?"}')]),
            Answer(text="Oslo is sunny."),
        )  # fmt: skip
        provider = self.make_provider(server)
        conversation = Conversation(system="You are terse.")
        conversation.user("Weather in Oslo?")
        first = conversation.request(provider, tools=[WEATHER])
        chunks, error = collect(provider, first)
        assert error is None
        conversation.answer(first, chunks)
        conversation.result("c1", "sunny, 21 °C")
        conversation.result("c2", "unknown city '?'", is_error=True)
        conversation.end_step()
        second = conversation.request(provider, tools=[WEATHER])
        chunks, error = collect(provider, second)
        assert error is None
        assert [r.problems for r in server.requests] == [[], []]
        assert [self.sent(body) for body in server.bodies] == [
            self.converted(first),
            self.converted(second),
        ]
        assert all(body["stream"] is True and body["model"] == MODEL for body in server.bodies)

    def test_options_travel_in_the_body_unchanged(self, server: FakeServer) -> None:
        server.script(Answer(text="ok"))
        provider = self.make_provider(server)
        base = request_for(provider)
        request = ModelRequest(
            provider=base.provider,
            model=base.model,
            messages=base.messages,
            temperature=0.25,
            options={"metadata_for_test": {"tag": "x"}},
        )
        collect(provider, request)
        assert server.bodies[0]["metadata_for_test"] == {"tag": "x"}
        assert server.bodies[0]["temperature"] == 0.25

    # --- failures (spec/plugins.md §5.3) --------------------------------------------------

    def failure_of(self, server: FakeServer, reply: Answer | Failure) -> Any:
        server.script(reply)
        provider = self.make_provider(server)
        chunks, error = collect(provider, request_for(provider))
        assert error is not None, chunks
        assert not any(c["type"] == "finish" for c in chunks)
        return error

    def test_a_server_error_is_SERVER_with_its_status(self, server: FakeServer) -> None:
        error = self.failure_of(server, Failure(status=500, message="boom"))
        assert error.failure == {
            "message": "boom", "code": "SERVER", "status": 500, "requestId": "req_fake"
        }  # fmt: skip
        assert len(server.requests) == 1, "the official client must not retry on its own"

    def test_a_rate_limit_carries_the_providers_retry_after(self, server: FakeServer) -> None:
        error = self.failure_of(
            server, Failure(status=429, message="slow down", headers={"Retry-After": "3"})
        )
        assert error.code == "RATE_LIMIT"
        assert error.failure["status"] == 429
        assert error.failure["providerRetryAfterMs"] == 3000
        assert len(server.requests) == 1

    def test_a_prompt_beyond_the_context_window_is_CONTEXT_WINDOW_EXCEEDED(
        self, server: FakeServer
    ) -> None:
        error = self.failure_of(server, self.context_overflow())
        assert error.code == "CONTEXT_WINDOW_EXCEEDED"
        assert error.failure["status"] == 400

    def test_a_refused_key_is_AUTHENTICATION(self, server: FakeServer) -> None:
        error = self.failure_of(server, Failure(status=401, message="invalid x-api-key"))
        assert (error.code, error.failure["status"]) == ("AUTHENTICATION", 401)

    def test_any_other_refused_request_is_BAD_REQUEST(self, server: FakeServer) -> None:
        error = self.failure_of(server, Failure(status=400, message="temperature: out of range"))
        assert error.code == "BAD_REQUEST"
        assert error.code not in DEFAULT_RETRY_POLICY.retryable_codes

    def test_an_error_event_inside_the_stream_is_a_failure(self, server: FakeServer) -> None:
        error = self.failure_of(
            server,
            Answer(text=["a", "b"], error=Failure(status=500, message="Overloaded"), error_after=4),
        )
        assert error.code == "SERVER"
        assert error.failure["message"] == "Overloaded"

    def test_a_stream_dropped_mid_answer_is_TRANSPORT_never_a_short_answer(
        self, server: FakeServer
    ) -> None:
        error = self.failure_of(server, Answer(text=["Once ", "upon ", "a time"], drop_after=4))
        assert error.code == "TRANSPORT"

    def test_a_stream_that_ends_cleanly_before_the_finish_is_TRANSPORT(
        self, server: FakeServer
    ) -> None:
        error = self.failure_of(server, Answer(text=["Once ", "upon ", "a time"], end_after=4))
        assert error.code == "TRANSPORT"
        assert "ended before" in str(error)

    def test_a_refused_connection_is_TRANSPORT(self, server: FakeServer) -> None:
        provider = self.make_provider(server)
        request = request_for(provider)
        server.close()
        _, error = collect(provider, request)
        assert error is not None
        assert error.code == "TRANSPORT"

    # --- cancellation ---------------------------------------------------------------------

    def test_cancelling_mid_stream_closes_the_http_connection(self, server: FakeServer) -> None:
        server.script(Answer(text=["partial ", "answer"], hold_after=4))
        provider = self.make_provider(server)
        request = request_for(provider)

        async def cancel_after_first_text() -> None:
            seen = asyncio.Event()

            async def consume() -> None:
                async for chunk in provider.stream(request):
                    if chunk["type"] == "text-delta":
                        seen.set()

            task = asyncio.create_task(consume())
            await seen.wait()
            assert not server.requests[0].disconnected.is_set()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # Still inside the event loop: the connection is closed by the cancellation itself,
            # not by the loop's shutdown.
            hung_up = await asyncio.to_thread(server.requests[0].disconnected.wait, 5)
            assert hung_up, "the server never saw the client go"

        run(cancel_after_first_text())

    def test_abandoning_the_stream_closes_the_http_connection(self, server: FakeServer) -> None:
        server.script(Answer(text=["partial ", "answer"], hold_after=4))
        provider = self.make_provider(server)
        request = request_for(provider)

        async def read_one_then_close() -> None:
            stream = provider.stream(request)
            async for chunk in stream:
                if chunk["type"] == "text-delta":
                    break
            await stream.aclose()  # type: ignore[attr-defined]  # an async generator
            assert await asyncio.to_thread(server.requests[0].disconnected.wait, 5)

        run(read_one_then_close())

    # --- the client -----------------------------------------------------------------------

    def test_the_providers_own_client_has_its_retries_off(self, server: FakeServer) -> None:
        assert self.make_provider(server).client.max_retries == 0

    def test_a_client_passed_in_is_used_as_given(self, server: FakeServer) -> None:
        server.script(Failure(status=500), Answer(text="second time lucky"))
        client = self.official_client(server, max_retries=1)
        provider = self.make_provider(server, client=client)
        assert provider.client is client
        chunks, error = collect(provider, request_for(provider))
        assert error is None
        assert blocks_of(chunks) == [{"type": "text", "text": "second time lucky"}]
        assert len(server.requests) == 2  # the given client retried, as it was configured to

    def test_a_client_and_connection_settings_together_are_refused(
        self, server: FakeServer
    ) -> None:
        client = self.official_client(server, max_retries=0)
        with pytest.raises(ValueError, match="pass base_url and api_key to the client"):
            self.make_provider(server, client=client, api_key="k")

    def test_one_provider_serves_successive_event_loops(self, server: FakeServer) -> None:
        server.script(Answer(text="one"), Answer(text="two"))
        provider = self.make_provider(server)
        texts = [blocks_of(collect(provider, request_for(provider))[0]) for _ in range(2)]
        assert texts == [[{"type": "text", "text": "one"}], [{"type": "text", "text": "two"}]]

    def test_a_missing_client_library_names_the_extra(
        self, server: FakeServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setitem(sys.modules, self.library, None)  # what `import` sees when absent
        with pytest.raises(ImportError, match=rf"pip install 'agentlog\[{self.library}\]'"):
            self.make_provider(server)

    def test_the_provider_has_the_specs_retry_policy(self, server: FakeServer) -> None:
        provider = self.make_provider(server)
        assert provider.retry_policy is DEFAULT_RETRY_POLICY
        assert self.make_provider(server, context_window=1000).context_window(MODEL) == 1000
