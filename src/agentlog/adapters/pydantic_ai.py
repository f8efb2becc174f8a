"""Pydantic AI conversations kept in an agentlog store: lossless, crash-safe, compactable.

``AgentlogConversationStore`` implements ``pydantic_ai.conversation_store.ConversationStore``
on any agentlog store, so a ``Conversation`` loads and saves there::

    store = AgentlogConversationStore("sqlite:///chats.db")
    conversation = await store.load(cid) or Conversation(conversation_id=cid)
    result = await agent.run(prompt, conversation=conversation)
    await store.save(result)

Each conversation is the agentlog session of the same id; its entries, records and the history
they make are events (``_conversation_log``); ``fork`` is an agentlog fork. Every write opens
the session for writing, checks the stored revision, appends one batch (durable when the call
returns) and closes it again, so writers in other processes take turns instead of locking each
other out; a writer that finds the session busy or the revision moved gets
``ConversationConflict``. Reads use ``Store.inspect`` (nothing is written; a crashed write is
closed in the view). Nothing is ever deleted: ``delete`` marks the conversation deleted and
shadows its history.

``to_model_messages`` / ``from_model_messages`` convert between agentlog messages and
Pydantic AI messages; ``compaction_processor`` is a history processor that compacts the
history with agentlog's compaction before a model request. Needs
``pip install 'agentlog[pydantic-ai]'``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from agentlog.adapters._conversation_log import (
    Entry,
    entry_boundary,
    latest_record,
    stored_entries,
    write_conversation,
)
from agentlog.adapters._history_processor import compaction_processor
from agentlog.adapters._pydantic_messages import from_model_messages, to_model_messages
from agentlog.adapters._store_ref import StoreRef, resolve_store
from agentlog.errors import (
    SeedRejected,
    SessionAlreadyExists,
    SessionForkError,
    SessionLocked,
    SessionNotFound,
)
from agentlog.providers.base import require_extra
from agentlog.session import Session
from agentlog.values import thaw

require_extra("pydantic_ai.conversation_store", "pydantic-ai")

from pydantic import TypeAdapter  # noqa: E402  # after the extra's check, for its message
from pydantic_ai.conversation_store import (  # noqa: E402
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
    ConversationStore,
)
from pydantic_ai.messages import ModelMessagesTypeAdapter  # noqa: E402

__all__ = [
    "AgentlogConversationStore",
    "compaction_processor",
    "from_model_messages",
    "to_model_messages",
]

_RECORDS: TypeAdapter[ConversationRecord] = TypeAdapter(ConversationRecord)


class AgentlogConversationStore(ConversationStore):
    """A Pydantic AI conversation store on an agentlog store.

    Args:
        store: A ``Store``, a store URL or path, or ``None`` for the default embedded store. A
            store this object opened is closed by ``close()``.
    """

    def __init__(self, store: StoreRef = None) -> None:
        self._store, self._owns_store = resolve_store(store)
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        """Entries read so far (they never change), by id."""

    # --- the five storage primitives -----------------------------------------------------

    async def read_record(self, conversation_id: str) -> ConversationRecord | None:
        """The conversation's current record, or ``None`` (never saved, or deleted)."""
        return await asyncio.to_thread(self._record, conversation_id)

    async def read_records(
        self, *, scope: str | None = None, limit: int | None = None
    ) -> Sequence[ConversationRecord]:
        """Every current record (of ``scope``), the most recently saved first, at most ``limit``."""
        return await asyncio.to_thread(self._records, scope, limit)

    async def write_record(
        self,
        record: ConversationRecord,
        *,
        new_entries: Sequence[ConversationEntry] = (),
        expected_revision: str | None,
    ) -> None:
        """Store ``record`` and ``new_entries`` in one durable batch, if the revision matches.

        Raises:
            ConversationConflict: the stored revision is not ``expected_revision``, another
                writer holds the conversation right now, or ``record.head_id`` names an entry
                the conversation's log does not have.
        """
        await asyncio.to_thread(self._write, record, list(new_entries), expected_revision)

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        """Mark the conversation deleted and shadow its history (the log keeps everything).

        Raises:
            ConversationConflict: no record with ``expected_revision`` is stored, or another
                writer holds the conversation right now.
        """
        await asyncio.to_thread(self._delete, conversation_id, expected_revision)

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        """The entry with this id.

        Raises:
            KeyError: when no conversation in the store has it.
        """
        return (await asyncio.to_thread(self._history, entry_id, 1))[0]

    async def read_history(
        self, head_id: str | None, *, limit: int | None = None
    ) -> list[ConversationEntry]:
        """The entries up to ``head_id``, oldest first (the last ``limit`` of them), in one read."""
        if head_id is None or limit == 0:
            return []
        return await asyncio.to_thread(self._history, head_id, limit)

    # --- the work, in a worker thread ----------------------------------------------------

    def _view(self, session_id: str) -> Session | None:
        try:
            view = self._store.inspect(session_id)
        except (SessionNotFound, SeedRejected):
            return None
        entries = stored_entries(view)
        with self._lock:
            self._entries.update(entries)
        return view

    def _record(self, conversation_id: str) -> ConversationRecord | None:
        view = self._view(conversation_id)
        dump = latest_record(view, conversation_id) if view is not None else None
        return None if dump is None else _RECORDS.validate_python(thaw(dump))

    def _records(self, scope: str | None, limit: int | None) -> list[ConversationRecord]:
        records = [
            record
            for info in self._store.list()
            if (record := self._record(info.id)) is not None
            and (scope is None or record.scope == scope)
        ]
        records.sort(key=lambda record: record.updated_at, reverse=True)
        return records[:limit]

    def _entry(self, entry_id: str) -> Entry:
        with self._lock:
            entry = self._entries.get(entry_id)
        if entry is None:
            for info in self._store.list():  # not read yet: look in every conversation
                self._view(info.id)
            with self._lock:
                entry = self._entries.get(entry_id)
        if entry is None:
            raise KeyError(f"no conversation in {self._store.url!r} has entry {entry_id!r}")
        return entry

    def _history(self, head_id: str, limit: int | None) -> list[ConversationEntry]:
        chain: list[tuple[str, Entry]] = []
        entry_id: str | None = head_id
        while entry_id is not None and (limit is None or len(chain) < limit):
            entry = self._entry(entry_id)
            chain.append((entry_id, entry))
            entry_id = entry[0]
        chain.reverse()
        # Stored values are frozen; Pydantic rebuilds list types, so it gets plain copies.
        messages = ModelMessagesTypeAdapter.validate_python(thaw([dump for _, (_, dump) in chain]))
        return [
            ConversationEntry(id=entry_id, parent_id=parent_id, message=message)
            for (entry_id, (parent_id, _)), message in zip(chain, messages, strict=True)
        ]

    def _writable(self, record: ConversationRecord) -> Session:
        """The conversation's session, open for writing: resumed, forked or created."""
        conversation_id = record.conversation_id
        try:
            try:
                return self._store.open(conversation_id)
            except SessionNotFound:
                pass
            if record.forked_from is not None and record.head_id is not None:
                source = self._view(record.forked_from)
                cut = entry_boundary(source, record.head_id) if source is not None else None
                if cut is None:
                    raise ConversationConflict(conversation_id)
                return self._store.fork(record.forked_from, cut, child_id=conversation_id)
            return self._store.create(conversation_id)
        except (SessionLocked, SessionAlreadyExists, SessionForkError) as exc:
            raise ConversationConflict(conversation_id) from exc

    def _write(
        self,
        record: ConversationRecord,
        new_entries: list[ConversationEntry],
        expected_revision: str | None,
    ) -> None:
        conversation_id = record.conversation_id
        dumps = ModelMessagesTypeAdapter.dump_python([e.message for e in new_entries], mode="json")
        session = self._writable(record)
        try:
            current = latest_record(session, conversation_id)
            if (current["revision"] if current is not None else None) != expected_revision:
                raise ConversationConflict(conversation_id)
            known = stored_entries(session).keys() | {entry.id for entry in new_entries}
            if record.head_id is not None and record.head_id not in known:
                raise ConversationConflict(conversation_id)
            write_conversation(
                session,
                conversation_id=conversation_id,
                record=_RECORDS.dump_python(record, mode="json"),
                new_entries=[
                    (entry.id, entry.parent_id, entry.message, dump)
                    for entry, dump in zip(new_entries, dumps, strict=True)
                ],
                validate=ModelMessagesTypeAdapter.validate_python,
            )
        finally:
            session.close()
        with self._lock:
            for entry, dump in zip(new_entries, dumps, strict=True):
                self._entries[entry.id] = (entry.parent_id, dump)

    def _delete(self, conversation_id: str, expected_revision: str) -> None:
        try:
            session = self._store.open(conversation_id)
        except (SessionNotFound, SessionLocked, SeedRejected) as exc:
            raise ConversationConflict(conversation_id) from exc
        try:
            current = latest_record(session, conversation_id)
            if current is None or current["revision"] != expected_revision:
                raise ConversationConflict(conversation_id)
            write_conversation(
                session,
                conversation_id=conversation_id,
                record=None,
                new_entries=[],
                validate=ModelMessagesTypeAdapter.validate_python,
            )
        finally:
            session.close()

    # --- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        """Close the store, if this object opened it."""
        if self._owns_store:
            self._store.close()

    def __enter__(self) -> AgentlogConversationStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AgentlogConversationStore({self._store.url!r})"
