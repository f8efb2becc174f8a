"""The LangGraph process the crash test kills: it runs the test agent on a store until SIGKILL.

``python langgraph_crash_child.py STORE_URL THREAD READY_FILE``: plays turn 0, then turn 1 up
to its tool, whose body writes ``READY_FILE`` and sleeps — the test kills the process there,
in the middle of a step whose tool call is durable and whose result is not.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from langchain_core.tools import tool
from langgraph.types import Command

from agentlog.adapters.langgraph import AgentlogCheckpointer
from tests.adapters.langgraph_graph import ask, build, config, run_turns


def main(url: str, thread: str, ready: Path) -> None:
    @tool
    def lookup(query: str) -> str:
        """Look something up (and hang, so that the test can kill us mid-step)."""
        ready.write_text(query)
        time.sleep(600)
        return "never"

    checkpointer = AgentlogCheckpointer(url)
    run_turns(build().compile(checkpointer=checkpointer), thread, range(1))
    graph = build([lookup]).compile(checkpointer=checkpointer)
    # durability="sync": each checkpoint is durable before the next step starts, so the one
    # before the tool is stored when the test kills us (LangGraph's default writes it in the
    # background, and a kill may come first).
    graph.invoke(ask(1), config(thread), durability="sync")
    graph.invoke(Command(resume=True), config(thread), durability="sync")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
