"""ADK processes the session-service tests start: one that talks and exits, one to be killed.

``python -m tests.adapters.adk_child converse STORE_URL SESSION``: creates the session and
plays two user turns through a ``Runner``, then exits.
``python -m tests.adapters.adk_child hang STORE_URL SESSION READY_FILE``: plays one turn, then
a second whose ``lookup`` tool writes ``READY_FILE`` and sleeps — the test SIGKILLs the process
there, with the step's function call stored and its response not.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.runners import Runner

from agentlog.adapters.adk import AgentlogSessionService
from tests.adapters.adk_agent import APP, ScriptedLlm, remember, runner, turn


async def converse(url: str, session_id: str) -> None:
    service = AgentlogSessionService(url)
    await service.create_session(app_name=APP, user_id="u", session_id=session_id)
    helper = runner(service)
    await turn(helper, "u", session_id, "hello")
    await turn(helper, "u", session_id, "remember Bo")
    await service.close()


async def hang(url: str, session_id: str, ready: Path) -> None:
    service = AgentlogSessionService(url)
    await service.create_session(app_name=APP, user_id="u", session_id=session_id)
    await turn(runner(service), "u", session_id, "hello")

    def lookup(query: str) -> dict[str, Any]:
        """Look something up (and hang, so that the test can kill us mid-step)."""
        ready.write_text(query)
        time.sleep(600)
        return {}

    agent = LlmAgent(name="helper", model=ScriptedLlm(), tools=[lookup, remember])
    hanging = Runner(agent=agent, app_name=APP, session_service=service)
    await turn(hanging, "u", session_id, "look again")


if __name__ == "__main__":
    if sys.argv[1] == "converse":
        asyncio.run(converse(sys.argv[2], sys.argv[3]))
    else:
        asyncio.run(hang(sys.argv[2], sys.argv[3], Path(sys.argv[4])))
