"""A turn's frame around its steps: claims, pre-step compaction, the system prompt, empty turns."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from agentlog import Agent, CompactionConfig, ExtractiveSummarizer, check_provider_history
from agentlog import messages as m
from agentlog.loop.inbox import Inbox
from agentlog.loop.runtime import Runtime
from agentlog.loop.system import SystemPrompt
from agentlog.loop.turn import run_turn
from agentlog.plugins import Summary, SummaryRequest
from agentlog.providers import Scripted
from tests.loop.support import new_session, of_type, types

LONG = "words and more words " * 60


def test_pressure_compaction_runs_before_the_step_inside_the_turn() -> None:
    """§8 scenario 1 through the loop: the bracket sits between the claim and step/start."""
    session = new_session()
    agent = Agent(
        session, Scripted([LONG, LONG, "short"]),
        compaction=ExtractiveSummarizer(), context_window=1000,
    )  # fmt: skip
    asyncio.run(agent.run("first " + LONG))
    asyncio.run(agent.run("second " + LONG))
    result = asyncio.run(agent.run("third"))
    sequence = types(result.events)
    assert sequence[:8] == [
        "agent/inbox/spliced", "turn/start", "agent/inbox/spliced",
        "compaction/start", "compaction/summary", "user/message", "compaction/end",
        "step/start",
    ]  # fmt: skip
    assert result.events[3].data["turn"] == 3  # owned by the open turn
    assert of_type(result.events, "request/header")[0].data["reason"] == "series"
    messages = session.derive_messages()
    assert messages[0]["source"]["kind"] == "compact-checkpoint"  # no prompt: no system node
    check_provider_history(messages)


def test_a_failed_compaction_only_warns_and_the_step_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(request: SummaryRequest) -> Summary:
        raise RuntimeError("summarizer down")

    session = new_session()
    agent = Agent(session, Scripted([LONG, LONG, "ok"]), compaction=broken, context_window=1000)
    asyncio.run(agent.run("first " + LONG))
    asyncio.run(agent.run("second " + LONG))
    with caplog.at_level(logging.WARNING, logger="agentlog.loop"):
        result = asyncio.run(agent.run("third"))
    assert "step compaction failed" in caplog.text
    (end,) = of_type(result.events, "compaction/end")
    assert "summarizer down" in end.data["error"]
    assert result.text == "ok"


def test_a_cancel_during_compaction_aborts_the_turn_without_a_step() -> None:
    box: list[Agent] = []

    async def slow(request: SummaryRequest) -> Summary:
        box[0].cancel()
        await asyncio.sleep(30)
        raise AssertionError("cancelled before")

    session = new_session()
    box.append(Agent(session, Scripted([LONG, LONG]), compaction=slow, context_window=1000))
    asyncio.run(box[0].run("first " + LONG))
    asyncio.run(box[0].run("second " + LONG))
    result = asyncio.run(box[0].run("third"))
    assert types(result.events)[-3:] == ["compaction/start", "compaction/end", "turn/end"]
    assert "step/start" not in types(result.events)
    assert result.reason == "aborted"


def test_compaction_with_a_config_summarizes_through_the_provider() -> None:
    seen: list[Any] = []

    def model(request: Any) -> str:
        seen.append(request.purpose)
        return "## Summary\n- short" if request.purpose == "compaction" else LONG

    agent = Agent(
        new_session(), Scripted(model), compaction=CompactionConfig(), context_window=1000
    )
    asyncio.run(agent.run("first " + LONG))
    asyncio.run(agent.run("second " + LONG))
    asyncio.run(agent.run("third"))
    assert "compaction" in seen
    summary = of_type(agent.session.events, "compaction/summary")[0]
    assert (summary.data["provider"], summary.data["llmStreamCall"]) == ("scripted", True)


def test_a_turn_whose_input_was_withdrawn_has_no_step() -> None:
    """§8 scenario 52: turn/start and turn/end{completed}, no model request."""
    session = new_session()
    provider = Scripted([])
    rt = Runtime(
        session, provider, tools=[], max_parallel_tool_calls=1, summarizer=None,
        compaction=None, context_window=None,
    )  # fmt: skip
    asyncio.run(run_turn(rt, Inbox(session, rt.append), 1, SystemPrompt(None), lambda: None))
    assert types(session.events) == ["turn/start", "turn/end"]
    assert session.events[-1].data["reason"] == {"kind": "completed"}
    assert provider.requests == []


def test_a_prompt_for_a_history_without_a_system_head_is_added_once() -> None:
    session = new_session()
    session.append("user/message", m.user("earlier"), surface_op="append")
    agent = Agent(session, Scripted(["a", "b"]), system="Be kind.")
    asyncio.run(agent.run("x"))
    asyncio.run(agent.run("y"))
    assert len(of_type(session.events, "system/message")) == 1
    assert [msg["role"] for msg in session.derive_messages()][:2] == ["user", "system"]
