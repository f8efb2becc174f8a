"""The checkpoint policy: durable before a request, before a tool body, at step and turn end.

A recording sink shows exactly which events each durable write carried (spec/persistence.md
§6.1; DESIGN.md "Durability in the agent loop"); a real JSONL store shows a tool's ``tool/call``
on disk before the tool runs.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agentlog import Agent, Event, ExtractiveSummarizer, StoreError, open_store
from agentlog import messages as m
from agentlog.loop import ModelRequest
from agentlog.loop.checkpoint import Checkpoints
from agentlog.plugins import Summary, SummaryRequest
from agentlog.providers import Scripted
from tests.loop.support import new_session, types


class GroupSink:
    """Records each durable write: a group commit's events, or one event written at once."""

    def __init__(self, delay: float = 0.0) -> None:
        self.writes: list[list[str]] = []
        self.held: list[Event] | None = None
        self.delay = delay

    def persist(self, event: Event) -> None:
        if self.held is None:
            self.writes.append([event.type])
        else:
            self.held.append(event)

    def hold(self) -> None:
        self.held = []

    def release(self, *, write: bool) -> None:
        held, self.held = self.held or [], None
        if write and held:
            time.sleep(self.delay)
            self.writes.append([event.type for event in held])

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def written(self) -> int:
        return sum(len(group) for group in self.writes)


def attached() -> tuple[Any, GroupSink]:
    session = new_session()
    sink = GroupSink()
    session.attach(sink)
    return session, sink


def test_a_tool_turn_is_written_at_the_checkpoints_of_the_policy() -> None:
    session, sink = attached()
    state: dict[str, int] = {}

    def model(request: ModelRequest) -> Any:
        assert sink.written() == session.seq  # every event of the request is durable
        state["requests"] = state.get("requests", 0) + 1
        return Scripted.call("lookup", {}) if state["requests"] == 1 else "done"

    def lookup() -> str:
        """Look something up."""
        assert sink.writes[-1][-1] == "tool/call"  # the body runs after its call is durable
        return "found"

    agent = Agent(session, Scripted(model), tools=[lookup])
    asyncio.run(agent.run("go"))
    assert sink.writes == [
        ["agent/inbox/spliced"],  # queued while idle: written at once
        ["turn/start", "agent/inbox/spliced", "step/start", "system/message", "user/message",
         "request/header", "request/context"],  # before the first request
        ["assistant/message", "tool/call"],  # before the tool body
        ["tool/result", "step/end", "step/start"],  # the step's end, before the second request
        ["assistant/message", "step/end", "turn/end"],  # the step's and the turn's end
    ]  # fmt: skip
    assert sink.written() == session.seq


def test_a_tool_step_costs_two_durable_writes_whatever_its_events() -> None:
    session, sink = attached()
    steps = 5
    script = [Scripted.call("noop", {}) for _ in range(steps)] + ["done"]
    agent = Agent(session, Scripted(script), tools=[lambda: "ok"])
    agent.tools = [agent.tools[0]]
    asyncio.run(agent.run("go"))
    per_step: dict[int, int] = {}
    step = 0
    for group in sink.writes:
        step += group.count("step/start")
        per_step[step] = per_step.get(step, 0) + 1
    # steps 2..5 are whole tool steps: the request (with the previous step's end), the tool
    assert [per_step[s] for s in range(2, steps + 1)] == [2] * (steps - 1)


def test_a_tool_call_is_on_disk_before_the_tool_runs(tmp_path: Path) -> None:
    url = f"jsonl:///{tmp_path}/sessions"
    seen: list[list[str]] = []

    def peek() -> str:
        """Read the session from disk, as another process would."""
        with open_store(url) as reader:
            seen.append(types(reader.inspect("s1").events))
        return "ok"

    with open_store(url) as store, store.create("s1") as session:
        agent = Agent(session, Scripted([Scripted.call("peek", {}), "done"]), tools=[peek])
        asyncio.run(agent.run("go"))
    (on_disk,) = seen
    # what is on disk, and the closers a reader's view adds for the turn still running
    assert on_disk[-6:] == [
        "assistant/message", "tool/call",
        "tool/result", "step/end", "turn/end", "session/end-seed",
    ]  # fmt: skip


