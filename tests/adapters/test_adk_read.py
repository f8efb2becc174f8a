"""``_adk_read``: a stored ADK session read through ``Store.read_raw`` gives the opened view."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

import agentlog
from agentlog.adapters import _adk_read
from agentlog.adapters._adk_log import Trace, session_key, session_state, visible_carriers
from agentlog.adapters._adk_sessions import AdkSessions

KEY = session_key("app", "u", "s")


@pytest.fixture(params=["sqlite", "jsonl"])
def store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[agentlog.Store]:
    url = f"sqlite:///{tmp_path}/s.db" if request.param == "sqlite" else f"jsonl:///{tmp_path}/j"
    with agentlog.open_store(url) as opened:
        yield opened


def _written(store: agentlog.Store) -> None:
    """A session of every kind of event: text, calls and their responses, state, control."""
    sessions = AdkSessions(store)
    session = sessions.create("app", "u", {"k": 0, "user:name": "Ann"}, "s")
    call = types.FunctionCall(id="c1", name="read", args={"path": "a"})
    second = types.FunctionCall(id="c2", name="read", args={"path": "b"})
    events = [
        Event(author="user", content=types.Content(role="user", parts=[types.Part(text="hi")])),
        Event(
            author="helper",
            content=types.Content(
                role="model",
                parts=[
                    types.Part(text="reading"),
                    types.Part(function_call=call),
                    types.Part(function_call=second),
                ],
            ),
        ),
        Event(
            author="helper",
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call_id, name="read", response={"text": f"body {call_id}"}
                        )
                    )
                    for call_id in ("c1", "c2")
                ],
            ),
            actions=EventActions(state_delta={"k": 1, "temp:x": 2}),
        ),
        Event(author="helper", actions=EventActions(state_delta={"k": 2}, escalate=True)),
    ]
    for index, event in enumerate(events):
        event.timestamp = 100.0 + index
        sessions.append(session, event)
    sessions.close()


def test_the_cold_view_is_the_opened_sessions_view(store: agentlog.Store) -> None:
    _written(store)
    opened = store.inspect(KEY)
    view = _adk_read.read(store, KEY)
    assert view is not None
    assert [c["seq"] for c in view.carriers] == [c.seq for c in visible_carriers(opened)]
    assert view.state == session_state(opened.events) == {"k": 2}
    trace = Trace.revision_of(opened.events)
    assert (view.revision, view.updated) == (trace.revision, trace.updated)


def test_cold_events_equal_the_live_read(store: agentlog.Store) -> None:
    _written(store)
    cold_reader = AdkSessions(store)
    cold = cold_reader.get("app", "u", "s", None)  # not open here: the cold read
    live_reader = AdkSessions(store)
    live_reader._writable(KEY, "s")  # open for writing: read from the validated session
    live = live_reader.get("app", "u", "s", None)
    assert cold is not None
    assert live is not None
    assert cold.events == live.events
    assert [event.timestamp for event in cold.events] == [100.0, 101.0, 102.0, 103.0]
    content = cold.events[2].content
    assert content is not None
    assert content.parts is not None
    assert content.parts[1].function_response is not None
    assert content.parts[1].function_response.response == {"text": "body c2"}
    assert cold.state == live.state == {"k": 2, "user:name": "Ann"}
    assert cold._storage_update_marker == live._storage_update_marker
    assert cold.last_update_time == live.last_update_time == 103.0
    live_reader.close()


@pytest.mark.parametrize(
    ("config", "stamps"),
    [
        (GetSessionConfig(num_recent_events=2), [102.0, 103.0]),
        (GetSessionConfig(num_recent_events=0), []),
        (GetSessionConfig(after_timestamp=101.0), [101.0, 102.0, 103.0]),
        (GetSessionConfig(num_recent_events=1, after_timestamp=101.0), [103.0]),
    ],
)
def test_cold_reads_apply_get_session_config(
    store: agentlog.Store, config: GetSessionConfig, stamps: list[float]
) -> None:
    _written(store)
    found = AdkSessions(store).get("app", "u", "s", config)
    assert found is not None
    assert [event.timestamp for event in found.events] == stamps


def _patched(store: agentlog.Store, monkeypatch: pytest.MonkeyPatch, **changes: Any) -> None:
    original = store.read_raw

    def read_raw(session_id: str, types: Any) -> Any:
        raw = original(session_id, types)
        events = changes.pop("events", None)
        return dataclasses.replace(raw, **changes, **({"events": events(raw)} if events else {}))

    monkeypatch.setattr(store, "read_raw", read_raw)


def test_another_format_version_or_a_torn_tail_needs_the_full_open(
    store: agentlog.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _written(store)
    _patched(store, monkeypatch, header={"version": 1})
    assert _adk_read.read(store, KEY) is None
    monkeypatch.undo()
    _patched(store, monkeypatch, torn=True)
    assert _adk_read.read(store, KEY) is None
    monkeypatch.undo()
    found = AdkSessions(store).get("app", "u", "s", None)  # and the full open still reads it
    assert found is not None
    assert len(found.events) == 4


@pytest.mark.parametrize(
    "marker",
    [
        {"op": "replace", "startSeq": 999, "endSeq": 999},
        {"op": "replace", "startSeq": 1, "endSeq": 1, "extra": 1},
        {"op": "swap", "startSeq": 1, "endSeq": 1},
        "prepend",
    ],
)
def test_a_marker_no_valid_log_holds_needs_the_full_open(
    store: agentlog.Store, monkeypatch: pytest.MonkeyPatch, marker: Any
) -> None:
    _written(store)

    def events(raw: Any) -> list[dict[str, Any]]:
        found = [dict(event) for event in raw.events]
        found[-1]["surfaceOp"] = marker
        return found

    _patched(store, monkeypatch, events=events)
    assert _adk_read.read(store, KEY) is None


def test_an_absent_session_raises_session_not_found(store: agentlog.Store) -> None:
    with pytest.raises(agentlog.SessionNotFound):
        _adk_read.read(store, KEY)
    assert AdkSessions(store).get("app", "u", "s", None) is None
