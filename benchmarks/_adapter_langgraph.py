"""The LangGraph part of the adapters suite: ``AgentlogCheckpointer`` against ``SqliteSaver``.

One workload for every checkpointer: a ``StateGraph`` agent with an ``add_messages`` history,
a ``ToolNode`` tool and a human-approval ``interrupt`` on every fifth turn, played for
``STEPS`` checkpoints (supersteps). A turn is a user message (~1 KB), an assistant message
with a tool call, the tool's result (~7 KB) and the answer: ~9 KB of messages, as in
DESIGN.md's table. The same turns run on agentlog's SQLite and JSONL stores and on
``SqliteSaver`` (``langgraph-checkpoint-sqlite``), in this process, one after another.

1. ``put`` per step: each ``put`` call timed alone — the median over the steps both run, and
   the mean of the last ``TAIL`` steps, where a saver that rewrites the whole history pays the
   most.
2. Bytes after ``STEPS`` steps (the SQLite database, WAL checkpointed, or the JSONL directory)
   against the raw JSON of the thread's final messages (``orjson.dumps(message.model_dump())``
   of each), with the bytes at half the steps to show the growth: linear doubles, quadratic
   quadruples.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Final, TypedDict

import orjson
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from agentlog.adapters.langgraph import AgentlogCheckpointer
from benchmarks._harness import Benchmark, fig, median, now_ns
from benchmarks.core import prose

__all__ = ["run"]

STEPS: Final = 2_000
SAVER_STEPS: Final = 1_000
"""``SqliteSaver`` rewrites the whole history at every step: its run stops here (its bytes grow
quadratically: 2,000 steps of this workload would write gigabytes)."""
TAIL: Final = 200
BYTES_TARGET: Final = 1.2
"""Issue 16: a thread's bytes ≤ 1.2× the raw JSON of its messages (linear in the messages)."""
THREAD: Final = "bench"


