"""A conversation's entries and records as events: what is read back, what any reader opens."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart

from agentlog import Session, open_store
from agentlog.adapters._conversation_log import (
    ENTRY,
    RECORD,
    entry_boundary,
    history,
    latest_record,
    stored_entries,
    write_conversation,
)


def entry(entry_id: str, parent: str | None, text: str) -> tuple[str, str | None, Any, Any]:
    message = ModelRequest(parts=[UserPromptPart(text)])
    return (
        entry_id,
        parent,
        message,
        ModelMessagesTypeAdapter.dump_python([message], mode="json")[0],
    )


def save(session: Session, head: str | None, *entries: Any, revision: str = "r") -> None:
    record = {"conversation_id": session.id, "head_id": head, "revision": revision}
    write_conversation(
        session,
        conversation_id=session.id,
        record=record,
        new_entries=list(entries),
        validate=ModelMessagesTypeAdapter.validate_python,
    )


def shown(session: Session) -> list[str]:
    return [m["content"][0]["text"] for m in session.derive_messages()]


def test_entries_and_records_are_ignorable_events_any_reader_opens() -> None:
    store = open_store("memory:")
    session = store.create("c")
    save(session, "e1", entry("e1", None, "hello"))
    assert all(e.ignorable for e in session.events if e.type in (ENTRY, RECORD))
    session.close()
    reopened = store.open("c")
    assert stored_entries(reopened)["e1"][0] is None
    assert latest_record(reopened, "c") == {
        "conversation_id": "c",
        "head_id": "e1",
        "revision": "r",
    }


def test_a_save_that_rewrites_the_history_shadows_the_old_branch() -> None:
    session = Session.create("c", clock=lambda: 0)
    save(session, "e2", entry("e1", None, "one"), entry("e2", "e1", "two"))
    old_nodes = session.surface.nodes
    save(session, "e3", entry("e3", "e1", "three"), revision="r2")
    assert shown(session) == ["one", "three"]
    removal = next(e for e in session.events if e.data.get("removedBy") == "branch")
    assert removal.source_event_seqs == [old_nodes[1]]
    assert history(stored_entries(session), "e2") == ["e1", "e2"]


def test_switching_back_to_a_branch_shows_its_messages_again() -> None:
    session = Session.create("c", clock=lambda: 0)
    save(session, "e2", entry("e1", None, "one"), entry("e2", "e1", "two"))
    save(session, "e3", entry("e3", "e1", "three"), revision="r2")
    save(session, "e2", revision="r3")
    assert shown(session) == ["one", "two"]


def test_only_the_conversations_own_records_count_and_a_delete_ends_them() -> None:
    session = Session.create("fork", clock=lambda: 0)
    session.append(
        RECORD, {"conversationId": "source", "record": {"revision": "x"}}, ignorable=True
    )
    assert latest_record(session, "fork") is None
    save(session, "e1", entry("e1", None, "hi"))
    write_conversation(
        session,
        conversation_id="fork",
        record=None,
        new_entries=[],
        validate=ModelMessagesTypeAdapter.validate_python,
    )
    assert latest_record(session, "fork") is None
    assert session.derive_messages() == []
    assert entry_boundary(session, "e1") is not None
