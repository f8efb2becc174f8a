"""``AsyncWriter``: the sink of a session whose store is async-native (``AsyncBackend``).

The twin of ``Writer`` (``agentlog.stores.writer``) for ``agentlog.aio``, with the same
durability per mode (DESIGN decision 7), awaited on the event loop instead of run on a thread:

* **durable** (default): ``append`` checks the event through the session's own pipeline
  (``Session._prepare``), awaits the backend's durable write, and only then applies it
  (``Session._commit``), so a failed write leaves the session unchanged and the append raises.
* **write-behind**: events are queued; ``batch_delay`` seconds after a batch's first event an
  asyncio timer writes the batch, and ``flush()`` / ``close()`` write the rest. Unflushed events
  are lost in a crash; a failed background write keeps the batch, logs one warning, and the
  next ``flush()`` retries it.
* **group commit** (``async with session.batch()``): between ``hold`` and ``release`` events
  are only queued; the block's exit awaits ``flush()``: one durable backend append.

The synchronous ``Sink`` methods are what the session itself calls: they queue (group commit,
write-behind) and otherwise refuse, naming the awaited call to use, because a synchronous call
cannot wait for an async store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agentlog.errors import StoreError
from agentlog.events import Event
from agentlog.session import Session
from agentlog.stores.aio_base import AsyncBackend, AsyncLease
from agentlog.values import JsonValue

__all__ = ["AsyncWriter"]

_logger = logging.getLogger("agentlog.stores")


class AsyncWriter:
    """Persists one attached session's events to an ``AsyncBackend`` (its ``Sink``).

    Args:
        backend: Where to write.
        header: The session header (written when the session is materialized).
        lease: The writer lease, or a coroutine function taking it at the first write.
        next_seq: The next seq the backend expects (its stored event count).
        batch_delay: Write-behind: seconds from a batch's first event to its write
            (``None``: durable appends).
        on_close: Called once the session is closed and its lease released.
    """

    def __init__(
        self,
        backend: AsyncBackend,
        session_id: str,
        header: Mapping[str, Any],
        lease: AsyncLease | Callable[[], Awaitable[AsyncLease]],
        next_seq: int,
        *,
        batch_delay: float | None = None,
        on_close: Callable[[], None] = lambda: None,
    ) -> None:
        self.session_id = session_id
        self._backend = backend
        self._header = header
        self._lease = lease
        self._stored = next_seq
        self._delay = batch_delay
        self._on_close = on_close
        self._pending: list[Event] = []
        self._io = asyncio.Lock()
        self._held = False
        self._closed = False
        self._failed = False
        self._timer: asyncio.TimerHandle | None = None
        self._background: set[asyncio.Task[None]] = set()

    @property
    def stored(self) -> int:
        """How many events of the session are durable."""
        return self._stored

    @property
    def write_behind(self) -> bool:
        """Whether appends are queued and written in the background."""
        return self._delay is not None

    # --- the Sink protocol (called by the session, synchronously) ------------------------------

    def persist(self, event: Event) -> None:
        """Queue ``event`` (group commit, write-behind); a durable append must be awaited."""
        self._check_open()
        if not self._held and self._delay is None:
            raise StoreError(
                f'session "{self.session_id}" is stored by an agentlog.aio store: append with '
                "await session.append(...)",
                session_id=self.session_id,
            )
        self._pending.append(event)
        if not self._held:
            self._arm()

    def hold(self) -> None:
        """Start a group commit: queue events until ``release``."""
        self._held = True

    def release(self, *, write: bool) -> None:
        """End the group commit; its write is awaited (``flush``) before, never here."""
        self._held = False
        if write and self._pending:
            raise StoreError(
                f'session "{self.session_id}" is stored by an agentlog.aio store: group commit '
                "with async with session.batch()",
                session_id=self.session_id,
            )
        if self._pending:
            self._arm()

    def flush(self) -> None:
        """Nothing queued: return; else the flush must be awaited (``aflush``)."""
        if self._pending:
            raise StoreError(
                f'session "{self.session_id}" is stored by an agentlog.aio store: flush with '
                "await session.flush()",
                session_id=self.session_id,
            )

    def close(self) -> None:
        """After ``aclose``: nothing left to do; before it, the close must be awaited."""
        if not self._closed:
            raise StoreError(
                f'session "{self.session_id}" is stored by an agentlog.aio store: close it with '
                "await session.close()",
                session_id=self.session_id,
            )

    # --- awaited ---------------------------------------------------------------------------

    async def append(
        self,
        session: Session,
        event_type: str,
        data: JsonValue,
        surface_op: JsonValue,
        source_event_seqs: JsonValue,
        ignorable: bool,
    ) -> Event:
        """Check the event, await its durable write, then apply it (spec/core.md §4).

        The session's own pipeline checks it (``Session._prepare``: nothing changes if it is
        rejected); the write comes next; the event is applied (``Session._commit``) only once
        it is durable, so a failed write leaves the session as it was.
        """
        with session._lock:
            pending = session._prepare(event_type, data, surface_op, source_event_seqs, ignorable)
        # The write runs in a task of its own, so cancelling the caller never interrupts it
        # mid-statement (which would leave its outcome unknown). The caller waits on ``done``,
        # which the write settles itself: one hop back, not the two of ``asyncio.shield``.
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        write = loop.create_task(self._write_reporting(pending[0], done))
        try:
            await done
        except asyncio.CancelledError:
            # A cancelled task still learns the write's outcome first: a write that committed
            # is applied, so the session never falls behind its store (whose fence would then
            # refuse every later append).
            await asyncio.wait([write])
            if not write.cancelled() and write.result():
                with session._lock:
                    session._commit(pending)
            raise
        with session._lock:
            return session._commit(pending)

    async def _write_reporting(self, event: Event, done: asyncio.Future[None]) -> bool:
        """``_write_one``, its outcome set on ``done`` unless its waiter is gone; it landed?"""
        try:
            await self._write_one(event)
        except asyncio.CancelledError:
            done.cancel()
            raise
        except BaseException as exc:
            if not done.done():
                done.set_exception(exc)
            return False
        if not done.done():
            done.set_result(None)
        return True

    async def _write_one(self, event: Event) -> None:
        """Durably write ``event`` (after the events of a group commit whose write failed)."""
        self._check_open()
        async with self._io:
            batch = [*self._pending, event]
            await self._write(batch)
            del self._pending[: len(batch) - 1]

    async def aflush(self) -> None:
        """Write every queued event; return once they are durable.

        Raises:
            StoreError: when the write fails; the queue is kept for the next flush.
        """
        async with self._io:
            while self._pending:
                batch = list(self._pending)
                await self._write(batch)
                del self._pending[: len(batch)]
                self._failed = False

    async def aclose(self) -> None:
        """Flush, then release the lease; idempotent. If the flush fails, nothing is released."""
        if self._closed:
            return
        await self.aflush()
        self._disarm()
        self._closed = True
        if isinstance(self._lease, AsyncLease):
            await self._lease.release()
        self._on_close()

    async def abandon(self) -> None:
        """Release the lease without flushing (the store is going away after a failure)."""
        self._disarm()
        self._closed = True
        if isinstance(self._lease, AsyncLease):
            await self._lease.release()

    async def catch_up(self, events: list[Event]) -> None:
        """Durably write events the session already holds beyond what is stored (seeds)."""
        async with self._io:
            tail = events[self._stored :]
            if tail:
                await self._write(tail)

    # --- internals -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f'session "{self.session_id}" is closed', session_id=self.session_id)

    async def _write(self, events: list[Event]) -> None:
        lease = self._lease
        if not isinstance(lease, AsyncLease):
            lease = self._lease = await lease()
        await self._backend.append(lease, self._header, events, next_seq=self._stored)
        self._stored += len(events)

    def _arm(self) -> None:
        """Start the write-behind timer of a new batch (none while one is pending)."""
        if self._delay is None or self._timer is not None:
            return
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self._delay, self._due)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _due(self) -> None:
        self._timer = None
        if self._closed or self._held or not self._pending:
            return
        task = asyncio.get_running_loop().create_task(self._flush_in_background())
        self._background.add(task)  # a reference, so the task is not collected mid-write
        task.add_done_callback(self._background.discard)

    async def _flush_in_background(self) -> None:
        try:
            await self.aflush()
        except Exception as exc:  # contained: the events stay queued for the next flush
            first_failure, self._failed = not self._failed, True
            if first_failure:
                _logger.warning(
                    'background write for session "%s" failed (buffered events retained): %s: %s',
                    self.session_id,
                    type(exc).__name__,
                    exc,
                )
