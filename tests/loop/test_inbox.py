"""The durable inbox (spec/plugins.md §4.1): splice events first, replayed on construction."""

from __future__ import annotations

import pytest

from agentlog import EventRejected, Session
from agentlog import messages as m
from agentlog.loop.inbox import Inbox, user_message
from tests.loop.support import new_session, plain


def inbox(session: Session) -> Inbox:
    return Inbox(session, lambda t, d: session.append(t, d))


def test_every_change_is_a_splice_event_and_a_new_inbox_replays_them() -> None:
    session = new_session()
    box = inbox(session)
    box.insert("next-turn", user_message(m.user("one", id="u1")))
    box.insert("next-turn", user_message(m.user("two", id="u2")))
    box.insert("next-step", user_message(m.user("steer", id="u3")))
    claimed = box.claim("next-turn")
    assert [c["id"] for c in claimed] == ["u3", "u1"]  # steering first, then one prompt
    assert [e.data.get("removedCount") for e in session.events] == [None, None, None, 1, 1]
    again = inbox(session)
    assert [p["id"] for p in again.pending("next-turn")] == ["u2"]
    assert again.pending("next-step") == ()


def test_a_pending_id_is_refused() -> None:
    session = new_session()
    box = inbox(session)
    box.insert("next-turn", user_message(m.user("one", id="u1")))
    with pytest.raises(ValueError, match='message "u1" is already pending'):
        box.insert("next-step", user_message(m.user("again", id="u1")))
    assert session.seq == 1


def test_clear_discards_next_step_first_as_canceled() -> None:
    session = new_session()
    box = inbox(session)
    box.insert("next-turn", user_message("a"))
    box.insert("next-step", user_message("b"))
    assert box.clear() == 2
    assert [plain(e.data) for e in session.events[2:]] == [
        {
            "target": "next-step",
            "start": 0,
            "removedCount": 1,
            "inserted": [],
            "outcome": "canceled",
        },
        {
            "target": "next-turn",
            "start": 0,
            "removedCount": 1,
            "inserted": [],
            "outcome": "canceled",
        },
    ]
    assert not box.has_work


def test_a_bad_persisted_splice_is_reported_with_its_seq() -> None:
    session = new_session()
    session.append("agent/inbox/spliced", {"target": "next-turn", "start": 3, "inserted": []})
    with pytest.raises(EventRejected, match="invalid persisted inbox splice at session seq 0"):
        inbox(session)


def test_a_fork_child_inherits_no_pending_input() -> None:
    session = new_session()
    inbox(session).insert("next-turn", user_message("pending"))
    child = session.fork()
    assert not inbox(child).has_work


@pytest.mark.parametrize("bad", [{"role": "assistant", "id": "a", "content": [], "source": {}}, 3])
def test_only_user_messages_can_be_queued(bad: object) -> None:
    with pytest.raises(ValueError, match=r"user message|text, content blocks"):
        user_message(bad)  # type: ignore[arg-type]