class ThreadSink(GroupSink):
    """Records the thread each durable write ran on."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(delay)
        self.threads: list[int] = []

    def release(self, *, write: bool) -> None:
        self.threads.append(threading.get_ident())
        super().release(write=write)


def test_with_other_tasks_on_the_loop_the_durable_write_leaves_it_free() -> None:
    session = new_session()
    sink = ThreadSink(delay=0.2)
    session.attach(sink)
    checkpoints = Checkpoints(session)
    ticks = [0, 0]

    async def tick(which: int) -> None:
        while True:
            await asyncio.sleep(0.01)
            ticks[which] += 1

    async def main() -> None:
        tickers = [asyncio.ensure_future(tick(0)), asyncio.ensure_future(tick(1))]
        checkpoints.append("turn/start", {"turn": 1})
        await checkpoints.durable()
        for ticker in tickers:
            ticker.cancel()

    asyncio.run(main())
    assert min(ticks) >= 5  # the other tasks ran during the 200 ms write
    assert sink.writes == [["turn/start"]]
    assert sink.threads[0] != threading.get_ident()


def test_alone_on_the_loop_the_durable_write_needs_no_thread() -> None:
    session = new_session()
    sink = ThreadSink()
    session.attach(sink)
    agent = Agent(session, Scripted(["hi"]))
    asyncio.run(agent.run("hello"))
    assert sink.threads
    assert set(sink.threads) == {threading.get_ident()}


def test_a_detached_session_has_nothing_to_write() -> None:
    session = new_session()
    checkpoints = Checkpoints(session)
    checkpoints.append("turn/start", {"turn": 1})
    assert not checkpoints.pending
    asyncio.run(checkpoints.durable())
    assert checkpoints.durable_writes == 0


class FailingSink(GroupSink):
    """A store whose group-commit writes fail (a full disk)."""

    def release(self, *, write: bool) -> None:
        self.held = None
        if write:
            raise StoreError("disk full", session_id="s")


def test_a_failed_checkpoint_sends_no_request_and_the_run_reports_it() -> None:
    """Fail-closed (spec/persistence.md §6.1): no model call without durable request events."""
    session = new_session()
    session.attach(FailingSink())
    model = Scripted(["never sent"])
    agent = Agent(session, model)
    with pytest.raises(StoreError, match="disk full"):
        asyncio.run(agent.run("hi"))
    assert model.requests == []
    assert not agent.running


def test_an_append_while_the_write_waits_for_its_thread_does_not_stall_the_checkpoint() -> None:
    """The old group commit is still open on this thread until the worker writes it: an append
    meanwhile joins it instead of opening a nested one (which would keep it from being written)."""
    session = new_session()
    sink = GroupSink()
    session.attach(sink)
    checkpoints = Checkpoints(session)
    blocker = threading.Event()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
        busy = loop.run_in_executor(None, blocker.wait)  # the write waits behind this
        others = [asyncio.ensure_future(asyncio.sleep(5)) for _ in range(2)]  # not alone
        checkpoints.append("turn/start", {"turn": 1})
        write = asyncio.ensure_future(checkpoints.durable())
        await asyncio.sleep(0.01)
        checkpoints.append("user/message", m.user("meanwhile"), surface_op="append")
        blocker.set()
        await busy
        await write
        assert sink.writes == [["turn/start", "user/message"]]
        checkpoints.append("step/start", {"turn": 1, "step": 1})  # a new group commit
        await checkpoints.durable()
        for other in others:
            other.cancel()

    asyncio.run(main())
    assert sink.writes == [["turn/start", "user/message"], ["step/start"]]


def test_a_step_that_compacts_is_durable_before_the_summarizer_calls_a_model() -> None:
    """The step end no longer has its own write; a summarizer (a model call) still waits."""
    session, sink = attached()
    seen: list[tuple[int, list[str]]] = []
    extractive = ExtractiveSummarizer()

    async def summarize(request: SummaryRequest) -> Summary:
        last = [e.type for e in session.events if not e.type.startswith("compaction/")][-1]
        seen.append((sink.written(), [last]))
        return await extractive(request)

    long = "words and more words " * 60
    agent = Agent(
        session, Scripted([long, long, "short"]), compaction=summarize, context_window=1000
    )
    for prompt in ("first " + long, "second " + long, "third"):
        asyncio.run(agent.run(prompt))
    ((written, last),) = seen
    starts = [i for i, e in enumerate(session.events) if e.type == "compaction/start"]
    assert written == starts[0]  # everything before the compaction's own events is on disk
    assert last == ["agent/inbox/spliced"]  # the claim of the turn that compacts
