"""OpenAI Agents SDK sessions kept in an agentlog store: lossless, crash-safe, compactable.

``AgentlogSession`` implements the SDK's ``agents.memory.session.Session`` protocol (and
``OpenAIResponsesCompactionAwareSession``) on any agentlog store, so it goes wherever
``SQLiteSession`` goes: ``Runner.run(agent, prompt, session=AgentlogSession("chat-1"))``, or
under ``EncryptedSession`` and ``OpenAIResponsesCompactionSession``. Needs
``pip install 'agentlog[openai-agents]'``.

The session is opened for writing at the first write, not in the constructor (as
``SQLiteSession`` connects lazily): until then ``get_items`` reads the items straight from the
store's trusted read (``_stored_items``), falling back to the full open when the log needs it.

How items become events, and why the history stays valid, is in ``_item_log``: each
``add_items`` is one atomic, durable ``Session.batch()``; tool calls and their outputs are
paired as ``tool/call`` + ``tool/result``; ``pop_item``, ``clear_session`` and compaction append
replaces that shadow and cite what they remove (spec/core.md §5.1, §5.3), never deletions. The
converters ``to_response_items`` / ``from_response_items`` (Responses input items) and
``to_chat_messages`` / ``from_chat_messages`` (Chat Completions) translate agentlog messages.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from agentlog.adapters._chat import from_chat_messages, to_chat_messages
from agentlog.adapters._item_log import ItemLog, freeze_items
from agentlog.adapters._responses import from_response_items, to_response_items
from agentlog.adapters._store_ref import StoreRef, resolve_store
from agentlog.adapters._stored_items import stored_items
from agentlog.errors import CompactionError, SessionAlreadyExists, SessionNotFound
from agentlog.plugins import Summarizer, Summary, SummaryRequest, compact
from agentlog.providers.base import require_extra
from agentlog.session import Session
from agentlog.stores import Store

__all__ = [
    "AgentlogSession",
    "from_chat_messages",
    "from_response_items",
    "to_chat_messages",
    "to_response_items",
]

_logger = logging.getLogger("agentlog.adapters.openai_agents")
_T = TypeVar("_T")


class AgentlogSession:
    """An OpenAI Agents SDK session whose items live in an agentlog session.

    The agentlog session ``session_id`` is opened for writing (resumed: a crash's open turn is
    closed by repair closers first; or created) at the first write or ``agentlog_session``;
    until then ``get_items`` reads the stored items without opening it. Safe to share between
    threads and event loops.

    Args:
        session_id: The agentlog session id (also the SDK's ``session_id``).
        store: A ``Store``, a store URL or path, or ``None`` for the default embedded store. A
            store this object opened is closed by ``close()``.
        session_settings: The SDK's ``SessionSettings`` (or a dict of them); ``limit`` is the
            default for ``get_items``.
        summarizer: An agentlog summarizer; with one, ``run_compaction`` (which the SDK's
            runner calls after each turn) compacts the history losslessly.
        should_trigger_compaction: Decides, from the SDK's compaction context dict, whether an
            unforced ``run_compaction`` compacts (default: the SDK's, 10 or more items that are
            not user messages).

    Raises:
        ImportError: naming ``pip install 'agentlog[openai-agents]'`` when the SDK is missing.

    The first write (and ``agentlog_session``) raises ``SessionLocked`` when another writer
    holds the session.
    """

    def __init__(
        self,
        session_id: str,
        store: StoreRef = None,
        *,
        session_settings: Any = None,
        summarizer: Summarizer | None = None,
        should_trigger_compaction: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        settings = require_extra("agents.memory.session_settings", "openai-agents")
        self.session_id = session_id
        self.session_settings: Any = (
            settings.coerce_session_settings(session_settings)
            if session_settings is not None
            else settings.SessionSettings()
        )
        self._summarizer = summarizer
        self._should_trigger = should_trigger_compaction
        self._store, self._owns_store = resolve_store(store)
        self._opening = threading.Lock()
        self._opened: ItemLog | None = None
        self._closed = False

    @property
    def agentlog_session(self) -> Session:
        """The agentlog session behind this one, opened for writing if it is not yet.

        Read it; write through this object only.
        """
        return self._log.session

    @property
    def _log(self) -> ItemLog:
        """The item log of the session, opening (or creating) it the first time."""
        log = self._opened
        if log is None:
            with self._opening:
                log = self._opened
                if log is None:
                    if self._closed:
                        raise RuntimeError(f"AgentlogSession {self.session_id!r} is closed")
                    log = self._opened = ItemLog(_open_or_create(self._store, self.session_id))
        return log

    def _items(self, limit: int | None) -> list[Any]:
        """The latest ``limit`` items: from the open session, else the store's trusted read."""
        if self._opened is None and not self._closed:
            items = stored_items(self._store, self.session_id)
            if items is not None:
                if limit == 0:
                    return []
                return items[-limit:] if limit is not None and limit > 0 else items
        return self._log.items(limit)

    # --- the SDK's Session protocol ------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The latest ``limit`` items (default ``session_settings.limit``), oldest first.

        ``None`` returns every item; ``0`` none; a negative limit every item, as
        ``SQLiteSession`` does.
        """
        if limit is None:
            limit = getattr(self.session_settings, "limit", None)
        return self._items(limit)

    async def add_items(self, items: list[Any]) -> None:
        """Append ``items`` as one batch, durable when this returns.

        Raises:
            EventRejected: for an item outside lossless JSON (nothing is written).
        """
        opened = self._opened
        if self._closed or (opened is not None and opened.session.closed):
            raise RuntimeError(f"AgentlogSession {self.session_id!r} is closed")
        if not items:
            return
        await _settled(asyncio.to_thread(self._add, list(items)))

    def _add(self, items: list[Any]) -> None:
        self._log.add(freeze_items(self.session_id, items))

    async def pop_item(self) -> Any:
        """Remove the newest item from the history and return it (``None`` when empty).

        The item stays in the log: a replace event shadows it and cites it.
        """
        return await _settled(asyncio.to_thread(self._log.pop))

    async def clear_session(self) -> None:
        """Remove every item from the history; the log keeps them, shadowed and cited."""
        await _settled(asyncio.to_thread(self._clear))

    def _clear(self) -> None:
        if self._log.item_count():
            self._log.replace_all([], "clear_session")

    # --- compaction ----------------------------------------------------------------------

    async def run_compaction(self, args: Any = None) -> None:
        """Compact the history with the summarizer, losslessly (a no-op without one).

        Implements the SDK's ``OpenAIResponsesCompactionAwareSession.run_compaction``: unless
        ``args["force"]``, ``should_trigger_compaction`` decides first. The compaction is
        agentlog's (``agentlog.compact``): a summary replaces the oldest history and cites every
        item it shadows; items added while the summary is written stay after it. An unforced
        run that fails logs the failure and keeps the history.

        Raises:
            CompactionError: when a forced compaction fails.
        """
        if self._summarizer is None:
            return
        force = bool(args and args.get("force"))
        if not force and not self._should_compact(args):
            return
        try:
            await self._compact(self._summarizer)
        except CompactionError as exc:
            if force:
                raise
            _logger.warning("session %r: compaction failed, history kept: %s", self.session_id, exc)

    def _should_compact(self, args: Any) -> bool:
        compaction = require_extra(
            "agents.memory.openai_responses_compaction_session", "openai-agents"
        )
        items = self._items(None)
        context = {
            "response_id": args.get("response_id") if args else None,
            "compaction_mode": "input",
            "compaction_candidate_items": compaction.select_compaction_candidate_items(items),
            "session_items": items,
        }
        decide = self._should_trigger or compaction.default_should_trigger_compaction
        return bool(decide(context))

    async def _compact(self, summarizer: Summarizer) -> None:
        # The log's lock is held while the compaction reads the surface and appends its start,
        # released while the summary is written (other writers go on; their items land after
        # the span), and held again for the check and the replacement.
        lock = self._log.lock
        lock.acquire()
        try:
            await compact(self._log.session, _Unlocked(summarizer, lock))
            self._log.state.resync()
        finally:
            lock.release()

    async def _atomic_replace_items(self, items: list[Any]) -> bool:
        """Replace the whole history with ``items`` in one batch (the SDK's compaction hook).

        ``OpenAIResponsesCompactionSession`` calls this with the output of ``responses.compact``:
        one replace shadows every current node and cites it, then the new items are appended.
        """
        frozen = freeze_items(self.session_id, items)
        await _settled(asyncio.to_thread(self._log.replace_all, frozen, "compaction"))
        return True

    # --- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        """Flush and release the session (and the store, if this object opened it)."""
        with self._opening:
            self._closed = True
            log = self._opened
        try:
            if log is not None:
                log.session.close()
        finally:
            if self._owns_store:
                self._store.close()

    def __enter__(self) -> AgentlogSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AgentlogSession({self.session_id!r}, store={self._store.url!r})"


class _Unlocked:
    """A summarizer that runs with the log's lock released (see ``AgentlogSession._compact``)."""

    def __init__(self, inner: Summarizer, lock: Any) -> None:
        self._inner = inner
        self._lock = lock

    async def __call__(self, request: SummaryRequest) -> Summary:
        self._lock.release()
        try:
            return await self._inner(request)
        finally:
            self._lock.acquire()


def _open_or_create(store: Store, session_id: str) -> Session:
    while True:
        try:
            return store.open(session_id)
        except SessionNotFound:
            pass
        try:
            return store.create(session_id)
        except SessionAlreadyExists:
            continue  # created by another writer meanwhile: open it


async def _settled(work: Awaitable[_T]) -> _T:
    """Await a write to its end even if the caller is cancelled, then re-raise the cancel.

    A write in a worker thread cannot be stopped halfway; returning early would let the caller
    believe it did not happen.
    """
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError as exc:
            cancelled = cancelled or exc
    result = task.result()
    if cancelled is not None:
        raise cancelled
    return result
