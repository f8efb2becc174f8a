"""The structural writer the adapters share: closed turns, paired calls, cited removals."""

from __future__ import annotations

from typing import Any

from agentlog import Session, history_problems
from agentlog import messages as m
from agentlog.adapters._writer import Batch, LogState


def write(session: Session, *messages: dict[str, Any]) -> None:
    with session.batch():
        batch = Batch(LogState(session))
        for message in messages:
            batch.add(dict(message), {"tag": message["id"]})
        batch.finish()


def call(call_id: str) -> dict[str, Any]:
    blocks = [m.tool_call(call_id, "bash", "{}")]
    data = m.assistant(blocks, provider="p", model="x", turn=0, step=0, id=f"a-{call_id}")
    return dict(data["message"])


def result(call_id: str) -> dict[str, Any]:
    return dict(m.tool_result(call_id, "ok", turn=0, step=0, id=f"r-{call_id}")["message"])


def test_a_reply_with_calls_and_results_is_one_closed_turn() -> None:
    session = Session.create("s", clock=lambda: 0)
    write(session, dict(m.user("go", id="u")), call("c1"), result("c1"))
    assert [e.type for e in session.events] == [
        "user/message",
        "turn/start",
        "step/start",
        "assistant/message",
        "tool/call",
        "tool/result",
        "step/end",
        "turn/end",
    ]
    assert session.events[5].source_event_seqs == [4]
    assert session.events[5].data["tag"] == "r-c1"
    assert history_problems(session.derive_messages()) == []


def test_a_result_in_a_later_write_is_dispatched_again() -> None:
    session = Session.create("s", clock=lambda: 0)
    write(session, call("c1"))
    write(session, result("c1"))
    assert [e.type for e in session.events[6:]] == [
        "turn/start",
        "step/start",
        "tool/call",
        "tool/result",
        "step/end",
        "turn/end",
    ]
    assert session.events[9].source_event_seqs == [3, 8]  # the first dispatch and this one
    assert history_problems(session.derive_messages()) == []


def test_a_result_answering_nothing_becomes_a_user_message() -> None:
    session = Session.create("s", clock=lambda: 0)
    write(session, result("ghost"))
    [event] = [e for e in session.events if e.surface_op]
    assert event.type == "user/message"
    assert event.data["source"] == {"kind": "orphan-tool-output", "callId": "ghost"}


def test_remove_all_replaces_a_system_head_on_its_own() -> None:
    session = Session.create("s", clock=lambda: 0)
    write(session, m.system("be brief", turn=0, step=0, id="sys")["message"], dict(m.user("hi")))
    nodes = session.surface.nodes
    with session.batch():
        batch = Batch(LogState(session))
        batch.remove_all("clear_session")
        batch.finish()
    removals = [e for e in session.events if e.data.get("removedBy")]
    assert [(e.surface_op["startSeq"], e.surface_op["endSeq"]) for e in removals] == [
        (nodes[0], nodes[0]),
        (nodes[1], nodes[1]),
    ]
    assert [e.source_event_seqs for e in removals] == [[nodes[0]], [nodes[1]]]
    assert session.derive_messages() == []
