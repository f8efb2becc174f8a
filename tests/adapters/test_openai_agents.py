"""``AgentlogSession`` under the real OpenAI Agents SDK and its scripted test model.

Each test runs the SDK's own ``Runner`` (``run``, ``run_sync``, ``run_streamed``) with
``agents.testing.ScriptedModel`` — no network — and checks the SDK's documented session
semantics and what agentlog adds: items kept exactly, a provider-valid derived history,
removals that shadow instead of deleting, durability across processes and crashes.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest
from agents import Agent, Runner, function_tool
from agents.extensions.memory import EncryptedSession
from agents.memory import (
    OpenAIResponsesCompactionSession,
    Session,
    SessionABC,
    SessionSettings,
)
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from cryptography.fernet import Fernet
from openai import AsyncOpenAI

import agentlog
from agentlog import ExtractiveSummarizer, history_problems, open_store
from agentlog.adapters.openai_agents import AgentlogSession
from agentlog.plugins import Summary, SummaryRequest
from tests.adapters.children import ForkServer
from tests.adapters.test_responses import response_problems


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def tool_turn(tag: str) -> ScriptedModel:
    """A turn in which the model calls ``add`` twice in parallel, then answers."""
    return ScriptedModel(
        [
            [
                function_call("add", {"a": 1, "b": 2}, call_id=f"{tag}-1"),
                function_call("add", {"a": 3, "b": 4}, call_id=f"{tag}-2"),
            ],
            [assistant_message(f"{tag}: 3 and 7", item_id=f"msg-{tag}")],
        ]
    )


def agent(model: ScriptedModel) -> Agent[Any]:
    return Agent(name="calc", instructions="Use the tool.", model=model, tools=[add])


def url(tmp_path: Path, scheme: str = "sqlite") -> str:
    return (
        f"sqlite:///{tmp_path}/sessions.db" if scheme == "sqlite" else f"{scheme}:///{tmp_path}/j"
    )


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    server = ForkServer("tests.adapters.openai_agents_child")
    yield server
    server.close()


def test_it_is_an_sdk_session() -> None:
    with AgentlogSession("s", "memory:") as session:
        assert isinstance(session, Session)
        assert session.session_settings == SessionSettings()


@pytest.mark.parametrize("scheme", ["sqlite", "postgresql"])
def test_runner_keeps_every_item_and_the_history_stays_valid(
    scheme: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # PostgreSQL: the test server, in a schema of this test's own (the postgres_url fixture).
    store = request.getfixturevalue("postgres_url") if scheme == "postgresql" else url(tmp_path)

    async def main() -> None:
        with AgentlogSession("chat", store) as session:
            first = await Runner.run(agent(tool_turn("a")), "add please", session=session)
            assert first.final_output == "a: 3 and 7"
            second_model = tool_turn("b")
            await Runner.run(agent(second_model), "again", session=session)
            items = await session.get_items()
            sent = second_model.first_call.input if second_model.first_call else []
            assert items[: len(sent)] == sent  # what the SDK sent is what it stored
            assert [i.get("type") for i in items].count("function_call_output") == 4
            assert response_problems(items) == []
            log = session.agentlog_session
            assert history_problems(log.derive_messages()) == []
            assert [e.type for e in log.events if e.type.startswith("tool/")] == [
                "tool/call",
                "tool/call",
                "tool/result",
                "tool/result",
            ] * 2
            result = next(e for e in log.events if e.type == "tool/result")
            cited = log.event_at(result.source_event_seqs[0])
            assert (cited.type, cited.data["callId"]) == ("tool/call", "a-1")

    asyncio.run(main())


def test_run_sync_and_run_streamed(tmp_path: Path) -> None:
    with AgentlogSession("chat", url(tmp_path)) as session:
        result = Runner.run_sync(agent(tool_turn("a")), "add", session=session)
        assert result.final_output == "a: 3 and 7"

        async def streamed() -> list[Any]:
            run = Runner.run_streamed(agent(tool_turn("b")), "stream it", session=session)
            async for _ in run.stream_events():
                pass
            assert run.final_output == "b: 3 and 7"
            return await session.get_items()

        items = asyncio.run(streamed())
    assert len(items) == 12
    assert items[6] == {"role": "user", "content": "stream it"}
    assert response_problems(items) == []


def test_a_run_in_a_new_process_reads_the_history_back(tmp_path: Path, server: ForkServer) -> None:
    store = url(tmp_path)
    server.start(store, "chat", "run", 2)
    assert server.wait_worker() == 0
    with AgentlogSession("chat", store) as session:
        stored = asyncio.run(session.get_items())
    assert len(stored) == 12
    server.start(store, "chat", "resume")
    seen = json.loads(server.read_until("I ")[2:])
    assert server.wait_worker() == 0
    assert seen == [*stored, {"role": "user", "content": "and now?"}]


def test_limit_follows_the_sdk_semantics(tmp_path: Path) -> None:
    async def main() -> None:
        settings = SessionSettings(limit=4)
        with AgentlogSession("chat", url(tmp_path), session_settings=settings) as session:
            await Runner.run(agent(tool_turn("a")), "one", session=session)
            everything = await session.get_items(limit=-1)
            assert len(everything) == 6
            assert await session.get_items() == everything[-4:]  # session_settings.limit
            assert await session.get_items(limit=2) == everything[-2:]  # explicit wins
            assert await session.get_items(limit=0) == []
            assert await session.get_items(limit=100) == everything
            model = ScriptedModel([[assistant_message("ok")]])
            await Runner.run(agent(model), "two", session=session)
            assert model.first_call is not None
            # The runner reads the latest 4 and, as for SQLiteSession, drops the window's
            # output whose call fell outside it (a-1's).
            _, _, call, _, output, reply = everything
            assert model.first_call.input == [
                call,
                output,
                reply,
                {"role": "user", "content": "two"},
            ]

    asyncio.run(main())


def test_pop_item_after_a_tool_call_shadows_and_a_fork_gets_it_back(tmp_path: Path) -> None:
    async def main() -> None:
        store = open_store(url(tmp_path))
        with AgentlogSession("chat", store) as session:
            await Runner.run(agent(tool_turn("a")), "add", session=session)
            before = session.agentlog_session.seq - 1
            reply = await session.pop_item()
            output = await session.pop_item()
            assert reply is not None
            assert reply["type"] == "message"
            assert output == {"call_id": "a-2", "output": "7", "type": "function_call_output"}
            items = await session.get_items()
            assert len(items) == 4
            assert output not in items
            model = ScriptedModel([[assistant_message("fine")]])
            await Runner.run(agent(model), "next", session=session)
            assert model.first_call is not None
            assert response_problems(model.first_call.input) == []  # the SDK drops the orphan
            log = session.agentlog_session
            assert [e.data["removedBy"] for e in log.events if "removedBy" in e.data] == [
                "pop_item",
                "pop_item",
            ]
        store.fork("chat", boundary=before, child_id="fork").close()
        with AgentlogSession("fork", store) as fork:
            restored = await fork.get_items()
            assert restored[-2:] == [output, reply]
        store.close()

    asyncio.run(main())


def test_clear_session_shadows_everything_and_expand_shows_it(tmp_path: Path) -> None:
    async def main() -> None:
        with AgentlogSession("chat", url(tmp_path)) as session:
            await Runner.run(agent(tool_turn("a")), "add", session=session)
            items = await session.get_items()
            nodes = session.agentlog_session.surface.nodes
            await session.clear_session()
            assert await session.get_items() == []
            log = session.agentlog_session
            removal = log.event_at(log.surface.nodes[0])
            assert removal.data["removedBy"] == "clear_session"
            assert [e.seq for e in agentlog.expand(log, removal.seq)] == list(nodes)
            await Runner.run(
                agent(ScriptedModel([[assistant_message("new")]])), "hi", session=session
            )
            assert len(await session.get_items()) == 2
        with AgentlogSession("chat", url(tmp_path)) as reopened:
            assert len(await reopened.get_items()) == 2
        assert len(items) == 6

    asyncio.run(main())


def test_one_session_shared_by_five_threads_each_with_its_own_loop(tmp_path: Path) -> None:
    session = AgentlogSession("shared", url(tmp_path))
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        async def turns() -> None:
            for turn in range(4):
                await Runner.run(
                    agent(tool_turn(f"{name}{turn}")), f"{name} {turn}", session=session
                )

        try:
            asyncio.run(turns())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    items = asyncio.run(session.get_items())
    session.close()
    assert len(items) == 5 * 4 * 6
    assert response_problems(items) == []
    for i in range(5):  # each thread's turns, in its order
        prompts = [x["content"] for x in items if x.get("role") == "user"]
        assert [p for p in prompts if p.startswith(f"w{i} ")] == [f"w{i} {t}" for t in range(4)]
    reopened = AgentlogSession("shared", url(tmp_path))
    assert asyncio.run(reopened.get_items()) == items
    assert history_problems(reopened.agentlog_session.derive_messages()) == []
    reopened.close()


def test_encrypted_session_over_an_agentlog_session(tmp_path: Path) -> None:
    key = Fernet.generate_key().decode()

    async def main() -> None:
        underlying = AgentlogSession("secret", url(tmp_path))
        # EncryptedSession is annotated for SessionABC; any Session protocol implementation works.
        backend = cast(SessionABC, underlying)
        session = EncryptedSession("secret", underlying_session=backend, encryption_key=key)
        await Runner.run(agent(tool_turn("a")), "add", session=session)
        plain = await session.get_items()
        assert len(plain) == 6
        assert plain[0] == {"content": "add", "role": "user"}
        stored = await underlying.get_items()
        assert all(set(item) == {"__enc__", "v", "kid", "payload"} for item in stored)
        assert (await session.pop_item()) == plain[-1]
        underlying.close()
        again = AgentlogSession("secret", url(tmp_path))
        reopened = EncryptedSession(
            "secret", underlying_session=cast(SessionABC, again), encryption_key=key
        )
        assert await reopened.get_items() == plain[:-1]
        again.close()

    asyncio.run(main())


class SlowSummarizer:
    """Summarizes extractively, after letting another writer add items meanwhile."""

    def __init__(self) -> None:
        self.session: AgentlogSession | None = None
        self.inner = ExtractiveSummarizer()

    async def __call__(self, request: SummaryRequest) -> Summary:
        assert self.session is not None
        await self.session.add_items([{"role": "user", "content": "written meanwhile"}])
        return await self.inner(request)


def test_run_compaction_summarizes_losslessly_and_keeps_concurrent_items(tmp_path: Path) -> None:
    async def main() -> None:
        summarizer = SlowSummarizer()
        never = lambda context: False  # noqa: E731  # only the forced call compacts
        session = AgentlogSession(
            "long", url(tmp_path), summarizer=summarizer, should_trigger_compaction=never
        )
        summarizer.session = session
        for turn in range(4):
            await Runner.run(
                agent(tool_turn(f"t{turn}")), f"task {turn} " + "x " * 200, session=session
            )
        before = await session.get_items()
        await session.run_compaction({"force": True})
        after = await session.get_items()
        assert len(after) < len(before)
        assert after[0]["role"] == "user"
        assert "<compacted-summary>" in after[0]["content"][0]["text"]
        # The newest reply is kept verbatim, and what was written meanwhile comes after it.
        assert after[1:] == [before[-1], {"role": "user", "content": "written meanwhile"}]
        log = session.agentlog_session
        checkpoint = log.event_at(log.surface.nodes[0])
        originals = agentlog.expand(log, checkpoint.seq)
        assert [e.seq for e in originals] == list(checkpoint.source_event_seqs[2:])
        model = ScriptedModel([[assistant_message("still here")]])
        await Runner.run(agent(model), "go on", session=session)
        assert model.first_call is not None
        assert model.first_call.input[0] == after[0]
        session.close()

    asyncio.run(main())


def test_the_runner_compacts_when_the_trigger_says_so(tmp_path: Path) -> None:
    async def main() -> None:
        session = AgentlogSession(
            "auto",
            url(tmp_path),
            summarizer=ExtractiveSummarizer(),
            should_trigger_compaction=lambda context: len(context["session_items"]) >= 12,
        )
        for turn in range(3):
            await Runner.run(
                agent(tool_turn(f"t{turn}")), f"task {turn} " + "y " * 200, session=session
            )
        assert any(e.type == "compaction/end" for e in session.agentlog_session.events)
        assert len(await session.get_items()) < 18
        session.close()

    asyncio.run(main())


class CompactServer(http.server.BaseHTTPRequestHandler):
    """A local stand-in for the remote ``POST /responses/compact`` (the model cannot run here)."""

    requests: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        CompactServer.requests.append({"path": self.path, **body})
        users = [i for i in body["input"] if i.get("role") == "user"]
        output = [
            *(
                {
                    "type": "message",
                    "role": "user",
                    "id": f"m{n}",
                    "status": "completed",
                    "content": [{"type": "input_text", "text": u["content"]}],
                }
                for n, u in enumerate(users)
            ),
            {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque-summary"},
        ]
        usage = {
            "input_tokens": 10,
            "output_tokens": 2,
            "total_tokens": 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        payload = json.dumps(
            {
                "id": "cmp",
                "created_at": 0,
                "object": "response.compaction",
                "output": output,
                "usage": usage,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def compact_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CompactServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_responses_compact_output_replaces_the_history_in_one_cited_replace(
    tmp_path: Path, compact_server: str
) -> None:
    async def main() -> None:
        client = AsyncOpenAI(base_url=compact_server, api_key="test", max_retries=0)
        underlying = AgentlogSession("sdk", url(tmp_path))
        session = OpenAIResponsesCompactionSession("sdk", underlying, client=client)
        await Runner.run(agent(tool_turn("a")), "add", session=session)
        nodes = underlying.agentlog_session.surface.nodes
        await session.run_compaction({"force": True, "compaction_mode": "input"})
        assert CompactServer.requests[-1]["path"] == "/v1/responses/compact"
        items = await underlying.get_items()
        assert [i.get("type") for i in items] == ["message", "compaction"]
        log = underlying.agentlog_session
        removal = log.event_at(log.surface.nodes[0])
        assert removal.data["removedBy"] == "compaction"
        assert removal.source_event_seqs == list(nodes)
        underlying.close()

    asyncio.run(main())


def run_checked_turn(session: AgentlogSession) -> None:
    """One more turn whose model refuses any input with an unanswered or stray call."""

    def answer(call: ModelCall) -> ModelStep:
        assert response_problems(call.input) == []
        return ModelStep(output=[assistant_message("ok")])

    model = ScriptedModel([ModelStep.respond(answer)])
    asyncio.run(Runner.run(agent(model), "after the crash", session=session))
    model.assert_complete()


@pytest.mark.parametrize("scheme", ["sqlite", "jsonl"])
def test_a_run_killed_mid_turn_reopens_with_every_call_answered(
    scheme: str, tmp_path: Path, server: ForkServer
) -> None:
    """Killed inside a tool (mid-turn) or at a random moment of the following turns."""
    rng = random.Random(scheme)
    store = url(tmp_path, scheme)
    for trial in range(6):
        session_id = f"crash{trial}"
        server.start(store, session_id, "crash")
        if trial:
            server.read_until(f"A {trial}")
        server.read_until("T ")
        threading.Event().wait(rng.uniform(0, 0.03) if trial else 0)
        lines = server.kill_worker()
        acked = [int(line[2:]) for line in lines if line.startswith("A ")]
        with AgentlogSession(session_id, store) as session:
            items = asyncio.run(session.get_items())
            assert response_problems(items) == []
            assert history_problems(session.agentlog_session.derive_messages()) == []
            prompts = [item["content"] for item in items if item.get("role") == "user"]
            assert [f"turn {n}" for n in acked] == prompts[: len(acked)]
            run_checked_turn(session)


def test_a_write_cut_short_by_a_crash_is_answered_by_repair_results(tmp_path: Path) -> None:
    """A JSONL log that ends after a call (a torn write): the reopen closes the turn."""
    store = url(tmp_path, "jsonl")
    with AgentlogSession("torn", store) as session:
        asyncio.run(Runner.run(agent(tool_turn("a")), "add", session=session))
    log = next(tmp_path.rglob("session.v4.jsonl"))
    lines = log.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b'"tool/call"' in line)
    log.write_bytes(b"".join(lines[: cut + 1]))  # the first call and nothing after it
    with AgentlogSession("torn", store) as session:
        items = asyncio.run(session.get_items())
        assert [i.get("type") for i in items] == [
            None,
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
        ]
        assert "outcome is unknown" in items[3]["output"]  # a started call
        assert "before the Harness recorded it as started" in items[4]["output"]
        assert response_problems(items) == []
        run_checked_turn(session)


def test_without_the_sdk_the_error_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['agents'] = None\n"
        "from agentlog.adapters.openai_agents import AgentlogSession\n"
        "try:\n    AgentlogSession('s', 'memory:')\n"
        "except ImportError as error:\n    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'agentlog[openai-agents]'" in done.stdout
