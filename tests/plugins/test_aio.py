"""The plugin entry points on ``agentlog.aio`` sessions: the same names, awaited (STYLE.md §8).

Every plugin entry point — a public function of ``agentlog.plugins`` whose first parameter is
the session — has a form in ``agentlog.aio`` with its name and parameters. Each is run here on
a real attached ``AsyncSession`` of a JSONL and a SQLite store, and what it wrote is read back
from storage. A compaction's commit is one group commit: another task's appends land before or
after it, never inside.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

import agentlog
from agentlog import ExtractiveSummarizer, PruneConfig, aio, plugins
from agentlog import messages as m
from agentlog.aio import AsyncSession, AsyncStore
from tests.plugins.agent import MODEL, PROVIDER
from tests.plugins.compaction.summarizers import Scripted

LONG = "lorem ipsum dolor sit amet " * 80  # ~2 KB per message
SMALL = PruneConfig(threshold_chars=2000, head_chars=500, tail_chars=500)
ENTRY_POINTS = [
    "compact",
    "compact_if_needed",
    "compact_region",
    "expand",
    "offload_for_failure",
    "offload_images",
    "prune_tool_results",
]


# --- parity ------------------------------------------------------------------------------------


NOT_ENTRY_POINTS = {
    "install_compaction_invariants": "installs a companion, no I/O: give it ``session.sync``",
}


def test_the_entry_points_are_every_plugin_function_that_takes_a_session() -> None:
    """A new entry point must be added here, and so get its async form."""
    found = [
        name
        for name in plugins.__all__
        if inspect.isfunction(getattr(plugins, name))
        and next(iter(inspect.signature(getattr(plugins, name)).parameters)) == "session"
        and name not in NOT_ENTRY_POINTS
    ]
    assert sorted(found) == ENTRY_POINTS


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_every_entry_point_has_an_async_form_with_its_name_and_signature(name: str) -> None:
    sync, asynchronous = getattr(plugins, name), getattr(aio, name)
    assert name in aio.__all__
    ours = inspect.signature(asynchronous).parameters.values()
    theirs = inspect.signature(sync).parameters.values()
    assert [(p.name, p.kind, p.default) for p in ours] == [
        (p.name, p.kind, p.default) for p in theirs
    ]
    # Writers are awaited; expand only reads, and AsyncSession reads stay synchronous.
    assert inspect.iscoroutinefunction(asynchronous) == (name != "expand")
    assert inspect.getdoc(asynchronous)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("prune_tool_results", {}),
        ("offload_images", {"count": 1}),
        ("offload_for_failure", {"failure": {"code": "IMAGE_OFFLOAD_REQUIRED"}}),
    ],
)
def test_a_sync_writer_refuses_an_async_session_naming_its_twin(
    name: str, args: dict[str, Any], tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with await aio.open_store(f"jsonl:///{tmp_path}") as store:
            session = await store.create("s")
            with pytest.raises(TypeError, match=f"await agentlog.aio.{name}"):
                getattr(plugins, name)(session, **args)

    asyncio.run(scenario())


# --- a real attached aio session -------------------------------------------------------------


class AsyncAgent:
    """Appends what an agent loop would, awaited (``tests/plugins/agent.py``, for aio)."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.turn = self.step = self.calls = 0

    async def start_turn(self, prompt: str | list[Any]) -> None:
        self.turn += 1
        self.step = 0
        await self.session.append("turn/start", {"turn": self.turn})
        await self.session.append("user/message", m.user(prompt), surface_op="append")

    async def start_step(self) -> None:
        self.step += 1
        await self.session.append("step/start", {"turn": self.turn, "step": self.step})
        if self.turn == 1 and self.step == 1:
            header = {"config": {"provider": PROVIDER, "model": MODEL}}
            await self.session.append("request/header", {"header": header, "reason": "initial"})

    async def reply(self, text: str, *, tool_output: Any = None) -> None:
        content: list[Any] = [m.text(text)]
        if tool_output is not None:
            self.calls += 1
            content.append(m.tool_call(f"call{self.calls}", "bash", "{}"))
        data = m.assistant(content, provider=PROVIDER, model=MODEL, turn=self.turn, step=self.step)
        await self.session.append("assistant/message", data, surface_op="append")
        if tool_output is not None:
            call_id = f"call{self.calls}"
            call = {"turn": self.turn, "step": self.step, "callId": call_id, "name": "bash"}
            await self.session.append("tool/call", {**call, "arguments": "{}"})
            result = m.tool_result(call_id, tool_output, turn=self.turn, step=self.step)
            await self.session.append("tool/result", result, surface_op="append")
        await self.session.append("step/end", {"turn": self.turn, "step": self.step})

    async def exchange(self, prompt: str, answer: str, *, tool_output: Any = None) -> None:
        await self.start_turn(prompt)
        if tool_output is not None:
            await self.start_step()
            await self.reply("let me look", tool_output=tool_output)
        await self.start_step()
        await self.reply(answer)
        await self.end_turn()

    async def end_turn(self) -> None:
        reason = {"kind": "completed"}
        await self.session.append("turn/end", {"turn": self.turn, "reason": reason})