class _State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _graph(rng: random.Random) -> StateGraph[_State]:
    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return prose(rng, 7_000)

    def agent(state: _State) -> dict[str, Any]:
        n = len(state["messages"])
        if isinstance(state["messages"][-1], HumanMessage):
            call = {"name": "read_file", "args": {"path": prose(rng, 40)}, "id": f"call-{n}"}
            text = prose(rng, 300)
            return {"messages": [AIMessage(content=text, id=f"ai-{n}", tool_calls=[call])]}
        return {"messages": [AIMessage(content=prose(rng, 700), id=f"ai-{n}")]}

    def route(state: _State) -> str:
        last = state["messages"][-1]
        if not getattr(last, "tool_calls", None):
            return END
        return "review" if len(state["messages"]) % 5 == 2 else "tools"

    def review(state: _State) -> dict[str, Any]:
        interrupt({"question": "run the tool?"})
        return {}

    builder = StateGraph(_State)
    builder.add_node("agent", agent)
    builder.add_node("review", review)
    builder.add_node("tools", ToolNode([read_file]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["review", "tools", END])
    builder.add_edge("review", "tools")
    builder.add_edge("tools", "agent")
    return builder


class _Timed:
    """Times every ``put`` of a checkpointer and counts the steps."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver
        self.puts: list[int] = []
        original = saver.put

        def put(*args: Any, **kwargs: Any) -> RunnableConfig:
            start = now_ns()
            result = original(*args, **kwargs)
            self.puts.append(now_ns() - start)
            return result

        saver.put = put  # type: ignore[method-assign]  # instrumentation of this instance


def _play(
    saver: BaseCheckpointSaver[Any], steps: int, on_half: Callable[[], None]
) -> tuple[_Timed, int]:
    """Play turns until ``steps`` checkpoints; the raw JSON size of the final messages."""
    timed = _Timed(saver)
    graph = _graph(random.Random(5)).compile(checkpointer=saver)
    config: RunnableConfig = {"configurable": {"thread_id": THREAD}}
    rng = random.Random(9)
    turn = 0
    halved = False
    while len(timed.puts) < steps:
        question = HumanMessage(content=prose(rng, 1_000), id=f"h-{turn}")
        graph.invoke({"messages": [question]}, config)
        if graph.get_state(config).next:
            graph.invoke(Command(resume=True), config)
        turn += 1
        if not halved and len(timed.puts) >= steps // 2:
            on_half()
            halved = True
    messages = graph.get_state(config).values["messages"]
    return timed, sum(len(orjson.dumps(message.model_dump())) for message in messages)


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())
    return sum(
        Path(f"{path}{suffix}").stat().st_size
        for suffix in ("", "-wal")
        if Path(f"{path}{suffix}").exists()
    )


class _Run:
    """One checkpointer played through the workload: put timings and sizes."""

    def __init__(self, make: Callable[[], Any], path: Path, steps: int) -> None:
        saver = make()
        self.half = 0

        def half() -> None:
            if isinstance(saver, SqliteSaver):
                saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.half = _size(path)

        timed, self.raw = _play(saver, steps, half)
        self.puts = timed.puts
        if isinstance(saver, AgentlogCheckpointer):
            saver.close()
        else:
            saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            saver.conn.close()
        self.bytes = _size(path)


def run() -> list[Benchmark]:
    directory = Path(tempfile.mkdtemp(prefix="agentlog-bench-langgraph-"))
    try:
        sqlite = _Run(
            lambda: AgentlogCheckpointer(f"sqlite:///{directory}/agentlog.db"),
            directory / "agentlog.db",
            STEPS,
        )
        jsonl = _Run(
            lambda: AgentlogCheckpointer(f"jsonl:///{directory}/agentlog"),
            directory / "agentlog",
            STEPS,
        )
        # JSONL's compressed twin (SQLite compresses large payloads itself).
        jsonl_zstd = _Run(
            lambda: AgentlogCheckpointer(f"jsonl+zstd:///{directory}/agentlog-zstd"),
            directory / "agentlog-zstd",
            STEPS,
        )
        saver = _Run(
            lambda: SqliteSaver(sqlite3.connect(directory / "saver.db", check_same_thread=False)),
            directory / "saver.db",
            SAVER_STEPS,
        )
        return [
            _put(sqlite, saver),
            *(
                _bytes(subject, name, jsonl, saver)
                for subject, name in (
                    (sqlite, "sqlite"),
                    (jsonl, "jsonl"),
                    (jsonl_zstd, "jsonl+zstd"),
                )
            ),
        ]
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _put(subject: _Run, saver: _Run) -> Benchmark:
    same = subject.puts[:SAVER_STEPS]
    p50, base_p50 = median(same), median(saver.puts)
    tail = sum(subject.puts[-TAIL:]) / TAIL
    base_tail = sum(saver.puts[-TAIL:]) / TAIL
    return {
        "id": "langgraph.put.sqlite",
        "title": "LangGraph put per step, agentlog SQLite store",
        "statistic": f"median of the first {SAVER_STEPS} puts, each timed alone",
        "value": round(p50 / 1e6, 4),
        "unit": "ms/put (p50)",
        "baseline": {
            "name": f"SqliteSaver, the same {SAVER_STEPS} steps",
            "value": round(base_p50 / 1e6, 4),
            "unit": "ms/put",
        },
        "ratio": round(p50 / base_p50, 3),
        "target": None,
        "met": None,
        "figures": {
            f"median of all {len(subject.puts)} puts": fig(median(subject.puts) / 1e6, "ms/put"),
            f"mean of the last {TAIL} of {len(subject.puts)} puts": fig(tail / 1e6, "ms/put"),
            f"SqliteSaver mean of the last {TAIL} of {SAVER_STEPS} puts": fig(
                base_tail / 1e6, "ms/put"
            ),
        },
        "notes": "every put is durable (one agentlog event; SqliteSaver: one transaction)",
    }


def _bytes(subject: _Run, name: str, jsonl: _Run, saver: _Run) -> Benchmark:
    ratio = subject.bytes / subject.raw
    figures = {
        "JSONL bytes after half the steps": fig(jsonl.half, "bytes"),
        "JSONL growth, all steps over half": fig(jsonl.bytes / jsonl.half, "×"),
        f"SqliteSaver bytes after {SAVER_STEPS} steps": fig(saver.bytes, "bytes"),
        f"SqliteSaver bytes after {SAVER_STEPS // 2} steps": fig(saver.half, "bytes"),
        f"SqliteSaver growth, {SAVER_STEPS} steps over {SAVER_STEPS // 2}": fig(
            saver.bytes / saver.half, "×"
        ),
        f"SqliteSaver over agentlog JSONL after {SAVER_STEPS} steps": fig(
            saver.bytes / jsonl.half, "×"
        ),
    }
    return {
        "id": f"langgraph.bytes.{name}",
        "title": f"LangGraph thread bytes after {len(subject.puts)} steps, agentlog {name}",
        "statistic": "database file (WAL checkpointed) or JSONL directory after the run",
        "value": subject.bytes,
        "unit": "bytes",
        "baseline": {
            "name": "raw JSON of the thread's final messages",
            "value": subject.raw,
            "unit": "bytes",
        },
        "ratio": round(ratio, 3),
        "target": {
            "text": f"linear, ≤ {BYTES_TARGET:g}× the raw JSON of the messages",
            "max_ratio": BYTES_TARGET,
        },
        "met": ratio <= BYTES_TARGET,
        "figures": figures,
        "notes": (
            "growth 2× from half the steps is linear, 4× quadratic; SqliteSaver runs "
            f"{SAVER_STEPS} steps only (its bytes grow quadratically); SQLite stores large "
            "payloads zstd-compressed, JSONL does not; the bytes beyond the messages are "
            "LangGraph's own bookkeeping (a checkpoint per superstep: versions, metadata, "
            "task writes)"
        ),
    }


if __name__ == "__main__":  # pragma: no cover - a manual run of this part alone
    for benchmark in run():
        print(orjson.dumps(benchmark, option=orjson.OPT_INDENT_2).decode())
    os._exit(0)
