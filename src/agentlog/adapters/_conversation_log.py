"""A Pydantic AI conversation's entries and records as one agentlog session's events.

Implements, for the ``pydantic_ai`` adapter, the mapping of a ``ConversationStore`` onto an
append-only log (spec/core.md §2.4, §5, §8.1, §10):

* each conversation is the session of the same id; a fork is an agentlog fork of the session it
  was forked from, cut right after the entry it keeps (so it shares that history);
* an entry is a ``pydantic-ai/entry`` event ``{entryId, parentId, message}`` holding the exact
  message (Pydantic AI's JSON form); a record (every save) is a ``pydantic-ai/record`` event
  ``{conversationId, record}``, a delete one ``{conversationId, deleted: true}``; both types are
  ``ignorable``, so any agentlog reader opens the log without this adapter;
* the surface follows the conversation's current history: its messages are appended as
  structurally valid events (``_writer``), each with the ``entryId`` it belongs to; a save that
  rewrites or switches the history (a branch) shadows the nodes past the shared entries with a
  cited replace and appends the new branch's messages; a delete shadows everything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentlog.adapters._pydantic_messages import message_of_part, response_message
from agentlog.adapters._writer import Batch, LogState
from agentlog.session import Session
from agentlog.values import thaw

__all__ = [
    "ENTRY",
    "ENTRY_KEY",
    "RECORD",
    "Entry",
    "entry_boundary",
    "history",
    "latest_record",
    "stored_entries",
    "write_conversation",
]

ENTRY: Final = "pydantic-ai/entry"
RECORD: Final = "pydantic-ai/record"
ENTRY_KEY: Final = "entryId"
"""On a surface event: the entry whose message it shows."""

Entry = tuple[str | None, Any]
"""An entry as stored: its parent id and its message in Pydantic AI's JSON form."""


def latest_record(session: Session, conversation_id: str) -> Mapping[str, Any] | None:
    """The record a session holds for ``conversation_id`` now (``None``: none, or deleted).

    A fork's log begins with its source's events, records included; only records of
    ``conversation_id`` itself count.
    """
    for event in reversed(session.events):
        if event.type == RECORD and event.data.get("conversationId") == conversation_id:
            return None if event.data.get("deleted") else event.data["record"]
    return None


def stored_entries(session: Session) -> dict[str, Entry]:
    """Every entry in the log: id → (parent id, message JSON)."""
    return {
        event.data["entryId"]: (event.data["parentId"], event.data["message"])
        for event in session.events
        if event.type == ENTRY
    }


def entry_boundary(session: Session, entry_id: str) -> int | None:
    """The seq to fork at to keep the history up to ``entry_id``: its last shown event."""
    found = None
    for event in session.events:
        data = event.data
        # Entry events and the events showing the entry both carry its id under "entryId".
        if isinstance(data, Mapping) and data.get(ENTRY_KEY) == entry_id:
            found = event.seq
    return found


def history(entries: Mapping[str, Entry], head_id: str | None) -> list[str]:
    """The entry ids from the first to ``head_id``, following parents."""
    ids: list[str] = []
    while head_id is not None:
        ids.append(head_id)
        head_id = entries[head_id][0]
    ids.reverse()
    return ids


def _shown(session: Session) -> list[tuple[str, int]]:
    """The entries the surface shows now, in order, with the position of their first node."""
    shown: list[tuple[str, int]] = []
    for position, seq in enumerate(session.surface.nodes):
        data = session.event_at(seq).data
        entry_id = data.get(ENTRY_KEY) if isinstance(data, Mapping) else None
        if entry_id is not None and (not shown or shown[-1][0] != entry_id):
            shown.append((entry_id, position))
    return shown


def _messages(message: Any) -> list[dict[str, Any]]:
    """The agentlog messages one Pydantic AI message shows (parts without a form left out)."""
    if message.kind == "response":
        return [response_message(message, "entry", strict=False)]
    converted = (message_of_part(part, "entry", strict=False) for part in message.parts)
    return [item for item in converted if item is not None]


def write_conversation(
    session: Session,
    *,
    conversation_id: str,
    record: Mapping[str, Any] | None,
    new_entries: Sequence[tuple[str, str | None, Any, Any]],
    validate: Any,
) -> None:
    """Append one save (or, with ``record`` ``None``, a delete) as one batch.

    Args:
        session: The conversation's session, open for writing.
        conversation_id: The conversation.
        record: The record to store (JSON form), or ``None`` to mark the conversation deleted.
        new_entries: ``(id, parent id, message, message JSON)`` of each new entry, in order.
        validate: Turns messages in JSON form back into Pydantic AI messages.
    """
    entries = stored_entries(session)
    known = {entry_id for entry_id, *_ in new_entries}
    noded = {
        data.get(ENTRY_KEY)
        for event in session.events
        if isinstance(data := event.data, Mapping) and data.get(ENTRY_KEY) is not None
    }
    state = LogState(session)
    with session.batch():
        for entry_id, parent_id, _, dump in new_entries:
            data = {"entryId": entry_id, "parentId": parent_id, "message": dump}
            session.append(ENTRY, data, ignorable=True)
            entries[entry_id] = (parent_id, dump)
        batch = Batch(state)
        shown = _shown(session)
        target = history(entries, record.get("head_id")) if record is not None else []
        matched = kept = 0
        while matched < len(target) and kept < len(shown):
            if target[matched] == shown[kept][0]:
                kept += 1
            elif target[matched] in noded or target[matched] in known:
                break
            matched += 1
        if kept < len(shown):
            reason = "delete_record" if record is None else "branch"
            batch.remove_all(reason, session.surface.nodes[shown[kept][1] :])
            state.resync()
        fresh = {entry_id: message for entry_id, _, message, _ in new_entries}
        for entry_id in target[matched:]:
            message = fresh.get(entry_id)
            if message is None:
                message = validate([thaw(entries[entry_id][1])])[0]
            for converted in _messages(message):
                batch.add(converted, {ENTRY_KEY: entry_id})
        batch.finish()
        stored: dict[str, Any] = {"conversationId": conversation_id}
        stored.update({"record": record} if record is not None else {"deleted": True})
        session.append(RECORD, stored, ignorable=True)
