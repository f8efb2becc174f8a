"""``Agent.stream()`` yields live frames: attempts, deltas, tool calls and every commit."""

from __future__ import annotations

import asyncio

from agentlog import Agent, tool
from agentlog.loop import (
    AttemptEnded,
    AttemptStarted,
    Committed,
    Frame,
    ProviderError,
    TextDelta,
    ToolCallDelta,
    ToolFinished,
    ToolStarted,
    TurnFailed,
)
from agentlog.providers import Scripted
from tests.loop.support import new_session


@tool
def echo(text: str) -> str:
    """Echo."""
    return text


async def collect(agent: Agent, prompt: str) -> list[Frame]:
    return [frame async for frame in agent.stream(prompt)]


def test_a_run_streams_its_frames_in_order() -> None:
    script = [Scripted.call("echo", {"text": "hi"}, id="c1"), "Two words."]
    agent = Agent(new_session("s"), Scripted(script), tools=[echo])
    frames = asyncio.run(collect(agent, "go"))
    kinds = [type(f).__name__ for f in frames if not isinstance(f, Committed)]
    assert kinds == [
        "AttemptStarted", "ToolCallDelta", "AttemptEnded", "ToolStarted", "ToolFinished",
        "AttemptStarted", "TextDelta", "TextDelta", "AttemptEnded",
    ]  # fmt: skip
    first, second = [f for f in frames if isinstance(f, AttemptStarted)]
    assert (first.attempt_id, second.attempt_id) == ("s:1", "s:2")
    assert (second.turn, second.step) == (1, 2)
    delta = next(f for f in frames if isinstance(f, ToolCallDelta))
    assert (delta.call_id, delta.name, delta.arguments_delta) == ("c1", "echo", '{"text":"hi"}')
    started = next(f for f in frames if isinstance(f, ToolStarted))
    assert started.arguments == {"text": "hi"}
    finished = next(f for f in frames if isinstance(f, ToolFinished))
    assert (finished.is_error, finished.content) == (False, ({"type": "text", "text": "hi"},))
    assert "".join(f.text for f in frames if isinstance(f, TextDelta)) == "Two words."
    ended = [f for f in frames if isinstance(f, AttemptEnded)]
    assert [(e.outcome, e.event_type) for e in ended] == [("committed", "assistant/message")] * 2
    committed = [f.event for f in frames if isinstance(f, Committed)]
    assert committed == list(agent.session.events[1:])  # all but the idle-queued prompt
    assert finished.seq == next(e.seq for e in committed if e.type == "tool/result")


def test_a_failed_turn_streams_turn_failed() -> None:
    agent = Agent(new_session(), Scripted([ProviderError.of("no", "AUTHENTICATION")]))
    frames = asyncio.run(collect(agent, "go"))
    failed = [f for f in frames if isinstance(f, TurnFailed)]
    assert [(f.turn, f.step, f.error["code"]) for f in failed] == [(1, 1, "AUTHENTICATION")]


def test_a_stream_with_nothing_to_do_ends_at_once() -> None:
    agent = Agent(new_session(), Scripted([]))

    async def nothing() -> list[Frame]:
        return [frame async for frame in agent.stream()]

    assert asyncio.run(nothing()) == []


def test_events_a_compaction_appends_are_committed_frames_too() -> None:
    from agentlog import ExtractiveSummarizer

    long = "A detailed note about the build. " * 60
    agent = Agent(
        new_session(), Scripted([long, long, "Short."]),
        compaction=ExtractiveSummarizer(), context_window=2000,
    )  # fmt: skip
    asyncio.run(agent.run("First: " + long))
    asyncio.run(agent.run("Second: " + long))
    frames = asyncio.run(collect(agent, "Third."))
    committed = [f.event.type for f in frames if isinstance(f, Committed)]
    assert "compaction/summary" in committed
    assert committed == [e.type for e in agent.session.events[-len(committed) :]]


def test_an_attempt_whose_settlement_is_refused_ends_abandoned() -> None:
    session = new_session()
    agent = Agent(session, Scripted(["hello"]))

    def refuse(_session: object, candidate: object) -> None:
        if getattr(candidate, "type", None) == "assistant/message":
            raise ValueError("refused by a validator")

    session.add_validator(refuse)
    frames = asyncio.run(collect(agent, "go"))
    ended = [f for f in frames if isinstance(f, AttemptEnded)]
    assert [(e.outcome, e.event_type) for e in ended] == [("abandoned", None)]
    failed = [f for f in frames if isinstance(f, TurnFailed)]
    assert "refused by a validator" in failed[0].error["message"]
