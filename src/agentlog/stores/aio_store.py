"""``AsyncStoreCore``: ``Store`` for an async-native backend, every storage call awaited.

Implements spec/persistence.md §2.3 and §2.6 as ``Store`` does (``agentlog.stores.store``), for
an ``AsyncBackend``: the same steps in the same order — one writer per session (the backend's
lease plus this store's registry), resume with repair and the end-seed marker, inspect without
writing, forks — with every decision and error taken from ``StoreCore``; only the backend calls
are awaited. ``agentlog.aio`` wraps its sessions in ``AsyncSession`` objects.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from agentlog.errors import StoreError
from agentlog.session import Session, check_session_id
from agentlog.stores.aio_base import AsyncBackend, AsyncLease
from agentlog.stores.aio_writer import AsyncWriter
from agentlog.stores.base import SessionInfo, session_not_found
from agentlog.stores.core import (
    StoreCore,
    already_exists,
    already_open,
    fork_exists,
    guard,
    open_here,
)
from agentlog.stores.paging import SessionPage
from agentlog.stores.restore import collector_paused
from agentlog.surface import IMAGE_OFFLOAD, MessageProjection

__all__ = ["AsyncStoreCore", "Attached"]

Attached = tuple[Session, AsyncWriter]
"""An attached session and its writer."""


class AsyncStoreCore(StoreCore[AsyncWriter]):
    """Sessions that persist in an ``AsyncBackend`` (see ``Store`` for each method's contract).

    Args:
        backend: The async storage (PostgreSQL on psycopg's async connections).
        write_behind: Queue appends and write them in batches (``AsyncWriter``).
        batch_delay: Seconds between a session's first queued event and its background write.
        projections: Message projections sessions may use (``image/offload`` by default).
        clock: Epoch-ms source for new events and headers.
    """

    def __init__(
        self,
        backend: AsyncBackend,
        *,
        write_behind: bool = False,
        batch_delay: float = 0.2,
        projections: Iterable[MessageProjection] = (IMAGE_OFFLOAD,),
        clock: Callable[[], int] | None = None,
    ) -> None:
        super().__init__(projections=projections, clock=clock)
        if write_behind and not 0 < batch_delay <= 3600:
            raise ValueError(f"batch_delay must be in (0, 3600] seconds, got {batch_delay!r}")
        self.backend = backend
        self._delay = batch_delay if write_behind else None
        self._lock = asyncio.Lock()

    @property
    def url(self) -> str:
        """The URL this store was opened from."""
        return self.backend.url

    async def create(
        self, session_id: str | None = None, *, cwd: str | None = None, strict: bool = True
    ) -> Attached:
        """``Store.create``: nothing is written until the first append."""
        async with self._lock:
            self._check_open()
            session_id = self._new_id(session_id)
            if session_id in self._live or await self.backend.exists(session_id):
                raise already_exists(session_id)
            session = self._new_session(session_id, cwd=cwd, strict=strict)
            new_id = session_id

            async def lease() -> AsyncLease:
                return await self.backend.lease(new_id)

            return self._attach(session, self._writer(session, lease, 0))

    async def open(self, session_id: str, *, strict: bool = True) -> Attached:
        """``Store.open``: take the lease, read, repair, persist the repair, attach."""
        session_id = check_session_id(session_id)
        async with self._lock:
            self._check_open()
            if session_id in self._live:
                raise already_open(session_id)
            if not await self.backend.exists(session_id):
                raise session_not_found(session_id)
            lease = await self.backend.lease(session_id)
            try:
                stored = await self.backend.read(session_id)
                if stored.torn is not None:  # an async backend is transactional
                    raise StoreError(
                        f'store {self.url!r} reported a torn tail of session "{session_id}" '
                        "it cannot drop",
                        session_id=session_id,
                    )
                with collector_paused():
                    restored = self._restore(session_id, stored, repair=True)
                session = restored.session
                write = self._resume_write(stored, restored)
                if write is not None:
                    await self.backend.append(lease, session.header, write[0], next_seq=write[1])
            except BaseException:
                await lease.release()
                raise
            guard(session, strict)
            return self._attach(session, self._writer(session, lease, session.seq))

    async def inspect(self, session_id: str) -> Session:
        """``Store.inspect``: a detached, read-only view; nothing is written."""
        session_id = check_session_id(session_id)
        async with self._lock:
            self._check_open()
            live = self._live_view(session_id)
            if live is not None:
                return live
            if not await self.backend.exists(session_id):
                raise session_not_found(session_id)
            stored = await self.backend.read(session_id)
            with collector_paused():
                return self._restore(session_id, stored, repair=True).session

    async def list(self) -> list[SessionInfo]:
        """``Store.list``: every stored session, in creation order."""
        async with self._lock:
            self._check_open()
            return self._sorted(await self.backend.list())

    async def list_page(
        self,
        *,
        cwd: str | None = None,
        updated_since: int | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> SessionPage:
        """``Store.list_page``: a page of stored sessions in creation order, filtered."""
        after = self._page_after(limit, cursor)
        async with self._lock:
            self._check_open()
            found = await self.backend.list_page(
                cwd=cwd, updated_since=updated_since, after=after, limit=limit + 1
            )
        return self._page(found, limit)

    async def fork(
        self,
        session_id: str,
        boundary: int | None = None,
        child_id: str | None = None,
        *,
        strict: bool = True,
    ) -> Attached:
        """``Store.fork``: the child is written durably and returned attached."""
        session_id, child_id = self._fork_ids(session_id, child_id)
        async with self._lock:
            self._check_open()
            if child_id is not None and (
                child_id in self._live or await self.backend.exists(child_id)
            ):
                raise fork_exists(session_id, child_id)
            stored = None
            if session_id not in self._live and await self.backend.exists(session_id):
                stored = await self.backend.read(session_id)
            source = self._fork_source(session_id, stored)
            child = self._fork_child(session_id, source, boundary, child_id)
            lease = await self.backend.lease(child.id)
            try:
                writer = self._writer(child, lease, 0)
                await writer.catch_up(list(child.events))
            except BaseException:
                await lease.release()
                raise
            guard(child, strict)
            return self._attach(child, writer)

    async def delete(self, session_id: str) -> None:
        """``Store.delete``: remove a stored session and every event of it, durably."""
        session_id = check_session_id(session_id)
        async with self._lock:
            self._check_open()
            if session_id in self._live:
                raise open_here(session_id)
            if not await self.backend.exists(session_id):
                raise session_not_found(session_id)
            lease = await self.backend.lease(session_id)
            try:
                await self.backend.delete(lease, session_id)
            finally:
                await lease.release()

    def check_not_live(self, session_id: str) -> str:
        """The checked id of a session that is not open for writing here (for ``repair``)."""
        session_id = check_session_id(session_id)
        self._check_open()
        if session_id in self._live:
            raise already_open(session_id)
        return session_id

    async def flush(self) -> None:
        """``Store.flush``: make every appended event of every open session durable."""
        for _, writer in list(self._live.values()):
            await writer.aflush()

    async def close(self) -> None:
        """``Store.close``: flush and release every open session, then the backend."""
        async with self._lock:
            if self._closed:
                return
            try:
                for session, writer in list(self._live.values()):
                    await writer.aclose()
                    session.close()
            finally:
                self._closed = True
                for _, writer in list(self._live.values()):
                    await writer.abandon()
                self._live.clear()
                await self.backend.close()

    def _writer(
        self,
        session: Session,
        lease: AsyncLease | Callable[[], Awaitable[AsyncLease]],
        next_seq: int,
    ) -> AsyncWriter:
        session_id = session.id

        def released() -> None:
            self._live.pop(session_id, None)

        return AsyncWriter(
            self.backend,
            session_id,
            session.header,
            lease,
            next_seq,
            batch_delay=self._delay,
            on_close=released,
        )

    def _attach(self, session: Session, writer: AsyncWriter) -> Attached:
        session.attach(writer)
        self._live[session.id] = (session, writer)
        return session, writer
