"""``AgentlogCheckpointer``: LangGraph's conformance suite, a real agent graph, a crash.

The public conformance suite (``langgraph-checkpoint-conformance``) runs against the
checkpointer on SQLite, JSONL and memory stores, every capability included. A real
``StateGraph`` (``add_messages``, ``ToolNode``, ``interrupt``; ``tests/adapters/
langgraph_graph.py``) then checks what the suite cannot: every checkpoint read back equals what
LangGraph's own ``InMemorySaver`` keeps of the same run, message histories are stored linearly,
a thread resumes from a fresh checkpointer and from a process killed mid-step.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    empty_checkpoint,
)
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import agentlog
from agentlog.adapters._langgraph_codec import long_strings
from agentlog.adapters._langgraph_index import value_trees
from agentlog.adapters.langgraph import AgentlogCheckpointer
from tests.adapters.langgraph_graph import (
    ask,
    build,
    config,
    pairing_problems,
    run_turns,
)

ROOT = Path(__file__).resolve().parents[2]


def store_url(scheme: str, tmp_path: Path) -> str:
    return {
        "sqlite": f"sqlite:///{tmp_path}/sessions.db",
        "jsonl": f"jsonl:///{tmp_path}/sessions",
        "memory": "memory:",
    }[scheme]


# --- the conformance suite ----------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["sqlite", "jsonl", "memory", "postgresql"])
def test_conformance_suite_passes_every_capability(
    scheme: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # PostgreSQL: the test server, in a schema of this test's own (the postgres_url fixture).
    url = (
        request.getfixturevalue("postgres_url")
        if scheme == "postgresql"
        else store_url(scheme, tmp_path)
    )

    @checkpointer_test(name=f"agentlog-{scheme}")
    async def checkpointer() -> AsyncIterator[AgentlogCheckpointer]:
        saver = AgentlogCheckpointer(url)
        yield saver
        saver.close()

    report = asyncio.run(validate(checkpointer))
    failures = {name: result.failures for name, result in report.results.items()}
    assert report.passed_all_base(), failures
    assert report.passed_all(), failures
    undetected = [name for name, result in report.results.items() if not result.detected]
    assert undetected == [], "every optional capability is implemented and tested"


# --- a real graph -------------------------------------------------------------------------


class _Recording(AgentlogCheckpointer):
    """Also hands every write to LangGraph's ``InMemorySaver``, the reference to compare with."""

    def __init__(self, store: agentlog.Store) -> None:
        super().__init__(store)
        self.reference = InMemorySaver()

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        self.reference.put(config, checkpoint, metadata, new_versions)
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.reference.put_writes(config, writes, task_id, task_path)
        super().put_writes(config, writes, task_id, task_path)


@pytest.mark.parametrize("scheme", ["sqlite", "jsonl"])
def test_every_checkpoint_reads_back_as_langgraphs_own_saver_keeps_it(
    scheme: str, tmp_path: Path
) -> None:
    with agentlog.open_store(store_url(scheme, tmp_path)) as store:
        saver = _Recording(store)
        run_turns(build().compile(checkpointer=saver), "t1", range(4))
        expected = list(saver.reference.list(config("t1")))
        saver.close()
        fresh = AgentlogCheckpointer(store)  # read back from the store, not from memory
        actual = list(fresh.list(config("t1")))
    assert len(actual) == len(expected) == 4 * 6
    for ours, theirs in zip(actual, expected, strict=True):
        assert ours.config == theirs.config
        assert ours.checkpoint == theirs.checkpoint
        assert ours.metadata == theirs.metadata
        assert ours.parent_config == theirs.parent_config
        assert _settled(ours.pending_writes) == _settled(theirs.pending_writes)
    messages = actual[0].checkpoint["channel_values"]["messages"]
    assert len(messages) == 16
    assert pairing_problems(messages) == []


def _settled(writes: Sequence[tuple[str, str, Any]] | None) -> list[Any]:
    """Pending writes with the tool results' ``id`` dropped.

    LangGraph saves a task's writes in a background thread while its loop goes on to apply
    them, and ``add_messages`` gives an id-less ``ToolMessage`` its id in place: whether a
    saver sees the id depends on that race (its channel value always has it).
    """
    settled: list[Any] = []
    for task, channel, value in writes or ():
        if isinstance(value, list):
            value = [
                item.model_copy(update={"id": None}) if isinstance(item, ToolMessage) else item
                for item in value
            ]
        settled.append((task, channel, value))
    return settled


def _thread_bytes(store: agentlog.Store, thread: str) -> int:
    session = store.inspect(f"langgraph:{thread}")
    return sum(len(orjson.dumps(event.to_wire())) for event in session.events)


