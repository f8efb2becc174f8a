"""``AgentlogConversationStore`` under the real Pydantic AI, with its own test models.

Agents run on ``FunctionModel`` and ``TestModel`` (no network); conversations are loaded and
saved through the store's public ``load`` / ``save`` / ``fork`` / ``branch`` / ``delete``, which
drive the five storage primitives the adapter implements. Other processes are forked workers of
``tests.adapters.pydantic_ai_child``.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import ConversationConflict
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from agentlog import ExtractiveSummarizer, history_problems, open_store
from agentlog.adapters.pydantic_ai import AgentlogConversationStore, compaction_processor
from tests.adapters.children import ForkServer
from tests.adapters.pydantic_ai_child import make_agent, turn


def url(tmp_path: Path, scheme: str = "sqlite") -> str:
    return f"sqlite:///{tmp_path}/chats.db" if scheme == "sqlite" else f"{scheme}:///{tmp_path}/j"


def pairing_problems(messages: Sequence[ModelMessage]) -> list[str]:
    """How a history breaks what every model requires: each tool call answered next."""
    problems = []
    for index, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            calls = {p.tool_call_id for p in message.parts if p.part_kind == "tool-call"}
            following = messages[index + 1] if index + 1 < len(messages) else None
            answered = {
                p.tool_call_id
                for p in (following.parts if isinstance(following, ModelRequest) else ())
                if p.part_kind == "tool-return"
            }
            problems += [f"message {index}: call {c} unanswered" for c in sorted(calls - answered)]
    return problems


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    server = ForkServer("tests.adapters.pydantic_ai_child")
    yield server
    server.close()


def test_an_agent_with_tools_runs_many_turns_through_the_store(tmp_path: Path) -> None:
    async def main() -> None:
        with AgentlogConversationStore(url(tmp_path)) as store:
            agent = make_agent()
            for n in range(3):
                await turn(store, "chat", f"turn {n}", agent)
            conversation = await store.load("chat")
            assert conversation is not None
            assert len(conversation.messages) == 12
            assert pairing_problems(conversation.messages) == []
            assert conversation.usage.requests == 6
            entries = await store.load_entries("chat")
            assert entries is not None
            assert [e.parent_id for e in entries[1:]] == [e.id for e in entries[:-1]]
            view = open_store(url(tmp_path)).inspect("chat")
            assert history_problems(view.derive_messages()) == []
            assert [m["role"] for m in view.derive_messages()] == [
                "user",
                "assistant",
                "tool",
                "tool",
                "assistant",
            ] * 3

    asyncio.run(main())


def test_test_model_with_tools_round_trips_every_message(tmp_path: Path) -> None:
    async def main() -> None:
        agent: Agent[None, str] = Agent(TestModel())

        @agent.tool_plain
        def lookup(key: str) -> str:
            """Look a key up."""
            return f"value of {key}"

        with AgentlogConversationStore(url(tmp_path)) as store:
            first = await agent.run("look it up", conversation=Conversation(conversation_id="t"))
            await store.save(first)
            loaded = await store.load("t")
            assert loaded is not None
            assert loaded.messages == first.all_messages()
            second = await agent.run("again", conversation=loaded)
            await store.save(second)
            again = await store.load("t")
            assert again is not None
            assert again.messages == second.all_messages()

    asyncio.run(main())


def test_a_fresh_process_resumes_the_conversation(tmp_path: Path, server: ForkServer) -> None:
    store = url(tmp_path)
    server.start(store, "chat", "run", "2")
    assert server.wait_worker() == 0
    with AgentlogConversationStore(store) as reader:
        stored = asyncio.run(reader.load("chat"))
    assert stored is not None
    server.start(store, "chat", "resume")
    seen = ModelMessagesTypeAdapter.validate_python(json.loads(server.read_until("I ")[2:]))
    assert server.wait_worker() == 0
    assert seen[: len(stored.messages)] == stored.messages
    assert len(seen) == len(stored.messages) + 1


@pytest.mark.parametrize("scheme", ["sqlite", "postgresql"])
def test_conflicting_writers_get_conversation_conflict(
    scheme: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # PostgreSQL: the test server, in a schema of this test's own (the postgres_url fixture).
    store = request.getfixturevalue("postgres_url") if scheme == "postgresql" else url(tmp_path)

    async def main() -> None:
        agent = make_agent()
        with AgentlogConversationStore(store) as one:
            await turn(one, "chat", "first", agent)
            two = AgentlogConversationStore(store)
            mine, theirs = await one.load("chat"), await two.load("chat")
            assert mine is not None
            assert theirs is not None
            await one.save(await agent.run("mine", conversation=mine))
            with pytest.raises(ConversationConflict):
                await two.save(await agent.run("theirs", conversation=theirs))
            with pytest.raises(ConversationConflict):  # a new conversation under a taken id
                await two.save(
                    await agent.run("x", conversation=Conversation(conversation_id="chat"))
                )
            reloaded = await two.load("chat")
            assert reloaded is not None
            assert len(reloaded.messages) == 8
            two.close()

    asyncio.run(main())


def test_a_writer_in_another_process_loses_to_a_save_made_meanwhile(
    tmp_path: Path, server: ForkServer
) -> None:
    store, go = url(tmp_path), tmp_path / "go"
    with AgentlogConversationStore(store) as mine:
        asyncio.run(turn(mine, "chat", "first", make_agent()))
        server.start(store, "chat", "conflict", str(go))
        server.read_until("L")
        asyncio.run(turn(mine, "chat", "second", make_agent()))
        go.touch()
        assert server.read_until("C") == "C"
        assert server.wait_worker() == 0
        conversation = asyncio.run(mine.load("chat"))
    assert conversation is not None
    assert len(conversation.messages) == 8


def test_fork_shares_the_history_and_branch_keeps_the_old_one(tmp_path: Path) -> None:
    async def main() -> None:
        agent = make_agent()
        with AgentlogConversationStore(url(tmp_path)) as store:
            for n in range(2):
                await turn(store, "chat", f"turn {n}", agent)
            fork = await store.fork("chat", at=4, new_conversation_id="fork")
            await store.save(await agent.run("forked", conversation=fork))
            forked = await store.load("fork")
            original = await store.load("chat")
            assert forked is not None
            assert original is not None
            assert forked.messages[:4] == original.messages[:4]
            assert len(forked.messages) == 8
            sessions = open_store(url(tmp_path))
            assert sessions.inspect("fork").header["parentSession"] == "chat"
            branched = await store.branch("chat", at=4, expected_revision=original.revision)
            await store.save(await agent.run("branched", conversation=branched))
            record = await store.read_record("chat")
            assert record is not None
            assert len(record.branches) == 1
            view = sessions.inspect("chat")
            assert history_problems(view.derive_messages()) == []
            assert len(view.derive_messages()) == 10  # the branch replaced turn 1
            left = await store.read_history(record.branches[0])
            assert [e.message for e in left] == original.messages

    asyncio.run(main())


def test_delete_hides_the_conversation_but_keeps_the_log(tmp_path: Path) -> None:
    async def main() -> None:
        with AgentlogConversationStore(url(tmp_path)) as store:
            await turn(store, "chat", "hello", make_agent())
            await store.delete("chat")
            assert await store.load("chat") is None
            assert await store.list_conversations() == []
            view = open_store(url(tmp_path)).inspect("chat")
            assert view.derive_messages() == []
            assert sum(e.type == "pydantic-ai/entry" for e in view.events) == 4
            await turn(store, "chat", "again", make_agent())  # the id can be used again
            again = await store.load("chat")
            assert again is not None
            assert len(again.messages) == 4

    asyncio.run(main())


def test_list_conversations_newest_first_by_scope(tmp_path: Path) -> None:
    async def main() -> None:
        agent = make_agent()
        with AgentlogConversationStore(url(tmp_path)) as store:
            for cid, scope in [("a", "ann"), ("b", "bob"), ("c", "ann")]:
                result = await agent.run("hi", conversation=Conversation(conversation_id=cid))
                await store.save(result, scope=scope)
            assert [r.conversation_id for r in await store.list_conversations()] == ["c", "b", "a"]
            listed = await store.list_conversations(scope="ann", limit=1)
            assert [r.conversation_id for r in listed] == ["c"]
            assert await store.load("b", scope="ann") is None

    asyncio.run(main())


def test_the_compaction_processor_summarizes_what_the_model_sees(tmp_path: Path) -> None:
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=[TextPart("ok " + "words " * 150)])

    async def main() -> None:
        processor = compaction_processor(ExtractiveSummarizer(), context_window=2000)
        agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(processor)])
        with AgentlogConversationStore(url(tmp_path)) as store:
            for n in range(6):
                await turn(store, "long", f"task {n} " + "please " * 100, agent)
            stored = await store.load("long")
        assert stored is not None
        # The store keeps every original. Newer pydantic-ai releases also keep the compaction
        # request a history processor returned, as a message of the run; older ones do not.
        originals = [
            message
            for message in stored.messages
            if not all(part.part_kind == "compaction" for part in message.parts)
        ]
        assert len(originals) == 12
        assert [type(m).__name__ for m in originals] == ["ModelRequest", "ModelResponse"] * 6
        last = seen[-1]
        assert len(last) < 12
        summary: Any = last[0].parts[0]
        prompt: Any = last[-1].parts[-1]
        assert summary.part_kind == "compaction"
        assert "Primary Request and Intent" in summary.content
        cited = summary.metadata["agentlog"]
        replaced = cited["replacedMessages"]
        assert replaced == list(range(len(replaced)))  # a head-anchored span
        assert len(last) == 1 + 11 - len(replaced)  # the summary, then what it did not replace
        assert [e["type"] for e in cited["events"]][-1] == "compaction/end"
        assert prompt.content.startswith("task 5")

    asyncio.run(main())


@pytest.mark.parametrize("scheme", ["sqlite", "jsonl"])
def test_a_run_killed_mid_turn_reopens_with_a_history_the_model_accepts(
    scheme: str, tmp_path: Path, server: ForkServer
) -> None:
    rng = random.Random(scheme)
    store = url(tmp_path, scheme)
    for trial in range(6):
        cid = f"crash{trial}"
        server.start(store, cid, "crash")
        if trial:
            server.read_until(f"A {trial}")
        server.read_until("T ")
        threading.Event().wait(rng.uniform(0, 0.03) if trial else 0)
        lines = server.kill_worker()
        acked = sum(line.startswith("A ") for line in lines)

        def checked(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            assert pairing_problems(messages) == []
            return ModelResponse(parts=[TextPart("fine")])

        async def resume(cid: str = cid, acked: int = acked) -> None:
            with AgentlogConversationStore(store) as reopened:
                conversation = await reopened.load(cid)
                messages = conversation.messages if conversation is not None else []
                assert len(messages) >= 4 * acked
                assert pairing_problems(messages) == []
                await turn(reopened, cid, "after the crash", make_agent(FunctionModel(checked)))
            view = open_store(store).inspect(cid)
            assert history_problems(view.derive_messages()) == []

        asyncio.run(resume())


def test_without_pydantic_ai_the_error_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['pydantic_ai'] = None\n"
        "try:\n    import agentlog.adapters.pydantic_ai\n"
        "except ImportError as error:\n    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'agentlog[pydantic-ai]'" in done.stdout
