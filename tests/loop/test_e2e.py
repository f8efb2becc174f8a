"""The loop end to end: the real ``openai`` and ``anthropic`` clients against local fake servers.

Each scenario runs an ``Agent`` over ``OpenAIChat`` and ``Anthropic`` (parametrized) talking
HTTP to a loopback server that streams the provider's real wire format and validates every
request as the real API would (``tests/providers/fake_*.py``). For each scenario the test
checks the event sequence and payloads against spec/plugins.md §4.3, runs with the invariant
companion on (tests/conftest.py), and checks every request at dispatch: its messages equal
``derive_messages()`` at that moment (the reconstruction invariant of §4.4), the server found
nothing to refuse, and the body it received is exactly the provider's rendering of that request.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentlog import (
    Agent,
    ExtractiveSummarizer,
    Session,
    check_invariants,
    check_provider_history,
    thaw,
    tool,
)
from agentlog.loop import Chunk, ModelRequest, RetryPolicy, TextDelta, ToolStarted
from agentlog.loop.dispatch import ABORTED_BEFORE_DISPATCH, ABORTED_WHILE_RUNNING
from agentlog.providers import Anthropic, OpenAIChat
from tests.loop.support import FAST_RETRIES, new_session, of_type, plain, text_of, types
from tests.providers.fake_server import Answer, Failure, FakeServer, ToolCall

CONVERSATION = [
    "agent/inbox/spliced", "turn/start", "agent/inbox/spliced", "step/start", "system/message",
    "user/message", "request/header", "request/context",
]  # fmt: skip
"""How a first turn opens, up to its first request (§4.3)."""


class Recorder:
    """The provider under test, with each request and the derived history at dispatch kept."""

    def __init__(self, inner: Any, session: Session) -> None:
        self.inner = inner
        self.session = session
        self.dispatched: list[tuple[ModelRequest, Any]] = []

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def model(self) -> str:
        return str(self.inner.model)

    @property
    def retry_policy(self) -> RetryPolicy | None:
        policy: RetryPolicy | None = self.inner.retry_policy
        return policy

    def context_window(self, model: str) -> int | None:
        window: int | None = self.inner.context_window(model)
        return window

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.dispatched.append((request, thaw(self.session.derive_messages())))
        async for chunk in self.inner.stream(request):
            yield chunk


@dataclass
class World:
    """One provider and its fake server."""

    kind: str
    server: FakeServer
    new_provider: Callable[..., Any]
    recorders: list[Recorder] = field(default_factory=list)
    first: int = -1
    """The first server request of this world (servers may be shared)."""

    def __post_init__(self) -> None:
        if self.first < 0:
            self.first = len(self.server.requests)

    def agent(
        self, session: Session | None = None, *, retry: RetryPolicy = FAST_RETRIES, **options: Any
    ) -> Agent:
        session = session or new_session()
        recorder = Recorder(self.new_provider(retry_policy=retry), session)
        self.recorders.append(recorder)
        options.setdefault("system", "You are terse.")
        return Agent(session, recorder, **options)

    def check_requests(self) -> None:
        """Every request: valid for the API, equal to the derived history at dispatch."""
        dispatched = [pair for r in self.recorders for pair in r.dispatched]
        received = self.server.requests[self.first :]
        assert len(received) == len(dispatched)
        recorders = [r for r in self.recorders for _ in r.dispatched]
        for (request, derived), wire, recorder in zip(dispatched, received, recorders, strict=True):
            assert plain(request.messages) == derived
            check_provider_history(derived)
            assert wire.problems == []
            assert wire.body == recorder.inner.request_body(request)

    def wire_messages(self, index: int) -> list[Any]:
        messages: list[Any] = self.server.requests[index].body["messages"]
        return messages


@pytest.fixture(params=["openai", "anthropic"])
def world(request: pytest.FixtureRequest) -> World:
    kind = request.param
    server = request.getfixturevalue(f"{kind}_server")
    if kind == "openai":

        def new_provider(**options: Any) -> Any:
            options.setdefault("provider", "openai")
            model = options.pop("model", "gpt-test")
            return OpenAIChat(model, base_url=server.url, api_key="sk-test", **options)

    else:

        def new_provider(**options: Any) -> Any:
            model = options.pop("model", "claude-test")
            return Anthropic(model, base_url=server.url, api_key="sk-test", **options)

    return World(kind, server, new_provider)


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


def test_plain_text(world: World) -> None:
    world.server.script(Answer(text=["Hello", " there."]))
    agent = world.agent()
    result = asyncio.run(agent.run("Hi"))
    assert types(result.events) == [
        *CONVERSATION, "assistant/message", "step/end", "turn/end",
    ]  # fmt: skip
    answer = result.events[-3]
    assert plain(answer.data["message"]["content"]) == [{"type": "text", "text": "Hello there."}]
    assert answer.data["message"]["source"]["provider"] == world.kind
    assert answer.data["usage"]["inputTokens"] == 12
    assert answer.data["usage"]["outputTokens"] == 7
    assert [r["type"] for r in answer.data["stream"]].count("text-chunks") == 1
    assert result.events[-1].data["reason"] == {"kind": "completed"}
    assert result.text == "Hello there."
    world.check_requests()


def test_parallel_tool_calls(world: World) -> None:
    order: list[str] = []

    @tool
    async def lookup(key: str, seconds: float) -> str:
        """Look a key up."""
        await asyncio.sleep(seconds)
        order.append(key)
        return f"value of {key}"

    calls = [
        ToolCall(id="call_a", name="lookup", arguments=['{"key": "a",', ' "seconds": 0.05}']),
        ToolCall(id="call_b", name="lookup", arguments='{"key": "b", "seconds": 0}'),
    ]
    world.server.script(Answer(tool_calls=calls), Answer(text="Both found."))
    agent = world.agent(tools=[lookup])
    result = asyncio.run(agent.run("Look up a and b"))
    assert types(result.events) == [
        *CONVERSATION, "assistant/message", "tool/call", "tool/call", "tool/result",
        "tool/result", "step/end", "step/start", "assistant/message", "step/end", "turn/end",
    ]  # fmt: skip
    assert order == ["b", "a"]  # ran together: b finished first ...
    results = of_type(result.events, "tool/result")
    assert [r.data["message"]["toolCallId"] for r in results] == [
        "call_a",
        "call_b",
    ]  # ... in order
    assert [r.source_event_seqs for r in results] == [
        [e.seq] for e in of_type(result.events, "tool/call")
    ]
    assert (
        of_type(result.events, "tool/call")[0].data["arguments"] == '{"key": "a", "seconds": 0.05}'
    )
    world.check_requests()


def test_a_tool_that_raises(world: World) -> None:
    def read_file(path: str) -> str:
        """Read a file."""
        raise PermissionError(f"{path}: permission denied")

    call = ToolCall(id="call_1", name="read_file", arguments='{"path": "/etc/shadow"}')
    world.server.script(Answer(tool_calls=[call]), Answer(text="I cannot read it."))
    agent = world.agent(tools=[read_file])
    result = asyncio.run(agent.run("Read /etc/shadow"))
    (failed,) = of_type(result.events, "tool/result")
    assert failed.data["message"]["isError"] is True
    assert plain(failed.data["error"]) == {"name": "PermissionError", "code": "TOOL_ERROR"}
    assert (
        text_of(failed.data["message"]) == "Error: PermissionError: /etc/shadow: permission denied"
    )
    assert result.text == "I cannot read it."
    world.check_requests()
    sent = str(world.wire_messages(1))
    assert "permission denied" in sent  # the model saw the failure


def test_http_500_then_success(world: World) -> None:
    world.server.script(Failure(status=500), Answer(text="Recovered."))
    agent = world.agent()
    result = asyncio.run(agent.run("Hi"))
    assert types(result.events) == [
        *CONVERSATION, "assistant/attempt", "llm/retry", "llm/retry-started",
        "assistant/message", "step/end", "turn/end",
    ]  # fmt: skip
    attempt, retry, started = result.events[8:11]
    assert attempt.data["stream"] == []
    assert retry.data["failure"]["code"] == "SERVER"
    assert retry.data["failure"]["status"] == 500
    assert (retry.data["retry"], retry.data["maxRetries"], retry.data["mode"]) == (1, 5, "normal")
    assert started.data["retryId"] == retry.data["retryId"]
    assert result.text == "Recovered."
    world.check_requests()


def test_429_with_retry_after(world: World) -> None:
    limited = Failure(status=429, message="Rate limit reached", headers={"retry-after": "1"})
    world.server.script(limited, Answer(text="Now."))
    policy = RetryPolicy(initial_delay_ms=1, max_delay_ms=2000, jitter_ratio=0.0)
    session = Session.create("s")  # the wall clock: the wait shows in the event times
    agent = world.agent(session, retry=policy)
    result = asyncio.run(agent.run("Hi"))
    (retry,) = of_type(result.events, "llm/retry")
    (started,) = of_type(result.events, "llm/retry-started")
    assert retry.data["failure"]["code"] == "RATE_LIMIT"
    assert retry.data["failure"]["providerRetryAfterMs"] == 1000
    assert retry.data["delayMs"] == 1000
    assert started.time - retry.time >= 1000
    assert result.text == "Now."
    world.check_requests()


def _overflow(world: World) -> Failure:
    if world.kind == "openai":
        return Failure(
            status=400,
            message="This model's maximum context length is 8192 tokens. Please reduce the "
            "length of the messages.",
            code="context_length_exceeded",
        )
    return Failure(status=400, message="prompt is too long: 210000 tokens > 200000 maximum")


def test_context_window_exceeded_then_compaction_then_retry(world: World) -> None:
    long = "A long explanation of the build system. " * 40
    world.server.script(
        Answer(text=long), Answer(text=long), _overflow(world), Answer(text="Short again.")
    )
    session = new_session()
    agent = world.agent(session, compaction=ExtractiveSummarizer(), context_window=100_000)
    asyncio.run(agent.run("Explain the build. " * 30))
    asyncio.run(agent.run("And the tests? " * 30))
    result = asyncio.run(agent.run("Summarize."))
    assert types(result.events) == [
        "agent/inbox/spliced", "turn/start", "agent/inbox/spliced", "step/start", "user/message",
        "assistant/attempt", "compaction/start", "compaction/summary", "user/message",
        "compaction/end", "request/header", "assistant/message", "step/end", "turn/end",
    ]  # fmt: skip
    assert result.events[10].data["reason"] == "series"
    assert result.events[6].data["turn"] == 3
    assert result.text == "Short again."
    world.check_requests()
    retried = world.wire_messages(3)
    assert "<compacted-summary>" in str(retried[0]) or "<compacted-summary>" in str(retried[1])
    assert len(retried) < len(world.wire_messages(2))


@pytest.mark.parametrize("cut", ["drop_after", "end_after"])
def test_a_stream_dropped_mid_answer(world: World, cut: str) -> None:
    events_before_cut = 4 if world.kind == "openai" else 5
    text = ["The answer ", "is ", "forty-two."]
    if cut == "drop_after":  # the connection breaks
        dropped = Answer(text=text, drop_after=events_before_cut)
    else:  # the body ends cleanly, with no finish
        dropped = Answer(text=text, end_after=events_before_cut)
    world.server.script(dropped, Answer(text="The answer is 42."))
    agent = world.agent()
    result = asyncio.run(agent.run("What is it?"))
    assert types(result.events)[8:] == [
        "assistant/attempt", "llm/retry", "llm/retry-started", "assistant/message", "step/end",
        "turn/end",
    ]  # fmt: skip
    attempt = result.events[8]
    partial = [t for r in attempt.data["stream"] if r["type"] == "text-chunks" for t in r["texts"]]
    assert partial  # the partial answer is kept in the log, off the surface
    assert of_type(result.events, "llm/retry")[0].data["failure"]["code"] == "TRANSPORT"
    assert [text_of(e.data["message"]) for e in of_type(result.events, "assistant/message")] == [
        "The answer is 42."
    ]
    world.check_requests()


def test_cancellation_mid_stream(world: World) -> None:
    world.server.script(Answer(text=["Once upon", " a time"], hold=True))
    agent = world.agent()

    async def main() -> list[Any]:
        deltas = []
        async for frame in agent.stream("Tell me a story"):
            if isinstance(frame, TextDelta):
                deltas.append(frame.text)
                if len(deltas) == 2:
                    agent.cancel()
        return deltas

    assert asyncio.run(main()) == ["Once upon", " a time"]
    events = agent.session.events
    assert types(events)[8:] == ["assistant/message", "step/end", "turn/end"]
    interrupted = events[8]
    assert interrupted.data["interrupted"] is True
    assert plain(interrupted.data["message"]["content"]) == [
        {"type": "text", "text": "Once upon a time"}
    ]
    assert plain(events[-1].data["reason"]) == {"kind": "aborted", "reason": {"kind": "user"}}
    assert world.server.requests[0].disconnected.wait(5)  # the HTTP stream was closed
    world.check_requests()
    world.server.script(Answer(text="The end."))
    asyncio.run(agent.run("Go on"))  # the interrupted history is valid for the next request
    world.check_requests()


def test_cancellation_mid_tool(world: World) -> None:
    started = asyncio.Event()

    @tool
    async def build(target: str) -> str:
        """Build a target."""
        started.set()
        await asyncio.sleep(30)
        return "built"

    calls = [
        ToolCall(id="call_1", name="build", arguments='{"target": "app"}'),
        ToolCall(id="call_2", name="build", arguments='{"target": "docs"}'),
    ]
    world.server.script(Answer(tool_calls=calls))
    agent = world.agent(tools=[build], max_parallel_tool_calls=1)

    async def main() -> None:
        async for frame in agent.stream("Build everything"):
            if isinstance(frame, ToolStarted):
                await started.wait()
                agent.cancel()

    asyncio.run(main())
    events = agent.session.events
    assert types(events)[8:] == [
        "assistant/message", "tool/call", "tool/result", "tool/call", "tool/result",
        "step/end", "turn/end",
    ]  # fmt: skip
    running, unstarted = of_type(events, "tool/result")
    assert running.data["error"]["code"] == ABORTED_WHILE_RUNNING
    assert unstarted.data["error"]["code"] == ABORTED_BEFORE_DISPATCH
    assert events[-1].data["reason"]["kind"] == "aborted"
    check_invariants(events)
    world.server.script(Answer(text="Stopped, as asked."))
    asyncio.run(agent.run("Why did you stop?"))
    world.check_requests()  # the aborted calls are answered: the next request is valid


def test_deepseek_reasoning_content_round_trip(
    openai_server: Any,
) -> None:
    world = World(
        "openai",
        openai_server,
        lambda **o: OpenAIChat(
            "deepseek-reasoner", base_url=openai_server.url, api_key="k", provider="deepseek", **o
        ),
    )
    call = ToolCall(id="call_1", name="weather", arguments='{"city": "Oslo"}')
    world.server.script(
        Answer(reasoning=["The user wants ", "the weather."], tool_calls=[call]),
        Answer(reasoning="Report it.", text="Sunny in Oslo."),
    )
    agent = world.agent(tools=[weather])
    result = asyncio.run(agent.run("Weather in Oslo?"))
    first = of_type(result.events, "assistant/message")[0]
    assert plain(first.data["message"]["content"])[0] == {
        "type": "reasoning", "text": "The user wants the weather.",
    }  # fmt: skip
    world.check_requests()
    assistant = [m for m in world.wire_messages(1) if m["role"] == "assistant"]
    assert assistant[0]["reasoning_content"] == "The user wants the weather."


def test_anthropic_thinking_signature_round_trip(anthropic_server: Any) -> None:
    world = World(
        "anthropic",
        anthropic_server,
        lambda **o: Anthropic("claude-test", base_url=anthropic_server.url, api_key="k", **o),
    )
    call = ToolCall(id="toolu_1", name="weather", arguments='{"city": "Oslo"}')
    world.server.script(
        Answer(reasoning=["Check ", "the weather."], signature="sig-abc", tool_calls=[call]),
        Answer(text="Sunny in Oslo."),
    )
    agent = world.agent(tools=[weather])
    result = asyncio.run(agent.run("Weather in Oslo?"))
    first = of_type(result.events, "assistant/message")[0]
    replay = plain(first.data["message"]["source"]["replayState"])
    assert "sig-abc" in str(replay)  # the signature is kept in the replay envelope
    world.check_requests()  # the server accepted the echoed, signed thinking block
    assistant = next(m for m in world.wire_messages(1) if m["role"] == "assistant")
    thinking = assistant["content"][0]
    assert thinking == {
        "type": "thinking",
        "thinking": "Check the weather.",
        "signature": "sig-abc",
    }
    # another model never gets the signature back
    world.server.script(Answer(text="Still sunny."))
    other = World(
        "anthropic",
        anthropic_server,
        lambda **o: Anthropic("claude-other", base_url=anthropic_server.url, api_key="k", **o),
    )
    asyncio.run(other.agent(agent.session).run("And now?"))
    assert "thinking" not in str(anthropic_server.requests[-1].body["messages"])
    other.check_requests()
