"""The sink of an attached session: durable per append, or write-behind with a flush barrier.

Durability, stated per mode (DESIGN decision 7):

* **durable** (default): ``Session.append`` returns only after the backend made the event
  durable (JSONL: written and fsynced; SQL: committed with full synchronous commit). A failed
  write leaves nothing behind and the append raises, so the in-memory log never gets ahead of
  the store.
* **write-behind**: ``append`` queues the event and returns; a background thread writes each
  session's queue as one batch ``batch_delay`` seconds after the first event of the batch was
  queued, and ``Session.flush()`` (or ``close()``) writes the rest on the calling thread and
  returns once it is durable. Events not yet flushed are lost in a crash; nothing flushed ever
  is. A failed background write keeps the batch, in order, logs one warning, and the next
  ``flush()`` retries it (and raises if it fails again). An agent that flushes more often than
  ``batch_delay`` never meets the background thread: the thread sleeps until a batch is
  actually due (one wake-up per due batch, never one per event or per flush), so a flush does
  not wait for a background write of its own events; a flush with nothing queued returns at
  once.
* **group commit** (``Session.batch()``, either mode): between ``hold`` and ``release`` events
  are only queued; the release writes them as one durable backend append on the calling thread.
  A crash before it loses only the block's events. A failed release keeps them queued, in
  order: the next ``flush()`` or durable append writes them first.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from agentlog.errors import StoreError
from agentlog.events import Event
from agentlog.stores.base import Backend, Lease

__all__ = ["Batcher", "Writer"]

_logger = logging.getLogger("agentlog.stores")


class Writer:
    """Persists one attached session's events to its backend (the ``Sink`` of that session).

    Args:
        backend: Where to write.
        header: The session header (written when the session is materialized).
        lease: The writer lease, or a function taking it at the first write (lazy creation).
        next_seq: The next seq the backend expects (its stored event count).
        batcher: The write-behind batcher, or ``None`` for durable appends.
        on_close: Called once the session is closed and its lease released.
    """

    def __init__(
        self,
        backend: Backend,
        session_id: str,
        header: Mapping[str, Any],
        lease: Lease | Callable[[], Lease],
        next_seq: int,
        *,
        batcher: Batcher | None = None,
        on_close: Callable[[], None] = lambda: None,
    ) -> None:
        self.session_id = session_id
        self._backend = backend
        self._header = header
        self._lease = lease
        self._stored = next_seq
        self._batcher = batcher
        self._on_close = on_close
        self._pending: list[Event] = []
        self._queue_lock = threading.Lock()
        self._io_lock = threading.Lock()
        self._failed = False
        self._closed = False
        self._held = False
        self._deadline: float | None = None
        """When the queued batch is due for a background write (``None``: nothing is due)."""
        self._armed = False
        """Whether the batcher holds a wake-up for this writer."""

    @property
    def stored(self) -> int:
        """How many events of the session are durable."""
        return self._stored

    def persist(self, event: Event) -> None:
        """Write ``event`` now (durable mode) or queue it (write-behind, group commit)."""
        if self._closed:
            raise StoreError(f'session "{self.session_id}" is closed', session_id=self.session_id)
        if self._batcher is None and not self._held:
            with self._io_lock:
                # Events of a group commit whose write failed go first, in one write with it.
                with self._queue_lock:
                    batch = [*self._pending, event]
                self._write(batch)
                with self._queue_lock:
                    del self._pending[: len(batch) - 1]
            return
        if self._batcher is None:
            # A group commit without a background thread: nothing else touches the queue (the
            # session calls its sink one call at a time), so no lock either.
            self._pending.append(event)
            return
        with self._queue_lock:
            self._pending.append(event)
            # An open batch (a deadline set) or group commit changes nothing for the batcher:
            # decided here, without a call, for every event after a batch's first.
            if self._held or self._deadline is not None:
                return
            wake_at = self._open_window()
        if wake_at is not None:
            self._batcher.schedule(self, wake_at)

    def _open_window(self) -> float | None:
        """Start the deadline of a new batch (queue lock held); when the batcher must wake.

        ``None`` when nothing changes for the batcher: a batch is already open, an open group
        commit writes its events itself, or a wake-up is pending (it finds the new deadline
        and sleeps on to it).
        """
        if self._held or self._deadline is not None or self._batcher is None:
            return None
        self._deadline = time.monotonic() + self._batcher.delay
        if self._armed:
            return None
        self._armed = True
        return self._deadline

    def hold(self) -> None:
        """Start a group commit: queue events until ``release`` (no background write meanwhile)."""
        self._held = True

    def release(self, *, write: bool) -> None:
        """End the group commit; with ``write``, write everything queued as one durable append.

        Raises:
            StoreError: when the write fails; the events stay queued for the next flush.
        """
        self._held = False
        if write:
            self.flush()
            return
        with self._queue_lock:
            wake_at = self._open_window() if self._pending else None
        if wake_at is not None and self._batcher is not None:
            self._batcher.schedule(self, wake_at)

    def catch_up(self, events: list[Event]) -> None:
        """Durably write events the session already holds beyond what is stored (seeds)."""
        with self._io_lock:
            tail = events[self._stored :]
            if tail:
                self._write(tail)

    def flush(self) -> None:
        """Write every queued event; return once they are durable.

        With nothing queued this returns at once: the queue only shrinks once a write of it is
        durable, so an empty queue means everything persisted is.

        Raises:
            StoreError: when the write fails; the queue is kept for the next flush.
        """
        if not self._pending:
            return
        with self._io_lock:
            while True:
                with self._queue_lock:
                    batch = list(self._pending)
                    if not batch:
                        self._deadline = None
                        return
                self._write(batch)
                with self._queue_lock:
                    del self._pending[: len(batch)]
                    self._failed = False

    def flush_in_background(self) -> float | None:
        """The batcher's wake-up: write the batch if it is due; the next wake-up time, if any.

        Failures are logged once and retried by ``flush()``; automatic retries wait for the
        next event to start a new batch.
        """
        with self._queue_lock:
            deadline = self._deadline
            if self._closed or self._held or deadline is None:
                # Flushed meanwhile, or a group commit writes at its end (and, if it does not
                # write, starts a new batch).
                self._armed = False
                self._deadline = None
                return None
            if deadline > time.monotonic():
                return deadline  # the batch due earlier was flushed; this one is not due yet
        try:
            self.flush()
        except Exception as exc:  # contained: the events stay queued for the next flush
            with self._queue_lock:
                first_failure, self._failed = not self._failed, True
                self._deadline = None
                self._armed = False
            if first_failure:
                _logger.warning(
                    'background write for session "%s" failed (buffered events retained): %s: %s',
                    self.session_id,
                    type(exc).__name__,
                    exc,
                )
            return None
        with self._queue_lock:
            self._armed = self._deadline is not None
            return self._deadline

    def close(self) -> None:
        """Flush, then release the lease; idempotent. If the flush fails, nothing is released."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        if self._batcher is not None:
            self._batcher.forget(self)
        if isinstance(self._lease, Lease):
            self._lease.release()
        self._on_close()

    def abandon(self) -> None:
        """Release the lease without flushing (the store is going away after a failure)."""
        self._closed = True
        if isinstance(self._lease, Lease):
            self._lease.release()

    def _write(self, events: list[Event]) -> None:
        lease = self._lease
        if not isinstance(lease, Lease):
            lease = self._lease = lease()
        self._backend.append(lease, self._header, events, next_seq=self._stored)
        self._stored += len(events)


