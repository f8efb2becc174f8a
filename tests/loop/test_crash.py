"""Crash safety of the loop, with real processes and SIGKILL (spec/persistence.md §6.1).

A child process (``crash_child.py``) runs an ``Agent`` over a JSONL or SQLite store, talking
HTTP to a fake Chat Completions server in this process, and is killed with SIGKILL (a) while its
request is in flight — the server holds it unanswered — and (b) inside a tool body that blocks.
Reopening the session gives exactly the shapes of §6.1: what the checkpoints made durable, then
the repair closers (for (b) a ``TOOL_OUTCOME_UNKNOWN`` result whose text says "Do not retry
blindly."). A new process then resumes the session with ``Agent(...).run(...)``: its first
request header says ``resume`` and the history it sends is valid for the API.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlog import TOOL_OUTCOME_UNKNOWN, check_invariants, check_provider_history, open_store
from tests.loop.support import of_type, plain, text_of, types
from tests.providers.fake_openai import FakeOpenAI
from tests.providers.fake_server import Answer, Received, ToolCall

ROOT = Path(__file__).resolve().parents[2]
OPENING = [
    "agent/inbox/spliced", "turn/start", "agent/inbox/spliced", "step/start", "system/message",
    "user/message", "request/header", "request/context",
]  # fmt: skip


def spawn(url: str, base_url: str, mode: str, marker: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.loop.crash_child", url, "s1", base_url, mode, str(marker)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(condition: Callable[[], bool], child: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        if child.poll() is not None:
            raise AssertionError(f"the child exited early: {child.communicate()}")
        if time.monotonic() > deadline:
            child.kill()
            raise AssertionError("the child never reached the kill point")
        time.sleep(0.01)


def kill(child: subprocess.Popen[str]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait(10)
    assert child.returncode == -signal.SIGKILL


@pytest.fixture(params=["jsonl", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "jsonl":
        return f"jsonl:///{tmp_path}/sessions"
    return f"sqlite:///{tmp_path}/sessions.db"


def resume(url: str, server: FakeOpenAI, marker: Path) -> None:
    """A new process continues the session: ``resume`` header, a provider-valid history."""
    first = len(server.requests)
    server.script(Answer(text="The deploy was interrupted; I will check before retrying."))
    child = spawn(url, server.url, "resume", marker)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert out.strip() == "completed"
    (request,) = server.requests[first:]
    assert request.problems == []
    with open_store(url) as store:
        session = store.inspect("s1")
    (second,) = [e for e in of_type(session.events, "turn/start") if e.data["turn"] == 2]
    later = session.events[second.seq :]
    assert of_type(later, "request/header")[0].data["reason"] == "resume"
    assert of_type(later, "turn/end")[0].data["reason"] == {"kind": "completed"}
    check_invariants(session.events)
    check_provider_history(session.derive_messages())


def test_sigkill_while_the_request_is_in_flight(url: str, tmp_path: Path) -> None:
    gate = threading.Event()

    def hold(received: Received) -> Answer:
        gate.wait(60)  # the request stays unanswered until the child is dead
        return Answer(text="too late")

    marker = tmp_path / "marker"
    with FakeOpenAI() as server:
        server.script(hold)
        child = spawn(url, server.url, "fresh", marker)
        wait_for(lambda: len(server.requests) == 1, child)
        kill(child)
        gate.set()
        with open_store(url) as store, store.open("s1") as session:
            events = session.events
            assert types(events) == [
                *OPENING, "step/end", "turn/end", "session/end-seed",
            ]  # fmt: skip
            assert plain(events[-2].data) == {"turn": 1, "reason": {"kind": "interrupted"}}
            check_provider_history(session.derive_messages())
        resume(url, server, marker)


def test_sigkill_inside_a_tool_body(url: str, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    call = ToolCall(id="call_1", name="deploy", arguments='{"target": "production"}')
    with FakeOpenAI() as server:
        server.script(Answer(text="Deploying.", tool_calls=[call]))
        child = spawn(url, server.url, "fresh", marker)
        wait_for(marker.exists, child)
        kill(child)
        with open_store(url) as store, store.open("s1") as session:
            events = session.events
            assert types(events) == [
                *OPENING, "assistant/message", "tool/call",
                "tool/result", "step/end", "turn/end", "session/end-seed",
            ]  # fmt: skip
            call_event, repaired = events[9], events[10]
            assert repaired.data["error"]["code"] == TOOL_OUTCOME_UNKNOWN
            assert repaired.source_event_seqs == [call_event.seq]
            assert "Do not retry blindly." in text_of(repaired.data["message"])
            check_provider_history(session.derive_messages())
        resume(url, server, marker)
        assert "Do not retry blindly." in str(server.requests[-1].body["messages"])
