"""The layout of an ADK session in its agentlog session: ids, event plans, state, compaction."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.genai import types

import agentlog
from agentlog.adapters._adk_codec import classify, event_payload
from agentlog.adapters._adk_log import (
    SESSION_RECORD,
    Trace,
    app_key,
    compaction_span,
    parse_session_key,
    plan,
    scoped_delta,
    session_key,
    session_state,
    user_key,
)


def test_ids_survive_any_app_user_and_session_name() -> None:
    key = session_key("my:app", "a/b", "s 1")
    assert key == "adk:my%3Aapp:a%2Fb:s%201"
    assert parse_session_key(key) == ("my:app", "a/b", "s 1")
    assert parse_session_key("langgraph:t") is None
    assert app_key("my:app") == "adk-app:my%3Aapp"
    assert user_key("app", "u:1") == "adk-user:app:u%3A1"


def test_state_deltas_split_by_scope() -> None:
    delta = {"app:a": 1, "user:u": 2, "temp:t": 3, "s": 4}
    assert scoped_delta(delta, "app:") == {"a": 1}
    assert scoped_delta(delta, "user:") == {"u": 2}
    assert scoped_delta(delta, "") == {"s": 4}


class _Log:
    """Appends ADK events to a detached session the way the service does."""

    def __init__(self) -> None:
        self.session = agentlog.Session.create("adk:app:u:s", clock=lambda: 0)
        agentlog.install_invariants(self.session)
        record = {"appName": "app", "userId": "u", "sessionId": "s", "state": {}, "createTime": 0.0}
        self.session.append(SESSION_RECORD, record, ignorable=True)
        self.trace = Trace.scan(self.session.events)
        self.clock = 0.0

    def add(self, *parts: types.Part, role: str = "model", **fields: Any) -> list[agentlog.Event]:
        self.clock += 1.0
        event = Event(
            invocation_id="i",
            author="user" if role == "user" else "helper",
            timestamp=self.clock,
            content=types.Content(role=role, parts=list(parts)) if parts else None,
            **fields,
        )
        payload = event_payload(event)
        appended = []
        for spec in plan(self.trace, self.session.events, payload, classify(payload)):
            appended.append(
                self.session.append(
                    spec.type,
                    spec.data,
                    surface_op=spec.surface_op,
                    source_event_seqs=spec.sources,
                    ignorable=spec.ignorable,
                )
            )
            self.trace.observe(appended[-1])
        return appended

    def types(self) -> list[str]:
        return [event.type for event in self.session.events]


def _call(call_id: str) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name="f", args={}))


def _response(call_id: str) -> types.Part:
    return types.Part(function_response=types.FunctionResponse(id=call_id, name="f", response={}))


def test_a_model_call_keeps_its_turn_open_until_answered() -> None:
    log = _Log()
    log.add(types.Part(text="hi"), role="user")
    log.add(types.Part(text="look"), _call("c1"), _call("c2"))
    assert log.trace.turn == 1
    log.add(_response("c1"), _response("c2"), role="user")
    assert log.trace.turn is None
    assert log.types()[1:] == [
        "user/message",
        "turn/start",
        "step/start",
        "assistant/message",
        "tool/call",
        "tool/call",
        "tool/result",
        "tool/result",
        "step/end",
        "turn/end",
    ]
    agentlog.check_provider_history(log.session.derive_messages())


def test_a_new_message_closes_calls_nobody_answered() -> None:
    log = _Log()
    log.add(_call("c1"))
    log.add(types.Part(text="never mind"), role="user")
    closed = log.session.events[5:8]
    assert [event.type for event in closed] == ["tool/result", "step/end", "turn/end"]
    assert closed[0].data["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    agentlog.check_provider_history(log.session.derive_messages())
    late = log.add(_response("c1"), role="user")  # the answer after all: kept, off the surface
    assert [event.type for event in late] == ["adk/event"]


def test_session_state_folds_from_the_last_snapshot() -> None:
    log = _Log()
    log.add(types.Part(text="a"), actions=EventActions(state_delta={"k": 1, "app:x": 1}))
    log.add(actions=EventActions(state_delta={"k": 2, "j": 3}))
    assert session_state(log.session.events) == {"k": 2, "j": 3}


def _compaction(start: float, end: float) -> EventActions:
    summary = types.Content(role="model", parts=[types.Part(text="summary")])
    compaction = EventCompaction(
        start_timestamp=start, end_timestamp=end, compacted_content=summary
    )
    return EventActions(compaction=compaction)


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (1.0, 2.0, [1, 4]),  # the first user message and the reply
        (1.0, 4.0, [1, 4, 9, 11]),  # through the answered call
        (3.0, 3.0, None),  # the call without its result
        (4.0, 9.0, None),  # the result without its call
        (20.0, 30.0, None),  # nothing in range
    ],
)
def test_a_compaction_replaces_one_balanced_run_of_nodes(
    start: float, end: float, expected: list[int] | None
) -> None:
    log = _Log()
    log.add(types.Part(text="q"), role="user")  # t=1: seq 1
    log.add(types.Part(text="a"))  # t=2: seq 4
    log.add(_call("c1"))  # t=3: seq 9
    log.add(_response("c1"), role="user")  # t=4: seq 11
    payload = event_payload(Event(author="user", actions=_compaction(start, end)))
    assert compaction_span(log.session, payload) == expected


def test_a_compaction_containing_an_earlier_one_replaces_it_too() -> None:
    log = _Log()
    log.add(types.Part(text="q"), role="user")  # t=1
    log.add(types.Part(text="a"))  # t=2
    earlier = event_payload(Event(author="user", timestamp=3.0, actions=_compaction(1.0, 2.0)))
    span = compaction_span(log.session, earlier)
    assert span == [1, 4]
    replaced = log.session.append(
        "user/message",
        {"id": "c", "role": "user", "content": [], "source": {"kind": "k"}, "adk": earlier},
        surface_op={"op": "replace", "startSeq": 1, "endSeq": 4},
        source_event_seqs=span,
    )
    log.add(types.Part(text="b"), role="user")  # t=3
    wider = event_payload(Event(author="user", actions=_compaction(0.5, 3.0)))
    assert compaction_span(log.session, wider) == [replaced.seq, replaced.seq + 1]
    narrower = event_payload(Event(author="user", actions=_compaction(1.5, 3.0)))
    assert compaction_span(log.session, narrower) == [replaced.seq + 1]