class Batcher:
    """One background thread that writes each write-behind session's queue when it is due.

    The thread sleeps until the earliest wake-up a writer asked for; it is woken early only
    when a new wake-up becomes the earliest one, which never happens while writers' deadlines
    are all ``delay`` apart from their batches' first events.
    """

    def __init__(self, delay: float) -> None:
        if not 0 < delay <= 3600:
            raise ValueError(f"batch_delay must be in (0, 3600] seconds, got {delay!r}")
        self.delay = delay
        """Seconds from a batch's first queued event to its background write."""
        self._due: list[tuple[float, int, Writer]] = []
        self._order = 0
        self._wake = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def schedule(self, writer: Writer, when: float) -> None:
        """Wake up for ``writer`` at ``when`` (a ``time.monotonic()`` time)."""
        with self._wake:
            if self._stopped:
                return
            self._order += 1
            entry = (when, self._order, writer)
            heapq.heappush(self._due, entry)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="agentlog-write-behind", daemon=True
                )
                self._thread.start()
            elif self._due[0] is entry:
                self._wake.notify()  # the thread sleeps until a later time

    def forget(self, writer: Writer) -> None:
        """Drop ``writer``'s wake-ups (it was closed)."""
        with self._wake:
            self._due = [entry for entry in self._due if entry[2] is not writer]
            heapq.heapify(self._due)

    def stop(self) -> None:
        """Stop the thread after its current write; queued events stay with their writers."""
        with self._wake:
            self._stopped = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stopped and (not self._due or self._due[0][0] > time.monotonic()):
                    timeout = self._due[0][0] - time.monotonic() if self._due else None
                    self._wake.wait(timeout)
                if self._stopped:
                    return
                _, _, writer = heapq.heappop(self._due)
            again = writer.flush_in_background()
            if again is not None:
                self.schedule(writer, again)