def test_a_message_history_is_stored_linearly_with_its_content_once() -> None:
    with agentlog.open_store("memory:") as store:
        saver = AgentlogCheckpointer(store)
        graph = build().compile(checkpointer=saver)
        run_turns(graph, "t1", range(5))
        after_five = _thread_bytes(store, "t1")
        run_turns(graph, "t1", range(5, 10))
        after_ten = _thread_bytes(store, "t1")
        session = store.inspect("langgraph:t1")
        messages = graph.get_state(config("t1")).values["messages"]
    # Quadratic storage (the whole list at every step) would more than triple the bytes.
    assert after_ten - after_five < 1.1 * after_five
    stored_text = sum(
        sum(len(text) for text in long_strings(value_trees(event.type, event.data)))
        for event in session.events
    )
    contents = sum(len(message.content) for message in messages)
    assert stored_text == contents, "each message's content is stored exactly once"
    checkpoints = 10 * 6
    bookkeeping = (after_ten - contents) / checkpoints  # the message wrappers included
    assert bookkeeping < 1300, f"{bookkeeping:.0f} bytes per checkpoint besides the messages"


def test_a_jsonl_thread_stores_each_message_once_and_little_besides(tmp_path: Path) -> None:
    with agentlog.open_store(store_url("jsonl", tmp_path)) as store:
        saver = AgentlogCheckpointer(store)
        graph = build().compile(checkpointer=saver)
        run_turns(graph, "t1", range(10))
        messages = graph.get_state(config("t1")).values["messages"]
        saver.close()
    (transcript,) = tmp_path.rglob("*.jsonl")
    lines = transcript.read_bytes().splitlines()[1:]  # after the session header
    # Only the first message of each class is stored with its class path and every field; a
    # later one is a reference to it with the fields that differ (its content, id, ...).
    classes = {type(message) for message in messages}
    assert sum(line.count(b'"$lg":"ext","c":5') for line in lines) == len(classes)
    contents = sum(len(message.content) for message in messages)
    bookkeeping = (sum(len(line) + 1 for line in lines) - contents) / (10 * 6)
    assert bookkeeping < 900, f"{bookkeeping:.0f} bytes per checkpoint besides the messages"


def test_an_interrupted_thread_resumes_from_a_fresh_checkpointer(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    with AgentlogCheckpointer(url) as first:
        graph = build().compile(checkpointer=first)
        run_turns(graph, "t1", range(2))
        graph.invoke(ask(2), config("t1"))  # stops at the interrupt
    with AgentlogCheckpointer(url) as second:
        graph = build().compile(checkpointer=second)
        assert graph.get_state(config("t1")).next == ("review",)
        graph.invoke(Command(resume=True), config("t1"))
        messages = graph.get_state(config("t1")).values["messages"]
    assert len(messages) == 12
    assert pairing_problems(messages) == []


def test_the_async_methods_run_a_graph(tmp_path: Path) -> None:
    async def play() -> int:
        async with AgentlogCheckpointer(f"jsonl:///{tmp_path}/j") as saver:
            graph = build().compile(checkpointer=saver)
            await graph.ainvoke(ask(0), config("t1"))
            await graph.ainvoke(Command(resume=True), config("t1"))
            state = await graph.aget_state(config("t1"))
            history = [item async for item in graph.aget_state_history(config("t1"))]
            return len(state.values["messages"]) * 100 + len(history)

    assert asyncio.run(play()) == 4 * 100 + 6


def test_a_value_msgpack_cannot_hold_is_refused_never_pickled() -> None:
    with AgentlogCheckpointer("memory:") as saver:
        cfg: RunnableConfig = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"bad": lambda: None}
        checkpoint["channel_versions"] = {"bad": 1}
        with pytest.raises(TypeError, match="not msgpack serializable"):
            saver.put(cfg, checkpoint, {"source": "input", "step": -1, "parents": {}}, {"bad": 1})
        assert saver.get_tuple(cfg) is None


# --- crash --------------------------------------------------------------------------------


def test_a_thread_killed_mid_step_resumes_with_a_provider_valid_history(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    ready = tmp_path / "ready"
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.adapters.langgraph_crash_child", url, "t1", str(ready)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert child.poll() is None, "the child died before its tool ran"
            assert time.monotonic() < deadline, "the child never reached its tool"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    with AgentlogCheckpointer(url) as saver:
        graph = build().compile(checkpointer=saver)
        state = graph.get_state(config("t1"))
        assert state.next == ("tools",), "the step the kill interrupted is still to run"
        assert pairing_problems(state.values["messages"]) != [], "its tool call is unanswered"
        graph.invoke(None, config("t1"))
        messages = graph.get_state(config("t1")).values["messages"]
        session = saver.store.inspect("langgraph:t1")
    assert len(messages) == 8
    assert pairing_problems(messages) == []
    agentlog.check_invariants(session.events)
    agentlog.check_provider_history(session.derive_messages())
