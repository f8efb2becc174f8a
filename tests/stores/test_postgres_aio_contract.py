"""The whole store contract, run against ``agentlog.aio``'s async-native PostgreSQL store.

``TestAsyncPostgres`` is ``TestPostgres`` (the contract plus PostgreSQL's own overrides: no torn
tail, the server's ``disk_full``, its lease text) with one change: every store it opens is an
``agentlog.aio.AsyncStore`` behind ``BlockingStore``, a test-only shim that drives each awaited
call on a private event loop and blocks for its result, so the sync scenarios run unchanged.
The loop runs in a thread of its own, so that what the async store does between calls happens
as it would in an application: write-behind timers fire while a test sleeps, and threads that
share a session submit their appends concurrently, to be serialized by the async session.

Every test runs against the real server in a schema of its own (``postgres_url``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Collection, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agentlog import Event, aio
from agentlog.stores import RawLog, RepairResult, SessionInfo, SessionPage
from tests.stores import test_postgres
from tests.stores.contract import clock

_T = TypeVar("_T")


class Loop:
    """A private event loop running in a daemon thread; ``run`` blocks for a coroutine."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class BlockingSession:
    """An ``AsyncSession`` driven synchronously: each awaited call blocks; reads pass through."""

    def __init__(self, session: aio.AsyncSession, loop: Loop) -> None:
        self.aio = session
        self._loop = loop
        self._batch_thread: int | None = None

    def append(self, event_type: str, data: Any, **options: Any) -> Event:
        if self._batch_thread == threading.get_ident():
            # Inside this thread's own batch block: what AsyncSession.append does inside its
            # task's block, queue with no I/O, on the loop's thread (which holds the batch).
            return self._loop.run(self._queue(event_type, data, **options))
        return self._loop.run(self.aio.append(event_type, data, **options))

    async def _queue(self, event_type: str, data: Any, **options: Any) -> Event:
        return self.aio.sync.append(event_type, data, **options)

    @contextmanager
    def batch(self) -> Iterator[BlockingSession]:
        """``async with session.batch()`` held open by a task while this thread's block runs."""
        if self._batch_thread == threading.get_ident():  # nested: join the outer block
            yield self
            return
        entered: concurrent.futures.Future[asyncio.Event] = concurrent.futures.Future()

        async def hold() -> None:
            leave = asyncio.Event()
            async with self.aio.batch():
                entered.set_result(leave)
                await leave.wait()

        held = asyncio.run_coroutine_threadsafe(hold(), self._loop.loop)
        either: list[concurrent.futures.Future[Any]] = [entered, held]
        concurrent.futures.wait(either, return_when=concurrent.futures.FIRST_COMPLETED)
        if not entered.done():
            held.result()  # the block could not be entered: its error
        leave = entered.result()
        self._batch_thread = threading.get_ident()
        try:
            yield self
        finally:
            self._batch_thread = None
            self._loop.loop.call_soon_threadsafe(leave.set)
            held.result()  # the block's exit: its one durable write

    def flush(self) -> None:
        self._loop.run(self.aio.flush())

    def close(self) -> None:
        self._loop.run(self.aio.close())

    def __enter__(self) -> BlockingSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.aio, name)


class BlockingStore:
    """An ``AsyncStore`` driven synchronously on its own private loop (see ``Loop``)."""

    def __init__(self, url: str, **options: Any) -> None:
        self.loop = Loop()
        try:
            self.aio = self.loop.run(aio.open_store(url, **options))
        except BaseException:
            self.loop.stop()
            raise
        assert self.aio.sync is None  # async-native: no sync store, no worker thread

    @property
    def url(self) -> str:
        return self.aio.url

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        return self.loop.run(coroutine)

    def create(self, session_id: str | None = None, **options: Any) -> BlockingSession:
        return BlockingSession(self.run(self.aio.create(session_id, **options)), self.loop)

    def open(self, session_id: str, **options: Any) -> BlockingSession:
        return BlockingSession(self.run(self.aio.open(session_id, **options)), self.loop)

    def inspect(self, session_id: str) -> BlockingSession:
        return BlockingSession(self.run(self.aio.inspect(session_id)), self.loop)

    def fork(self, session_id: str, *args: Any, **options: Any) -> BlockingSession:
        return BlockingSession(self.run(self.aio.fork(session_id, *args, **options)), self.loop)

    def list(self) -> list[SessionInfo]:
        return self.run(self.aio.list())

    def list_page(self, **options: Any) -> SessionPage:
        return self.run(self.aio.list_page(**options))

    def delete(self, session_id: str) -> None:
        self.run(self.aio.delete(session_id))

    def repair(self, session_id: str, *, cut_at: int) -> RepairResult:
        return self.run(self.aio.repair(session_id, cut_at=cut_at))

    def read_raw(self, session_id: str, types: Collection[str]) -> RawLog:
        return self.run(self.aio.read_raw(session_id, types))

    def flush(self) -> None:
        self.run(self.aio.flush())

    def close(self) -> None:
        self.run(self.aio.close())

    def __enter__(self) -> BlockingStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class TestAsyncPostgres(test_postgres.TestPostgres):
    """The contract (and PostgreSQL's overrides of it) against ``agentlog.aio.open_store``."""

    def make_store(self, tmp_path: Path, **options: Any) -> BlockingStore:  # type: ignore[override]  # the shim stands in for Store
        return BlockingStore(self.url, **options)

    @pytest.fixture
    def stores(self, tmp_path: Path) -> Iterator[Callable[..., BlockingStore]]:
        """The contract's fixture, which also stops each store's private loop at the end."""
        opened: list[BlockingStore] = []

        def open_one(**options: Any) -> BlockingStore:
            store = self.make_store(tmp_path, **{"clock": clock, **options})
            opened.append(store)
            return store

        yield open_one
        try:
            for store in reversed(opened):
                store.close()
        finally:
            for store in opened:
                store.loop.stop()

    def count_writes(self, store: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
        """The sizes of the batches the async backend is asked to write (its awaited append)."""
        backend = store.aio._native.backend  # private; counting its writes is the point
        writes: list[int] = []
        original = backend.append

        async def counted(lease: Any, header: Any, events: Any, **options: Any) -> None:
            await original(lease, header, events, **options)
            writes.append(len(events))

        monkeypatch.setattr(backend, "append", counted)
        return writes

    async def async_session(self, store: Any, session_id: str) -> Any:
        """The async store's own session (the contract's asyncio scenario runs on it)."""
        return await store.aio.create(session_id)

    def run_async(self, store: Any, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """On the store's private loop, where its sessions live."""
        result: _T = store.run(coroutine)
        return result
