"""A process running OpenAI Agents SDK turns on an ``AgentlogSession``, for the tests to kill.

``python -m tests.adapters.openai_agents_child URL SESSION MODE [TURNS]`` runs ``TURNS`` turns
(``MODE`` ``run``) or turns until killed (``crash``); each turn the scripted model calls the
``add`` tool twice, then answers. Reports, one ``os.write`` per line: ``T <n>`` while the tool
of turn ``n`` runs, ``A <n>`` once turn ``n`` returned. ``MODE`` ``resume`` runs one turn
and prints the model's input items as JSON (``I <json>``). ``python -m ... serve`` is a fork
server (``tests.adapters.children``) running the same modes in forked workers.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from agentlog.adapters.openai_agents import AgentlogSession
from tests.adapters.children import say, serve


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    say(f"T {a}")
    time.sleep(0.002)
    return a + b


def turn_model(turn: int) -> ScriptedModel:
    return ScriptedModel(
        [
            [
                function_call("add", {"a": turn, "b": 1}, call_id=f"t{turn}a"),
                function_call("add", {"a": turn, "b": 2}, call_id=f"t{turn}b"),
            ],
            [assistant_message(f"turn {turn} done")],
        ]
    )


async def main(url: str, session_id: str, mode: str, turns: int) -> None:
    session = AgentlogSession(session_id, url)
    start = len(await session.get_items()) // 6 + 1
    if mode == "resume":
        seen: list[Any] = []

        def answer(call: ModelCall) -> ModelStep:
            seen.extend(call.input)
            return ModelStep(output=[assistant_message("resumed")])

        agent = Agent(name="a", model=ScriptedModel([ModelStep.respond(answer)]))
        await Runner.run(agent, "and now?", session=session)
        say("I " + json.dumps(seen))
        session.close()
        return
    turn = start
    while mode == "crash" or turn < start + turns:
        agent = Agent(name="a", model=turn_model(turn), tools=[add])
        await Runner.run(agent, f"turn {turn}", session=session)
        say(f"A {turn}")
        turn += 1
    session.close()


def run(url: str, session_id: str, mode: str, turns: int = 1) -> None:
    asyncio.run(main(url, session_id, mode, turns))


if __name__ == "__main__":
    set_tracing_disabled(True)
    if sys.argv[1] == "serve":
        serve(run)
    else:
        url, session_id, mode, *turns = sys.argv[1:]
        run(url, session_id, mode, *map(int, turns))
