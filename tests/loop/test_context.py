"""Runtime-context snapshots: logged only when the context changes (spec/plugins.md §4.10)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentlog import Agent, ExtractiveSummarizer, check_provider_history, open_store
from agentlog.loop.context import NO_CONTEXT_TEXT
from agentlog.providers import Scripted
from tests.loop.support import new_session, of_type, plain, text_of, types


class Context:
    """A runtime context the test changes between runs."""

    def __init__(self, text: str | None) -> None:
        self.text = text
        self.renders = 0

    def __call__(self) -> str | None:
        self.renders += 1
        return self.text


def snapshots(events: object) -> list[str]:
    return [
        text_of(e.data)
        for e in of_type(events, "user/message")  # type: ignore[arg-type]
        if e.data["source"]["kind"] == "runtime-context"
    ]


def test_a_snapshot_follows_the_prompt_and_is_not_repeated_while_unchanged() -> None:
    context = Context("cwd: /repo")
    model = Scripted([Scripted.call("noop", {}), "one", "two"])
    agent = Agent(new_session(), model, tools=[lambda: "ok"], runtime_context=context)
    agent.tools = [agent.tools[0]]
    first = asyncio.run(agent.run("hi"))
    second = asyncio.run(agent.run("again"))
    assert types(first.events)[3:7] == [
        "step/start", "system/message", "user/message", "user/message",
    ]  # fmt: skip
    message = of_type(first.events, "user/message")[1]
    assert plain(message.data["source"]) == {"kind": "runtime-context", "form": "snapshot"}
    assert snapshots(first.events) == ["cwd: /repo"]
    assert snapshots(second.events) == []
    assert context.renders == 3  # once per step
    # the model saw the snapshot after the prompt
    assert [text_of(m) for m in model.requests[0].messages if m["role"] == "user"] == [
        "hi",
        "cwd: /repo",
    ]


def test_a_changed_context_emits_a_new_snapshot_and_an_empty_one_says_none_once() -> None:
    context = Context("cwd: /repo")
    agent = Agent(new_session(), Scripted(["a", "b", "c", "d"]), runtime_context=context)
    asyncio.run(agent.run("1"))
    context.text = "cwd: /repo/src"
    changed = asyncio.run(agent.run("2"))
    context.text = None
    emptied = asyncio.run(agent.run("3"))
    still_empty = asyncio.run(agent.run("4"))
    assert snapshots(changed.events) == ["cwd: /repo/src"]
    assert snapshots(emptied.events) == [NO_CONTEXT_TEXT]
    assert snapshots(still_empty.events) == []
    check_provider_history(agent.session.derive_messages())


def test_no_context_emits_nothing() -> None:
    agent = Agent(new_session(), Scripted(["a"]), runtime_context=lambda: "")
    assert snapshots(asyncio.run(agent.run("1")).events) == []


def test_a_snapshot_shadowed_by_a_compaction_is_emitted_again() -> None:
    long = "A detailed note about the build. " * 60
    context = Context("cwd: /repo")
    agent = Agent(
        new_session(),
        Scripted([long, long, "Short."]),
        runtime_context=context,
        compaction=ExtractiveSummarizer(),
        context_window=2_000,
    )
    runs = [asyncio.run(agent.run(p)) for p in ("First: " + long, "Second: " + long, "Third.")]
    compacted = runs[-1]
    assert "compaction/summary" in types(compacted.events)
    assert snapshots(runs[1].events) == []
    assert snapshots(compacted.events) == ["cwd: /repo"]  # the old one was shadowed


def test_a_resumed_session_keeps_its_snapshot(tmp_path: Path) -> None:
    url = f"jsonl:///{tmp_path}/sessions"

    async def ask() -> str:
        return "cwd: /repo"

    with open_store(url) as store, store.create("s") as session:
        asyncio.run(Agent(session, Scripted(["a"]), runtime_context=ask).run("1"))
    with open_store(url) as store, store.open("s") as session:
        agent = Agent(session, Scripted(["b"]), runtime_context=ask)
        assert snapshots(asyncio.run(agent.run("2")).events) == []
