"""The agent process the loop's crash tests kill: a real ``Agent`` over a store and real HTTP.

Run as ``python -m tests.loop.crash_child STORE_URL SESSION_ID BASE_URL MODE MARKER``:

``fresh``
    create the session and run one prompt with the tool ``deploy``, which writes ``MARKER``
    and then blocks forever (the test kills the process inside it, or while the request is in
    flight, before the server answers);
``resume``
    open the session (crash repair), run one more prompt to its end, and print the
    ``RunResult`` reason on stdout.

The model is ``OpenAIChat`` pointed at the test's fake server on loopback.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from agentlog import Agent, open_store, tool
from agentlog.providers import OpenAIChat


def main(url: str, session_id: str, base_url: str, mode: str, marker: str) -> None:
    @tool
    def deploy(target: str) -> str:
        """Deploy a target (not idempotent)."""
        Path(marker).write_text(target, encoding="utf-8")
        while True:  # the test kills the process here
            time.sleep(1)

    model = OpenAIChat("gpt-crash", base_url=base_url, api_key="sk-test")
    with open_store(url) as store:
        session = store.create(session_id) if mode == "fresh" else store.open(session_id)
        with session:
            agent = Agent(session, model, system="You deploy things.", tools=[deploy])
            prompt = "Deploy the app." if mode == "fresh" else "What happened?"
            result = asyncio.run(agent.run(prompt))
    print(result.reason, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:6])
