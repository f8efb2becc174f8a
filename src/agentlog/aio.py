"""``agentlog.aio``: the stores for asyncio code, with the same names as the sync API, awaited.

``await open_store(url)`` gives an ``AsyncStore`` whose methods mirror ``Store``; the sessions it
hands out are ``AsyncSession`` objects mirroring ``Session``: ``await session.append(...)``,
``await session.flush()``, ``await session.close()``; reads (``events``, ``surface``,
``derive_messages()``) stay synchronous because they never touch storage.

A PostgreSQL store (``postgresql://…``) is async-native: its storage calls — durable appends,
lease takes and renewals, reads, lists, forks, deletes — are awaited on the event loop over
psycopg's async connections (``agentlog.stores.postgres_aio``), with no worker thread, and the
same contract as the sync store (durability, leases and the seq fence, errors and their texts,
schema): sync and async workers share one store. An append is checked by the session first, then
awaited, then applied: a failed write leaves the session unchanged. Observers run on the event
loop, after the write.

Every other store (JSONL, SQLite, memory) runs its storage work in a worker thread, so the event
loop keeps running while a file is fsynced; observers then run in that thread during a durable
append: keep them synchronous (or hand work to the loop with ``loop.call_soon_threadsafe``).

The calls on one session are serialized. ``async with session.batch():`` is the group commit of
``Session.batch()``: the appends inside do no I/O, so they run on the event loop itself, and the
block's exit writes them in one durable write. Other tasks' calls on the session wait for the
block.

The plugin entry points are here too, under their sync names: ``compact``,
``compact_if_needed`` and ``compact_region`` (the same coroutines, which take either kind of
session), and the twins ``prune_tool_results``, ``offload_images``, ``offload_for_failure``
(awaited) and ``expand`` (a read, so synchronous).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

from agentlog.events import Event
from agentlog.plugins import compact, compact_if_needed, compact_region
from agentlog.plugins.aio import expand, offload_for_failure, offload_images, prune_tool_results
from agentlog.session import EventLog, Observer, Session, Surface, Validator
from agentlog.stores import RepairResult, SessionInfo, SessionPage, Store
from agentlog.stores import open_store as _open_store
from agentlog.stores.aio_store import AsyncStoreCore
from agentlog.stores.aio_writer import AsyncWriter
from agentlog.stores.registry import backend_entry
from agentlog.stores.url import default_store_url, parse_store_url
from agentlog.surface import IMAGE_OFFLOAD, MessageProjection
from agentlog.values import JsonValue

__all__ = [
    "AsyncSession",
    "AsyncStore",
    "compact",
    "compact_if_needed",
    "compact_region",
    "expand",
    "offload_for_failure",
    "offload_images",
    "open_store",
    "prune_tool_results",
]

_BATCHING: contextvars.ContextVar[AsyncSession | None] = contextvars.ContextVar(
    "agentlog_aio_batching", default=None
)
"""The session whose group commit the current task is inside, if any."""


async def open_store(
    url: str | None = None,
    *,
    read_only: bool = False,
    write_behind: bool = False,
    batch_delay: float = 0.2,
    projections: Iterable[MessageProjection] = (IMAGE_OFFLOAD,),
    clock: Callable[[], int] | None = None,
) -> AsyncStore:
    """Open a session store (see ``agentlog.stores.open_store``), for asyncio code.

    A scheme with an async backend (``postgresql://``) is opened on the event loop; any other
    store is opened, and run, in worker threads.
    """
    url = url or default_store_url()
    parsed = parse_store_url(url)
    backend = backend_entry(parsed.scheme).load_async(url)
    if backend is not None:
        connected = await backend.connect(parsed, read_only=read_only or parsed.read_only)
        return AsyncStore(
            AsyncStoreCore(
                connected,
                write_behind=write_behind,
                batch_delay=batch_delay,
                projections=projections,
                clock=clock,
            )
        )
    store = await asyncio.to_thread(
        _open_store,
        url,
        read_only=read_only,
        write_behind=write_behind,
        batch_delay=batch_delay,
        projections=projections,
        clock=clock,
    )
    return AsyncStore(store)


class AsyncStore:
    """A ``Store`` for asyncio code: the same methods, awaited."""

    def __init__(self, store: Store | AsyncStoreCore) -> None:
        self._native = store if isinstance(store, AsyncStoreCore) else None
        self._threaded = store if isinstance(store, Store) else None
        self.sync = self._threaded
        """The wrapped synchronous store (``None`` for an async-native store)."""

    @property
    def url(self) -> str:
        """The URL this store was opened from."""
        return self._store().url

    async def create(
        self, session_id: str | None = None, *, cwd: str | None = None, strict: bool = True
    ) -> AsyncSession:
        """Create a new session, attached: every append is persisted."""
        if self._native is not None:
            return AsyncSession(*await self._native.create(session_id, cwd=cwd, strict=strict))
        sync = self._sync()
        return AsyncSession(
            await asyncio.to_thread(sync.create, session_id, cwd=cwd, strict=strict)
        )

    async def open(self, session_id: str, *, strict: bool = True) -> AsyncSession:
        """Resume a stored session for writing: repair what a crash left, then attach."""
        if self._native is not None:
            return AsyncSession(*await self._native.open(session_id, strict=strict))
        return AsyncSession(await asyncio.to_thread(self._sync().open, session_id, strict=strict))

    async def inspect(self, session_id: str) -> AsyncSession:
        """A detached, read-only view of a stored session; nothing is written."""
        if self._native is not None:
            return AsyncSession(await self._native.inspect(session_id))
        return AsyncSession(await asyncio.to_thread(self._sync().inspect, session_id))

    async def list(self) -> list[SessionInfo]:
        """Every stored session (created sessions appear after their first append)."""
        if self._native is not None:
            return await self._native.list()
        return await asyncio.to_thread(self._sync().list)

    async def list_page(
        self,
        *,
        cwd: str | None = None,
        updated_since: int | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> SessionPage:
        """A page of stored sessions in creation order, filtered; ``cursor`` pages on."""
        if self._native is not None:
            return await self._native.list_page(
                cwd=cwd, updated_since=updated_since, limit=limit, cursor=cursor
            )
        return await asyncio.to_thread(
            self._sync().list_page,
            cwd=cwd,
            updated_since=updated_since,
            limit=limit,
            cursor=cursor,
        )

    async def fork(
        self,
        session_id: str,
        boundary: int | None = None,
        child_id: str | None = None,
        *,
        strict: bool = True,
    ) -> AsyncSession:
        """Fork a stored (or open) session after ``boundary`` into a new persisted child."""
        if self._native is not None:
            return AsyncSession(
                *await self._native.fork(session_id, boundary, child_id, strict=strict)
            )
        return AsyncSession(
            await asyncio.to_thread(
                self._sync().fork, session_id, boundary, child_id, strict=strict
            )
        )

    async def delete(self, session_id: str) -> None:
        """Remove a stored session and every event of it, durably."""
        if self._native is not None:
            await self._native.delete(session_id)
            return
        await asyncio.to_thread(self._sync().delete, session_id)

    async def repair(self, session_id: str, *, cut_at: int) -> RepairResult:
        """Cut a stored log at seq ``cut_at``: the explicit way past ``CorruptLog``.

        An offline operation (no writer may hold the session): on an async-native store it runs
        the sync store's repair on the same URL in a worker thread.
        """
        if self._native is not None:
            session_id = self._native.check_not_live(session_id)
            return await asyncio.to_thread(_repair, self._native.url, session_id, cut_at)
        return await asyncio.to_thread(self._sync().repair, session_id, cut_at=cut_at)

    async def flush(self) -> None:
        """Make every appended event of every open session durable."""
        if self._native is not None:
            await self._native.flush()
            return
        await asyncio.to_thread(self._sync().flush)

    async def close(self) -> None:
        """Flush and release every open session, then the backend; idempotent."""
        if self._native is not None:
            await self._native.close()
            return
        await asyncio.to_thread(self._sync().close)

    async def __aenter__(self) -> AsyncStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _store(self) -> Store | AsyncStoreCore:
        return self._native if self._native is not None else self._sync()

    def _sync(self) -> Store:
        assert self._threaded is not None  # one of the two is set by __init__
        return self._threaded


def _repair(url: str, session_id: str, cut_at: int) -> RepairResult:
    """``Store.repair`` on a sync store of ``url`` (a worker thread's job)."""
    with _open_store(url) as store:
        return store.repair(session_id, cut_at=cut_at)


class AsyncSession:
    """A ``Session`` for asyncio code: appends, flushes and closes are awaited."""

    def __init__(self, session: Session, writer: AsyncWriter | None = None) -> None:
        """Wrap ``session``; ``writer``: its sink when its store is async-native."""
        self.sync = session
        """The wrapped synchronous session."""
        self._writer = writer
        self._lock = asyncio.Lock()

    @property
    def id(self) -> str:
        """The session id."""
        return self.sync.id

    @property
    def header(self) -> JsonValue:
        """The frozen session header."""
        return self.sync.header

    @property
    def seq(self) -> int:
        """The next seq, which is also the number of events."""
        return self.sync.seq

    @property
    def events(self) -> EventLog:
        """Every event, as an immutable sequence."""
        return self.sync.events

    @property
    def surface(self) -> Surface:
        """The live view of the surface."""
        return self.sync.surface

    def event_at(self, seq: int) -> Event:
        """The event at ``seq``."""
        return self.sync.event_at(seq)

    def derive_messages(self) -> list[JsonValue]:
        """The message history the model sees."""
        return self.sync.derive_messages()

    def request_header(self) -> JsonValue:
        """The canonical request header in force, or ``None``."""
        return self.sync.request_header()

    def request_context(self) -> JsonValue:
        """The data of the latest ``request/context`` event, or ``None``."""
        return self.sync.request_context()

    def add_validator(self, validator: Validator) -> Callable[[], None]:
        """Run ``validator(session, candidate)`` before every commit."""
        return self.sync.add_validator(validator)

    def add_observer(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer(session, event)`` after every commit."""
        return self.sync.add_observer(observer)

    async def append(
        self,
        event_type: str,
        data: JsonValue,
        *,
        surface_op: JsonValue = None,
        source_event_seqs: JsonValue = None,
        ignorable: bool = False,
    ) -> Event:
        """Validate and append one event; return it as stored (see ``Session.append``)."""
        if _BATCHING.get() is self:  # inside this task's own batch: queued, no I/O
            return self.sync.append(
                event_type,
                data,
                surface_op=surface_op,
                source_event_seqs=source_event_seqs,
                ignorable=ignorable,
            )
        async with self._lock:
            writer = self._writer
            if not self.sync.attached or (writer is not None and writer.write_behind):
                # Detached, or queued by the writer: no I/O here.
                return self.sync.append(
                    event_type,
                    data,
                    surface_op=surface_op,
                    source_event_seqs=source_event_seqs,
                    ignorable=ignorable,
                )
            if writer is not None:
                return await writer.append(
                    self.sync, event_type, data, surface_op, source_event_seqs, ignorable
                )
            return await asyncio.to_thread(
                self.sync.append,
                event_type,
                data,
                surface_op=surface_op,
                source_event_seqs=source_event_seqs,
                ignorable=ignorable,
            )

    async def flush(self) -> None:
        """Return once every appended event is durable."""
        if _BATCHING.get() is self:
            await self._flush()
            return
        async with self._lock:
            await self._flush()

    @asynccontextmanager
    async def batch(self) -> AsyncIterator[AsyncSession]:
        """Group commit (see ``Session.batch``): one durable write when the block exits."""
        if _BATCHING.get() is self:  # nested: join the outer block
            yield self
            return
        async with self._lock:
            self.sync._open_batch()
            token = _BATCHING.set(self)
            try:
                yield self
            finally:
                _BATCHING.reset(token)
                try:
                    # The batch stays open until its write is durable (a worker thread owns it
                    # for a threaded store), so no other thread's append slips in.
                    await self._flush()
                finally:
                    self.sync._close_batch(write=False)

    async def close(self) -> None:
        """Flush, release the store's writer lock and refuse further appends; idempotent."""
        async with self._lock:
            if self._writer is not None:
                await self._writer.aclose()
                self.sync.close()
                return
            await asyncio.to_thread(self.sync.close)

    async def _flush(self) -> None:
        if self._writer is not None:
            await self._writer.aflush()
        else:
            await asyncio.to_thread(self.sync.flush)

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __getattr__(self, name: str) -> Any:
        # Every other read-only attribute of Session (first_live_seq, own_events, ...).
        return getattr(self.sync, name)
