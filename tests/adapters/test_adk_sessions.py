"""``AdkSessions``, the service's synchronous engine: open sessions, other writers, repairs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.errors import StaleSessionError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions

import agentlog
from agentlog.adapters import _adk_sessions
from agentlog.adapters._adk_log import session_key
from agentlog.adapters._adk_sessions import AdkSessions

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"jsonl:///{tmp_path}/sessions"


@pytest.fixture
def store(url: str) -> Iterator[agentlog.Store]:
    with agentlog.open_store(url) as opened:
        yield opened


def _event(**actions: Any) -> Event:
    return Event(author="helper", invocation_id="i", actions=EventActions(**actions))


def test_the_least_recently_used_sessions_are_closed_and_reopen_when_written(
    store: agentlog.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_adk_sessions, "OPEN_SESSIONS", 2)
    sessions = AdkSessions(store)
    made = [sessions.create("app", "u", None, f"s{index}") for index in range(3)]
    assert list(sessions._live) == [session_key("app", "u", "s1"), session_key("app", "u", "s2")]
    sessions.append(made[0], _event(state_delta={"k": 1}))  # s0 was closed: reopened to write
    found = sessions.get("app", "u", "s0", None)
    assert found is not None
    assert found.state == {"k": 1}
    assert len(found.events) == 1
    sessions.close()


def test_user_state_a_crash_kept_from_its_scope_is_written_at_the_next_open(
    store: agentlog.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = AdkSessions(store)
    session = sessions.create("app", "u", None, "s")

    def crash(*args: Any) -> None:
        raise KeyboardInterrupt("killed between the event and its user: state")

    monkeypatch.setattr(sessions, "_write_scoped", crash)
    with pytest.raises(KeyboardInterrupt):
        sessions.append(session, _event(state_delta={"user:name": "Ann", "app:n": 1}))
    sessions.close()
    monkeypatch.undo()
    again = AdkSessions(store)
    assert again.scoped("adk-user:app:u") == {}  # lost so far
    reread = again.get("app", "u", "s", None)
    assert reread is not None
    again.append(reread, _event(state_delta={"k": 2}))  # opening it for writing repairs
    assert again.scoped("adk-user:app:u") == {"name": "Ann"}
    assert again.scoped("adk-app:app") == {"n": 1}
    again.close()


def test_a_session_another_process_writes_is_stale_here_and_nothing_is_written(
    store: agentlog.Store, url: str
) -> None:
    sessions = AdkSessions(store)
    session = sessions.create("app", "u", None, "s")
    sessions.close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, agentlog\n"
            f"store = agentlog.open_store({url!r})\n"
            f"session = store.open({session_key('app', 'u', 's')!r})\n"
            "print('open', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "open\n"
        with pytest.raises(StaleSessionError, match="another process"):
            sessions.append(session, _event(state_delta={"k": 1}))
    finally:
        holder.communicate("")
    found = sessions.get("app", "u", "s", None)
    assert found is not None
    assert found.events == []
    sessions.close()


def test_a_state_agentlog_cannot_hold_is_refused_and_creates_nothing(
    store: agentlog.Store,
) -> None:
    sessions = AdkSessions(store)
    with pytest.raises(agentlog.NotLosslessJson, match="state"):
        sessions.create("app", "u", {"huge": 2**60}, "s")
    assert store.list() == []
    created = sessions.create("app", "u", {"fine": 1}, "s")  # the id is still free
    assert created.state == {"fine": 1}
    sessions.close()
