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
from collections.abc import Callable, Collection, Iterable
from typing import TypeVar

from agentlog.plugins import compact, compact_if_needed, compact_region
from agentlog.plugins.aio import expand, offload_for_failure, offload_images, prune_tool_results
from agentlog.stores import RawLog, RepairResult, SessionInfo, SessionPage, Store
from agentlog.stores import open_store as _open_store
from agentlog.stores.aio_session import AsyncSession
from agentlog.stores.aio_store import AsyncStoreCore
from agentlog.stores.registry import backend_entry
from agentlog.stores.url import default_store_url, parse_store_url
from agentlog.surface import IMAGE_OFFLOAD, MessageProjection

_T = TypeVar("_T")

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
            return await asyncio.to_thread(
                _on_sync_store,
                self._native.url,
                lambda store: store.repair(session_id, cut_at=cut_at),
            )
        return await asyncio.to_thread(self._sync().repair, session_id, cut_at=cut_at)

    async def read_raw(self, session_id: str, types: Collection[str]) -> RawLog:
        """``Store.read_raw``: the stored events of ``types`` as plain, unvalidated JSON.

        On an async-native store it reads through a sync store of the same URL, opened
        read-only in a worker thread (a reader's occasional call, like ``repair``).
        """
        if self._native is not None:
            return await asyncio.to_thread(
                _on_sync_store,
                self._native.url,
                lambda store: store.read_raw(session_id, types),
                read_only=True,
            )
        return await asyncio.to_thread(self._sync().read_raw, session_id, types)

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


def _on_sync_store(url: str, call: Callable[[Store], _T], *, read_only: bool = False) -> _T:
    """``call`` on a sync store of ``url``, opened for it and closed (a worker thread's job)."""
    with _open_store(url, read_only=read_only) as store:
        return call(store)
