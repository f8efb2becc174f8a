"""Fork: a child session inheriting an exact prefix (spec/core.md §10.1–§10.2, [F4]).

Scenarios 64–66 and 68 ([F4]) of spec/core.md §15; store-level scenario 67 (ids and liveness)
belongs to the stores.
"""

from __future__ import annotations

import uuid

import pytest

from agentlog import Session, SessionForkError, build_fork_seed, open_turn_closers
from agentlog import messages as m
from agentlog.lifecycle import fork_child


def session_with_open_turn() -> Session:
    s = Session.create(
        "parent",
        {"version": 4, "id": "parent", "createdAt": 5, "cwd": "/work", "isSeeded": False},
        clock=lambda: 9,
    )
    s.append("turn/start", {"turn": 1})
    s.append("step/start", {"turn": 1, "step": 1})
    s.append("user/message", m.user("hi", id="u1"), surface_op="append")
    s.append(
        "assistant/message",
        m.assistant(
            [m.tool_call("c1", "bash", "{}")], provider="p", model="x", turn=1, step=1, id="a1"
        ),
        surface_op="append",
    )
    return s


def test_fork_of_an_empty_session_inherits_nothing() -> None:
    """§15 scenario 64."""
    parent = Session.create("empty", clock=lambda: 3)
    child = parent.fork(child_id="kid")
    assert child.header == {
        "version": 4,
        "id": "kid",
        "createdAt": 3,
        "parentSession": "empty",
        "isSeeded": True,
    }
    assert child.inherited_event_count == 0
    assert [(e.type, e.data) for e in child.events] == [("session/end-seed", {"inherited": True})]


def test_fork_after_a_closed_turn_shares_the_prefix_and_marks_the_cut() -> None:
    """§15 scenario 65."""
    parent = session_with_open_turn()
    parent.append(
        "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}
    )
    parent.append(
        "tool/result", m.tool_result("c1", "ok", turn=1, step=1, id="r1"), surface_op="append"
    )
    parent.append("step/end", {"turn": 1, "step": 1})
    parent.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    child = parent.fork(child_id="kid")
    assert list(child.events[: parent.seq]) == list(parent.events)
    assert child.events[0] is parent.events[0]  # immutable events are shared, not copied
    assert child.events[parent.seq].data == {"inherited": True}
    assert child.first_live_seq == parent.seq + 1
    assert child.first_lifecycle_seq == parent.seq
    assert child.header["cwd"] == "/work"
    assert child.derive_messages() == parent.derive_messages()
    with pytest.raises(TypeError):
        child.derive_messages()[0]["content"].append(m.text("x"))


@pytest.mark.parametrize(
    ("boundary", "message"),
    [
        (-1, 'fork boundary for session "parent" must be a non-negative safe integer, got -1'),
        (0.5, 'fork boundary for session "parent" must be a non-negative safe integer, got 0.5'),
        (
            2**53,
            'fork boundary for session "parent" must be a non-negative safe integer, got '
            "9007199254740992",
        ),
        (True, 'fork boundary for session "parent" must be a non-negative safe integer, got true'),
        (4, 'fork boundary 4 does not exist in session "parent" (last seq: 3)'),
    ],
)
def test_invalid_boundaries_are_refused(boundary: object, message: str) -> None:
    """§15 scenario 66 (INVALID_BOUNDARY)."""
    parent = session_with_open_turn()
    with pytest.raises(SessionForkError) as raised:
        parent.fork(boundary)  # type: ignore[arg-type]  # invalid on purpose
    assert str(raised.value) == message
    assert raised.value.code == "INVALID_BOUNDARY"
    assert parent.seq == 4


def test_boundary_zero_of_an_empty_session_does_not_exist() -> None:
    """§15 scenario 66."""
    with pytest.raises(SessionForkError, match=r"\(last seq: none\)"):
        Session.create("empty").fork(0)


def test_fork_inside_an_open_turn_closes_it_in_the_child() -> None:
    """§15 scenario 68 [F4]: an unanswered call gets a NOT_STARTED result, then the closers."""
    parent = session_with_open_turn()
    child = parent.fork(child_id="kid")
    tail = [e.type for e in child.events[parent.seq :]]
    assert tail == ["session/end-seed", "tool/result", "step/end", "turn/end"]
    result = child.events[parent.seq + 1]
    assert result.data["error"]["code"] == "TOOL_NOT_STARTED"
    assert result.data["message"]["role"] == "tool"
    assert child.events[-1].data["reason"] == {"kind": "forked"}


def test_fork_cut_after_a_tool_call_cites_it_as_outcome_unknown() -> None:
    """§15 scenario 68 [F4]."""
    parent = session_with_open_turn()
    call = parent.append(
        "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}
    )
    child = parent.fork(child_id="kid")
    result = child.events[parent.seq + 1]
    assert result.data["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert result.source_event_seqs == [call.seq]


def test_fork_seed_is_prefix_marker_and_forked_closers() -> None:
    """spec/core.md §10.2."""
    parent = session_with_open_turn()
    seed = build_fork_seed(parent.events, 1)
    assert seed[:2] == list(parent.events[:2])
    assert seed[2] == {
        "type": "session/end-seed",
        "seq": 2,
        "time": parent.events[1].time,
        "data": {"inherited": True},
    }
    assert seed[3:] == open_turn_closers(seed[:3], "forked")


def test_failed_attempt_tail_forks_without_an_assistant_message() -> None:
    """§15 scenario 68 [F4]: an assistant/attempt tail closes with step/end, turn/end."""
    parent = Session.create("p", clock=lambda: 0)
    parent.append("turn/start", {"turn": 1})
    parent.append("step/start", {"turn": 1, "step": 1})
    parent.append("assistant/attempt", {"turn": 1, "step": 1, "stream": []})
    child = parent.fork(child_id="kid")
    assert [e.type for e in child.events[3:]] == ["session/end-seed", "step/end", "turn/end"]
    assert child.derive_messages() == []


def test_child_appends_never_reach_the_parent() -> None:
    parent = session_with_open_turn()
    before = parent.events
    child = parent.fork(1, "kid")
    child.append("user/message", m.user("only in the child", id="u9"), surface_op="append")
    assert parent.events is before
    assert parent.seq == 4
    assert all(event.data.get("id") != "u9" for event in parent.events)


def test_the_one_fork_names_its_child_a_uuid_and_writes_the_spec_header() -> None:
    parent = session_with_open_turn()
    child = parent.fork()
    assert str(uuid.UUID(child.id)) == child.id
    assert dict(child.header) == {
        "version": 4,
        "id": child.id,
        "createdAt": 9,
        "cwd": "/work",
        "parentSession": "parent",
        "isSeeded": True,
    }


def test_a_stored_fork_child_has_the_header_a_store_writes() -> None:
    parent = session_with_open_turn()
    child = fork_child(
        "parent", parent.events, parent.header, boundary=1, child_id="c", created_at=7, stored=True
    )
    assert list(child.header.items()) == [
        ("version", 4),
        ("id", "c"),
        ("createdAt", 7),
        ("cwd", "/work"),
        ("parentSession", "parent"),
        ("isSeeded", True),
        ("delegationDepth", 0),
    ]
    assert child.inherited_event_count == 2
    with pytest.raises(SessionForkError, match="fork boundary 9 does not exist"):
        fork_child("parent", parent.events, parent.header, boundary=9, created_at=7)