Scenario = Callable[[AsyncStore, AsyncAgent], Coroutine[Any, Any, None]]


@pytest.fixture(params=["jsonl", "sqlite"])
def run(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[Scenario], list[Any]]:
    """Run a scenario on an aio session of a real store; the stored events, read back."""
    url = f"sqlite:///{tmp_path}/s.db" if request.param == "sqlite" else f"jsonl:///{tmp_path}"

    def go(scenario: Scenario) -> list[Any]:
        async def main() -> None:
            async with await aio.open_store(url) as store:
                agent = AsyncAgent(await store.create("s"))
                for turn in range(3):
                    await agent.exchange(
                        f"task {turn}: {LONG}", f"answer {turn}: {LONG}", tool_output=LONG * 5
                    )
                await scenario(store, agent)

        asyncio.run(main())
        with agentlog.open_store(url) as store:
            return list(store.inspect("s").events)

    return go


def types_from(events: list[Any], seq: int) -> list[str]:
    return [event.type for event in events[seq:]]


def test_manual_compaction_on_an_aio_session(run: Callable[[Scenario], list[Any]]) -> None:
    """The repro: ``await agentlog.compact(aio_session, ExtractiveSummarizer())``."""
    outcome: dict[str, Any] = {}

    async def scenario(_store: AsyncStore, agent: AsyncAgent) -> None:
        outcome["count"] = agent.session.seq
        outcome["result"] = await agentlog.compact(agent.session, ExtractiveSummarizer())
        outcome["nodes"] = agent.session.surface.nodes
        outcome["expanded"] = aio.expand(agent.session, outcome["result"].replacement_seq)

    stored = run(scenario)
    result = outcome["result"]
    assert types_from(stored, outcome["count"])[:4] == [
        "compaction/start",
        "compaction/summary",
        "user/message",
        "compaction/end",
    ]
    assert outcome["nodes"][0] == result.replacement_seq
    assert [event.seq for event in outcome["expanded"]] == list(result.shadowed_seqs)


def test_aio_compact_is_the_same_coroutine(run: Callable[[Scenario], list[Any]]) -> None:
    outcome: dict[str, Any] = {}

    async def scenario(_store: AsyncStore, agent: AsyncAgent) -> None:
        outcome["result"] = await aio.compact(agent.session, Scripted())

    stored = run(scenario)
    assert aio.compact is agentlog.compact
    assert stored[outcome["result"].end_seq].type == "compaction/end"


def test_automatic_compaction_prunes_then_compacts_inside_the_open_turn(
    run: Callable[[Scenario], list[Any]],
) -> None:
    outcome: dict[str, Any] = {}

    async def scenario(_store: AsyncStore, agent: AsyncAgent) -> None:
        await agent.start_turn("more")
        outcome["count"] = agent.session.seq
        outcome["result"] = await aio.compact_if_needed(
            agent.session, Scripted(), context_window=4000, prune=SMALL
        )

    stored = run(scenario)
    written = [event.type for event in stored[outcome["count"] : outcome["result"].end_seq + 1]]
    assert written.count("compaction/prune") == 3  # every bulky tool output, first
    assert written[-4:] == [
        "compaction/start",
        "compaction/summary",
        "user/message",
        "compaction/end",
    ]
    assert stored[outcome["result"].start_seq].data["turn"] == 4  # the open turn owns it


