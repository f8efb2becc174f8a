"""``AgentlogSessionService`` against ADK's documented session-service semantics.

Real ``google-adk``: a ``Runner`` over an ``LlmAgent`` whose model is a scripted ``BaseLlm``
subclass (``tests/adapters/adk_agent.py``, no network) and two real tools. What each test
states is ADK's contract (``BaseSessionService`` docstrings and its own services' behaviour):
events round-trip exactly, state scopes, ``GetSessionConfig`` filters, ``list_sessions``
order, the stale-writer error, compaction; plus agentlog's own promises — the derived history
is provider-valid and every log passes the invariant companion — across a fresh process and a
SIGKILL mid-step.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from google.adk.apps._configs import EventsCompactionConfig
from google.adk.apps.app import App
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event as AdkEvent
from google.adk.events.event_actions import EventActions
from google.adk.flows.llm_flows.context._compaction import _process_compaction_events
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

import agentlog
from agentlog.adapters import _adk_read
from agentlog.adapters._adk_build import build
from agentlog.adapters._adk_codec import carried, decode
from agentlog.adapters._adk_log import session_key
from agentlog.adapters.adk import AgentlogSessionService, _store_url
from tests.adapters.adk_agent import APP, ScriptedLlm, lookup, remember, runner, turn

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[agentlog.Store]:
    # PostgreSQL: the test server, in a schema of this test's own (the postgres_url fixture).
    url = (
        request.getfixturevalue("postgres_url")
        if request.param == "postgresql"
        else f"sqlite:///{tmp_path}/sessions.db"
    )
    with agentlog.open_store(url) as opened:
        yield opened


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def check_log(store: agentlog.Store, session_id: str, user: str = "u") -> agentlog.Session:
    """The stored session passes the invariant companion and derives a provider-valid history."""
    session = store.inspect(session_key(APP, user, session_id))
    agentlog.check_invariants(session.events)
    agentlog.check_provider_history(session.derive_messages())
    return session


# --- events ---------------------------------------------------------------------------------


def test_a_runner_conversation_reads_back_event_for_event(store: agentlog.Store) -> None:
    async def play() -> tuple[list[AdkEvent], list[AdkEvent], str]:
        service = AgentlogSessionService(store)
        helper = runner(service)
        session = await service.create_session(app_name=APP, user_id="u")
        yielded = await turn(helper, "u", session.id, "what is up")
        yielded += await turn(helper, "u", session.id, "and now")
        stored = await service.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert stored is not None
        await service.close()
        return yielded, stored.events, session.id

    yielded, stored, session_id = run(play())
    assert len(stored) == 8  # user, call, response, answer — twice
    # The runner yields what the agent appended (not the user's message): each reads back equal.
    assert [event for event in stored if event.author != "user"] == yielded
    assert [event.content.parts[0].text for event in stored if event.author == "user"] == [
        "what is up",
        "and now",
    ]
    session = check_log(store, session_id)
    roles = [message["role"] for message in session.derive_messages()]
    assert roles == ["user", "assistant", "tool", "assistant"] * 2


def test_every_event_field_round_trips(store: agentlog.Store) -> None:
    event = AdkEvent(
        invocation_id="inv-1",
        author="helper",
        branch="root.helper",
        model_version="scripted-1",
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="thinking", thought=True, thought_signature=b"\x00\x01sig"),
                types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG\x00")),
                types.Part(text="visible"),
                types.Part(function_call=types.FunctionCall(id="c1", name="f", args={"x": 1.5})),
            ],
        ),
        grounding_metadata=types.GroundingMetadata(web_search_queries=["q"]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=3),
        custom_metadata={"k": ["v", 2]},
        error_code="E1",
        error_message="partly failed",
        finish_reason=types.FinishReason.STOP,
        long_running_tool_ids={"c1"},
        actions=EventActions(
            state_delta={"a": 1},
            artifact_delta={"f.txt": 2},
            escalate=True,
            skip_summarization=True,
            transfer_to_agent="other",
        ),
    )

    async def play() -> AdkEvent:
        service = AgentlogSessionService(store)
        session = await service.create_session(app_name=APP, user_id="u")
        await service.append_event(session, event.model_copy(deep=True))
        stored = await service.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert stored is not None
        await service.close()
        return stored.events[0]

    assert run(play()) == event


def test_partial_events_are_not_stored_and_temp_state_is_never_persisted(
    store: agentlog.Store,
) -> None:
    async def play() -> tuple[Any, Any, int]:
        service = AgentlogSessionService(store)
        session = await service.create_session(app_name=APP, user_id="u")
        await service.append_event(session, AdkEvent(author="helper", partial=True))
        delta = EventActions(state_delta={"temp:t": 1, "s": 2})
        temp = AdkEvent(author="helper", invocation_id="i", actions=delta)
        await service.append_event(session, temp)
        in_memory = dict(session.state)
        stored = await service.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert stored is not None
        await service.close()
        return in_memory, stored, len(stored.events)

    in_memory, stored, count = run(play())
    assert in_memory == {"temp:t": 1, "s": 2}  # temp state lives for the invocation only
    assert stored.state == {"s": 2}
    assert count == 1
    assert stored.events[0].actions.state_delta == {"s": 2}


# --- state ----------------------------------------------------------------------------------


def test_state_scopes(store: agentlog.Store) -> None:
    async def play() -> dict[str, Any]:
        service = AgentlogSessionService(store)
        helper = runner(service)
        first = await service.create_session(
            app_name=APP,
            user_id="ann",
            state={"app:theme": "dark", "user:tz": "UTC", "k": 1, "temp:x": 0},
        )
        await turn(helper, "ann", first.id, "remember Ann")
        second = await service.create_session(app_name=APP, user_id="ann")
        other = await service.create_session(app_name=APP, user_id="bob")
        result = {
            "first": (await service.get_session(app_name=APP, user_id="ann", session_id=first.id)),
            "second": second,
            "other": other,
            "user": await service.get_user_state(app_name=APP, user_id="ann"),
            "bob": await service.get_user_state(app_name=APP, user_id="bob"),
        }
        await service.close()
        return result

    found = run(play())
    assert found["first"].state == {
        "k": 1,
        "last": "Ann",
        "app:theme": "dark",
        "app:remembered": 1,
        "user:tz": "UTC",
        "user:name": "Ann",
    }
    assert found["second"].state == {
        "app:theme": "dark",
        "app:remembered": 1,
        "user:tz": "UTC",
        "user:name": "Ann",
    }
    assert found["other"].state == {"app:theme": "dark", "app:remembered": 1}
    assert found["user"] == {"tz": "UTC", "name": "Ann"}
    assert found["bob"] == {}


# --- reading --------------------------------------------------------------------------------


def test_get_session_config_filters(store: agentlog.Store) -> None:
    async def play() -> dict[str, list[float]]:
        service = AgentlogSessionService(store)
        session = await service.create_session(app_name=APP, user_id="u")
        for stamp in (10.0, 20.0, 30.0, 40.0):
            await service.append_event(
                session, AdkEvent(author="user", invocation_id=f"i{stamp}", timestamp=stamp)
            )
        configs = {
            "recent": GetSessionConfig(num_recent_events=2),
            "none": GetSessionConfig(num_recent_events=0),
            "after": GetSessionConfig(after_timestamp=20.0),
            "both": GetSessionConfig(num_recent_events=1, after_timestamp=20.0),
            "wide": GetSessionConfig(num_recent_events=9, after_timestamp=25.0),
        }
        found = {}
        for name, config in configs.items():
            got = await service.get_session(
                app_name=APP, user_id="u", session_id=session.id, config=config
            )
            assert got is not None
            found[name] = [event.timestamp for event in got.events]
        await service.close()
        return found

    assert run(play()) == {
        "recent": [30.0, 40.0],
        "none": [],
        "after": [20.0, 30.0, 40.0],  # inclusive
        "both": [40.0],
        "wide": [30.0, 40.0],
    }


def test_list_sessions_oldest_update_first_without_events(store: agentlog.Store) -> None:
    async def play() -> tuple[list[tuple[str, str]], list[str], Any]:
        service = AgentlogSessionService(store)
        ids = []
        for user, name in (("ann", "a"), ("bob", "b"), ("ann", "c")):
            session = await service.create_session(
                app_name=APP, user_id=user, session_id=name, state={"user:u": user}
            )
            ids.append(session)
        await service.append_event(ids[0], AdkEvent(author="user", invocation_id="i"))
        everyone = await service.list_sessions(app_name=APP)
        ann = await service.list_sessions(app_name=APP, user_id="ann")
        other_app = await service.list_sessions(app_name="elsewhere")
        await service.close()
        return (
            [(s.user_id, s.id) for s in everyone.sessions],
            [s.id for s in ann.sessions],
            (everyone.sessions[-1], other_app.sessions),
        )

    everyone, ann, (last, other_app) = run(play())
    assert everyone == [("bob", "b"), ("ann", "c"), ("ann", "a")]  # "a" was updated last
    assert ann == ["c", "a"]
    assert last.events == []
    assert last.state == {"user:u": "ann"}
    assert other_app == []


def test_create_get_delete_and_the_errors_adk_names(store: agentlog.Store) -> None:
    async def play() -> None:
        service = AgentlogSessionService(store)
        session = await service.create_session(app_name=APP, user_id="u", session_id=" s1 ")
        assert session.id == "s1"
        with pytest.raises(AlreadyExistsError):
            await service.create_session(app_name=APP, user_id="u", session_id="s1")
        assert await service.get_session(app_name=APP, user_id="v", session_id="s1") is None
        await service.delete_session(app_name=APP, user_id="u", session_id="s1")
        await service.delete_session(app_name=APP, user_id="u", session_id="s1")  # no error
        assert await service.get_session(app_name=APP, user_id="u", session_id="s1") is None
        with pytest.raises(SessionNotFoundError):
            await service.append_event(session, AdkEvent(author="user", invocation_id="i"))
        await service.close()

    run(play())


# --- concurrency ----------------------------------------------------------------------------


def test_two_runners_on_one_session_one_gets_stale_session_error_nothing_lost(
    store: agentlog.Store,
) -> None:
    async def play() -> tuple[Sequence[Any], list[AdkEvent], list[AdkEvent]]:
        service = AgentlogSessionService(store)
        session = await service.create_session(app_name=APP, user_id="u")
        first, second = runner(service), runner(service)
        outcomes = await asyncio.gather(
            turn(first, "u", session.id, "first runner"),
            turn(second, "u", session.id, "second runner"),
            return_exceptions=True,
        )
        stored = await service.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert stored is not None
        await turn(second, "u", session.id, "second runner, again")
        after = await service.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert after is not None
        await service.close()
        return outcomes, stored.events, after.events

    outcomes, stored, after = run(play())
    errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    winners = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    assert len(errors) == 1
    assert isinstance(errors[0], StaleSessionError)
    assert len(winners) == 1
    # The winner's message and every event its agent appended; nothing of the loser's.
    assert stored[1:] == winners[0]
    assert stored[0].content.parts[0].text.endswith("runner")
    assert len(after) == len(stored) + 4
    check_log(store, _session_of(store))


def _session_of(store: agentlog.Store) -> str:
    (info,) = [info for info in store.list() if info.id.startswith("adk:")]
    return info.id.rsplit(":", 1)[1]


# --- compaction -----------------------------------------------------------------------------


class _Summarizer(BaseLlm):
    model: str = "summarizer"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> Any:
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Summary.")]))


@pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL.*:UserWarning")
def test_adk_compaction_becomes_a_replace_citing_exactly_what_it_covers(
    store: agentlog.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from google.adk.agents import LlmAgent

    config = EventsCompactionConfig(
        compaction_interval=2, overlap_size=0, summarizer=LlmEventSummarizer(llm=_Summarizer())
    )
    agent = LlmAgent(name="helper", model=ScriptedLlm(), tools=[lookup, remember])

    async def play() -> str:
        service = AgentlogSessionService(store)
        helper = Runner(
            app=App(name=APP, root_agent=agent, events_compaction_config=config),
            session_service=service,
        )
        session = await service.create_session(app_name=APP, user_id="u")
        for text in ("first " * 200, "second " * 200, "third " * 200):
            await turn(helper, "u", session.id, text)
        await service.close()
        return session.id

    session_id = run(play())
    log = check_log(store, session_id)
    (replace,) = [event for event in log.events if isinstance(event.surface_op, dict)]
    first_two = [
        event.seq
        for event in log.events[: replace.seq]
        if event.type in agentlog.SURFACE_EVENT_TYPES
    ]
    assert list(replace.source_event_seqs) == first_two, "the two compacted invocations' nodes"
    assert replace.surface_op == {
        "op": "replace",
        "startSeq": first_two[0],
        "endSeq": first_two[-1],
    }
    assert log.derive_messages()[0]["content"] == [{"type": "text", "text": "Summary."}]

    decoded: list[str] = []  # the ids of the ADK events decoded

    def counting(payload: Any) -> AdkEvent:
        decoded.append(payload["id"])
        return build(payload)

    monkeypatch.setattr(_adk_read, "build", counting)  # a fresh service reads cold

    async def read() -> list[AdkEvent]:
        service = AgentlogSessionService(store)
        stored = await service.get_session(app_name=APP, user_id="u", session_id=session_id)
        assert stored is not None
        await service.close()
        return stored.events

    events = run(read())
    shadowed = [carried(log.event_at(seq).data) for seq in first_two]
    shadowed_ids = {payload["id"] for payload in shadowed if payload is not None}
    assert shadowed_ids
    assert decoded == [event.id for event in events]
    assert shadowed_ids.isdisjoint(decoded), "no shadowed event is decoded"
    assert events[0].actions.compaction is not None
    assert len(events) == 1 + 4  # the compaction, then the third invocation
    every = [_decoded(log, event) for event in log.events if carried(event.data) is not None]

    # What ADK builds the model's request from is the same with or without the covered events.
    def request_view(history: list[AdkEvent]) -> list[tuple[float, Any]]:
        return [(event.timestamp, event.content) for event in _process_compaction_events(history)]

    assert request_view(events) == request_view(every)


def _decoded(log: agentlog.Session, carrier: agentlog.Event) -> AdkEvent:
    def block(offset: int, index: int) -> Any:
        source = log.event_at(carrier.seq + offset)
        message = source.data if source.type == "user/message" else source.data["message"]
        return message["content"][index]

    return decode(carrier.data, block)


# --- processes ------------------------------------------------------------------------------


def _child(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.adapters.adk_child", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_a_session_resumes_in_a_fresh_process(store: agentlog.Store, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/sessions.db"
    store.close()
    child = _child("converse", url, "s1")
    assert child.wait(timeout=120) == 0

    async def resume() -> tuple[list[int], int]:
        model = ScriptedLlm(seen=[])
        service = AgentlogSessionService(url)
        await turn(runner(service, model), "u", "s1", "remember Cy")
        stored = await service.get_session(app_name=APP, user_id="u", session_id="s1")
        assert stored is not None
        await service.close()
        return model.seen, len(stored.events)

    seen, count = run(resume())
    assert seen == [9, 11], "the model saw both earlier turns"
    assert count == 12
    with agentlog.open_store(url) as reopened:
        check_log(reopened, "s1")


def test_a_session_killed_mid_step_reopens_provider_valid_and_continues(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/sessions.db"
    ready = tmp_path / "ready"
    child = _child("hang", url, "s1", str(ready))
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

    async def resume() -> tuple[list[AdkEvent], list[AdkEvent]]:
        service = AgentlogSessionService(url)
        before = await service.get_session(app_name=APP, user_id="u", session_id="s1")
        assert before is not None
        await turn(runner(service), "u", "s1", "are you there")
        after = await service.get_session(app_name=APP, user_id="u", session_id="s1")
        assert after is not None
        await service.close()
        return before.events, after.events

    with agentlog.open_store(url) as reopened:
        log = check_log(reopened, "s1")
        assert log.events[-2].data["reason"] == {"kind": "interrupted"}
    before, after = run(resume())
    assert before[-1].get_function_calls(), "the killed step's call is the last event"
    assert len(after) == len(before) + 4
    with agentlog.open_store(url) as reopened:
        check_log(reopened, "s1")


# --- adk web / adk api_server ---------------------------------------------------------------


def test_adk_web_takes_an_agentlog_session_service_uri(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from google.adk.cli.service_registry import load_services_module
    from google.adk.cli.utils.service_factory import create_session_service_from_options

    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "services.py").write_text(
        "from agentlog.adapters.adk import register_schemes\nregister_schemes()\n"
    )
    monkeypatch.delitem(sys.modules, "services", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    load_services_module(str(agents))  # what adk web and adk api_server do at startup
    service = create_session_service_from_options(
        base_dir=agents, session_service_uri=f"agentlog+sqlite:///{tmp_path}/web.db"
    )
    assert isinstance(service, AgentlogSessionService)

    async def use() -> str:
        session = await service.create_session(app_name=APP, user_id="u")
        await service.close()
        return session.id

    session_id = run(use())
    with agentlog.open_store(f"sqlite:///{tmp_path}/web.db") as web:
        assert [info.id for info in web.list()] == [session_key(APP, "u", session_id)]


@pytest.mark.parametrize(
    ("uri", "url"),
    [
        ("agentlog+sqlite:///s.db", "sqlite:///s.db"),
        ("agentlog+jsonl+zstd:////abs/dir", "jsonl+zstd:////abs/dir"),
        ("agentlog+memory:", "memory:"),
        ("agentlog://", None),
    ],
)
def test_service_uris_name_agentlog_store_urls(uri: str, url: str | None) -> None:
    assert _store_url(uri) == url
