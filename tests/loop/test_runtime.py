"""Request headers and contexts: the reason logic of spec/plugins.md §4.4 and core.md §7.4."""

from __future__ import annotations

import asyncio

from agentlog import Agent, ExtractiveSummarizer, compact
from agentlog.providers import Scripted
from tests.loop.support import new_session, of_type


def test_a_compaction_between_turns_makes_the_next_header_a_series() -> None:
    session = new_session()
    agent = Agent(session, Scripted(["a " * 400, "b " * 400, "c"]))
    asyncio.run(agent.run("first " * 300))
    asyncio.run(agent.run("second " * 300))
    assert asyncio.run(compact(session, ExtractiveSummarizer())) is not None
    result = asyncio.run(agent.run("third"))
    (header,) = of_type(result.events, "request/header")
    assert header.data["reason"] == "series"
    assert "startsSeries" not in header.data


def test_a_change_that_coincides_with_a_new_series_carries_starts_series() -> None:
    session = new_session()
    agent = Agent(session, Scripted(["a " * 400, "b " * 400, "c"]))
    asyncio.run(agent.run("first " * 300))
    asyncio.run(agent.run("second " * 300))
    asyncio.run(compact(session, ExtractiveSummarizer()))
    agent.tools = [lambda: "new"]
    result = asyncio.run(agent.run("third"))
    (header,) = of_type(result.events, "request/header")
    assert (header.data["reason"], header.data.get("startsSeries")) == ("change", True)


def test_request_context_is_logged_when_the_route_or_window_changes() -> None:
    session = new_session()
    asyncio.run(Agent(session, Scripted(["a"])).run("x"))
    asyncio.run(Agent(session, Scripted(["b"])).run("y"))  # same route: no new context
    result = asyncio.run(Agent(session, Scripted(["c"]), context_window=8000).run("z"))
    contexts = of_type(session.events, "request/context")
    assert [c.data.get("contextWindow") for c in contexts] == [None, 8000]
    assert contexts[-1] in result.events


def test_another_model_is_a_new_route_in_header_and_context() -> None:
    session = new_session()
    asyncio.run(Agent(session, Scripted(["a"])).run("x"))
    result = asyncio.run(Agent(session, Scripted(["b"], model="other")).run("y"))
    (header,) = of_type(result.events, "request/header")
    assert (header.data["reason"], header.data["header"]["config"]["model"]) == ("resume", "other")
    assert of_type(result.events, "request/context")[0].data["model"] == "other"