def test_overflow_recovery_and_an_explicit_region(run: Callable[[Scenario], list[Any]]) -> None:
    outcome: dict[str, Any] = {}

    async def scenario(_store: AsyncStore, agent: AsyncAgent) -> None:
        await agent.start_turn("more")
        nodes = agent.session.surface.nodes
        region = await aio.compact_region(agent.session, nodes[0], nodes[3], Scripted())
        overflow = await aio.compact_if_needed(
            agent.session, Scripted(), trigger="context-overflow"
        )
        outcome["results"] = (region, overflow)
        outcome["nodes"] = agent.session.surface.nodes

    stored = run(scenario)
    region, overflow = outcome["results"]
    assert region.shadowed_seqs[0] == 1
    assert overflow.shadowed_seqs[0] == region.replacement_seq
    assert outcome["nodes"] == (overflow.replacement_seq, outcome["nodes"][-1])
    assert stored[overflow.end_seq].type == "compaction/end"


def test_pruning_twin_writes_and_a_second_pass_is_a_no_op(
    run: Callable[[Scenario], list[Any]],
) -> None:
    outcome: dict[str, Any] = {}

    async def scenario(_store: AsyncStore, agent: AsyncAgent) -> None:
        await agent.start_turn("more")
        outcome["first"] = await aio.prune_tool_results(agent.session, SMALL)
        outcome["second"] = await aio.prune_tool_results(agent.session, SMALL)

    stored = run(scenario)
    first = outcome["first"]
    assert len(first.pruned) == 3
    assert outcome["second"].pruned == ()
    for done in first.pruned:
        assert stored[done.replacement_seq - 1].type == "compaction/prune"
        assert stored[done.replacement_seq].source_event_seqs == [done.original_seq]
        assert first.chars_removed > 0


def img(name: str) -> dict[str, Any]:
    return m.image(name, "image/png", size=2048, width=64, height=64, name=f"{name}.png")


def test_image_offload_twins(run: Callable[[Scenario], list[Any]]) -> None:
    outcome: dict[str, Any] = {}

    async def scenario(_store: AsyncStore, agent: AsyncAgent) -> None:
        await agent.start_turn([m.text("compare"), img("a"), img("b"), img("c")])
        prompt = agent.session.surface.nodes[-1]
        refused = {"code": "IMAGE_OFFLOAD_REQUIRED", "offloadImages": 2}
        first = await aio.offload_for_failure(agent.session, refused)
        other = await aio.offload_for_failure(agent.session, {"code": "SERVER"})
        rest = await aio.offload_images(agent.session, 5)
        none_left = await aio.offload_images(agent.session, 1)
        outcome["events"] = (first, other, rest, none_left)
        outcome["prompt"] = prompt

    stored = run(scenario)
    first, other, rest, none_left = outcome["events"]
    prompt = outcome["prompt"]
    assert first.data == {"targets": [{"seq": prompt, "imageIndexes": [0, 1]}]}
    assert rest.data == {"targets": [{"seq": prompt, "imageIndexes": [2]}]}
    assert other is None
    assert none_left is None
    assert [stored[first.seq].type, stored[rest.seq].type] == ["image/offload"] * 2


def test_a_compaction_commit_is_never_split_by_another_tasks_appends(
    run: Callable[[Scenario], list[Any]],
) -> None:
    """Another task keeps appending while the summary is written and while it commits."""
    outcome: dict[str, Any] = {}

    async def scenario(_store: AsyncStore, agent: AsyncAgent) -> None:
        session = agent.session
        stop = asyncio.Event()

        async def chatter() -> None:
            while not stop.is_set():
                await session.append("test/chatter", {}, ignorable=True)
                await asyncio.sleep(0)

        async def summarize(request: Any) -> Any:
            await asyncio.sleep(0.05)  # chatter lands meanwhile
            return await Scripted()(request)

        task = asyncio.create_task(chatter())
        await asyncio.sleep(0.01)
        outcome["result"] = await aio.compact(session, summarize)
        stop.set()
        await task

    stored = run(scenario)
    result = outcome["result"]
    assert [e.type for e in stored[result.summary_seq : result.end_seq + 1]] == [
        "compaction/summary",
        "user/message",
        "compaction/end",
    ]
    between = [e.type for e in stored[result.start_seq + 1 : result.summary_seq]]
    assert between
    assert set(between) == {"test/chatter"}
    assert [e.seq for e in stored] == list(range(len(stored)))
