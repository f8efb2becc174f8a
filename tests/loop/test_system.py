"""The system prompt: node 0, replaced in place or updated in history (plugins.md §4.11)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentlog import Agent, check_provider_history
from agentlog.loop import Enter, PreStep
from agentlog.loop.system import message_text
from agentlog.providers import Scripted
from tests.loop.support import new_session, of_type, plain


def prompts(messages: list[Any]) -> list[str]:
    return [message_text(m) for m in messages if m["role"] == "system"]


def system_events(events: Any) -> list[tuple[str, Any]]:
    return [
        (message_text(e.data["message"]), plain(e.surface_op))
        for e in of_type(events, "system/message")
    ]


def test_a_changed_prompt_replaces_node_0_by_default() -> None:
    session = new_session()
    agent = Agent(session, Scripted(["a", "b"]), system="Be brief.")
    asyncio.run(agent.run("1"))
    agent.system = "Be thorough."
    second = asyncio.run(agent.run("2"))
    (replaced,) = of_type(second.events, "system/message")
    assert plain(replaced.surface_op) == {"op": "replace", "startSeq": 4, "endSeq": 4}
    assert prompts(session.derive_messages()) == ["Be thorough."]
    assert "systemPromptUpdate" not in session.request_context()


def test_in_history_a_changed_prompt_is_appended_and_the_history_kept() -> None:
    session = new_session()
    model = Scripted(["a", "b", "c"])
    agent = Agent(session, model, system="Be brief.", system_prompt_update="in-history")
    asyncio.run(agent.run("1"))
    before = model.requests[0].messages
    agent.system = "Be thorough."
    second = asyncio.run(agent.run("2"))
    assert system_events(second.events) == [("Be thorough.", "append")]
    assert session.request_context()["systemPromptUpdate"] == "in-history"
    # the history sent before is a prefix of the next request: a provider's cache holds
    sent = model.requests[1].messages
    assert [m["id"] for m in sent[: len(before)]] == [m["id"] for m in before]
    assert prompts(sent) == ["Be brief.", "Be thorough."]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "system", "user"]
    # an unchanged header and an unchanged surface content: no new request header
    assert [e.data["reason"] for e in of_type(session.events, "request/header")] == ["initial"]
    third = asyncio.run(agent.run("3"))
    assert of_type(third.events, "system/message") == []  # the appended prompt is in force
    check_provider_history(session.derive_messages())


def test_in_history_an_emptied_prompt_clears_the_appended_ones_and_rewrites_node_0() -> None:
    session = new_session()
    agent = Agent(session, Scripted(["a", "b", "c"]), system="A", system_prompt_update="in-history")
    asyncio.run(agent.run("1"))
    agent.system = "B"
    asyncio.run(agent.run("2"))
    agent.system = ""
    third = asyncio.run(agent.run("3"))
    assert [text for text, _ in system_events(third.events)] == ["", ""]
    assert prompts(session.derive_messages()) == []


def test_in_history_a_new_series_rewrites_node_0_instead() -> None:
    session = new_session()
    agent = Agent(session, Scripted(["a", "b"]), system="A", system_prompt_update="in-history")
    asyncio.run(agent.run("1"))

    def new_series(pre: PreStep) -> Enter:
        return Enter(starts_request_series=True)

    agent.add_pre_step_hook(new_series)
    agent.system = "B"
    second = asyncio.run(agent.run("2"))
    assert system_events(second.events) == [("B", {"op": "replace", "startSeq": 4, "endSeq": 4})]
    assert prompts(session.derive_messages()) == ["B"]


def test_an_agent_in_replace_mode_clears_prompts_appended_in_history() -> None:
    """A resumed session keeps its appended prompts; a replacing agent empties them first."""
    session = new_session()
    agent = Agent(session, Scripted(["a", "b"]), system="A", system_prompt_update="in-history")
    asyncio.run(agent.run("1"))
    agent.system = "B"
    asyncio.run(agent.run("2"))
    same = Agent(session, Scripted(["c"]), system="B", system_prompt_update="in-history")
    assert of_type(asyncio.run(same.run("3")).events, "system/message") == []
    replacing = Agent(session, Scripted(["d"]), system="C")
    fourth = asyncio.run(replacing.run("4"))
    assert [text for text, _ in system_events(fourth.events)] == ["", "C"]
    assert prompts(session.derive_messages()) == ["C"]
    check_provider_history(session.derive_messages())


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="system_prompt_update must be"):
        Agent(new_session(), Scripted(["a"]), system_prompt_update="sometimes")  # type: ignore[arg-type]
