"""The checkpoint policy: an agent's events written in group commits, durable where it matters.

Implements spec/persistence.md §6.1 (``session-checkpoint-policy``) as DESIGN.md's
"Durability in the agent loop" states it: the agent appends through ``Checkpoints.append``,
which keeps the session in one ``Session.batch()`` between checkpoints (events are validated
and applied at once, but queued for the store); ``await durable()`` ends the batch, which is
one durable write (JSONL: one write + fsync; SQL: one transaction). The loop calls it before a
model request is sent, before a tool body runs, and at each turn's end; a step's end joins the
next request's write (the pre-step flush of §6.1 and the request flush are one write when
nothing leaves the process between them), so a tool step costs two durable writes whatever its
number of events. A failed checkpoint raises: no
request is sent and no tool runs (fail-closed); the events stay queued for the next write.

Where the write runs is measured, not assumed (``python -m benchmarks loop``): handing it to a
worker thread costs a thread wake-up each way, which on a busy machine is more than the fsync
itself. So when nothing else shares the event loop — the agent's own driver and the task that
awaits it are all there is — the write runs on the loop's thread; when other tasks are there
(running tools of the step, other agents, a server), it runs in a worker thread, and they keep
running during the fsync. A detached session has nothing to write: the checkpoints are no-ops.

Overlapping the write with the loop's own work — start it in a worker thread, build the next
request (or bind the tool's arguments) meanwhile, await it just before the side effect it
guards — was measured too, and is slower on CPython: the worker needs the GIL to start the
write, so it starts only when the loop next blocks, which is the await itself; handing the
GIL over first (an event the worker sets) costs two thread wake-ups, more than the little work
that may legally run before a request or a tool body (an fsync with 170 µs of CPU: on the
loop's thread 418 µs, overlapped in a worker 534–603 µs, on a shared 2-core VM). What a
durable step costs beyond its writes is the loop's CPU, so that is where it is cut.

Durability of the batch's events: not durable until the next checkpoint returns; a crash before
it loses only them (the crash repair of spec/core.md §10.3 closes what the last durable write
left open).
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager
from typing import Any

from agentlog.events import Event
from agentlog.session import Session
from agentlog.values import JsonValue

__all__ = ["Checkpoints"]

_ALONE = 2
"""Tasks on a loop an agent has to itself: its driver, and the task awaiting ``run()``."""


class Checkpoints:
    """Appends to one session in group commits and makes them durable on request.

    Args:
        session: The session the agent drives.
    """

    __slots__ = ("_batch", "_session", "_writing", "durable_writes")

    def __init__(self, session: Session) -> None:
        self._session = session
        self._batch: AbstractContextManager[Any] | None = None
        self._writing = False
        self.durable_writes = 0
        """How many checkpoints wrote something (for tests and benchmarks)."""

    @property
    def pending(self) -> bool:
        """Whether events were appended since the last checkpoint."""
        return self._batch is not None

    def hold(self) -> None:
        """Open the group commit now, so what others append next joins it (compaction)."""
        session = self._session
        # While a write is under way the old batch may still be open on this thread: a new one
        # would nest in it and stop it from being written. Appends then join it (or, once it
        # is written, are written at once); the next batch opens after the write.
        if self._batch is None and session.attached and not self._writing:
            batch = session.batch()
            batch.__enter__()
            self._batch = batch

    def append(
        self,
        event_type: str,
        data: JsonValue,
        *,
        surface_op: JsonValue = None,
        source_event_seqs: JsonValue = None,
    ) -> Event:
        """Append one event inside the open group commit (opened on the first append).

        Raises:
            EventRejected: as ``Session.append``; nothing changes.
        """
        if self._batch is None:  # open already for every append after a checkpoint's first
            self.hold()
        return self._session.append(
            event_type, data, surface_op=surface_op, source_event_seqs=source_event_seqs
        )

    async def durable(self) -> None:
        """Make every event appended so far durable (one write), off the event loop.

        Raises:
            StoreError: the write failed; the events stay queued for the next write.
        """
        if self._batch is None:
            return
        if len(asyncio.all_tasks()) <= _ALONE:
            self.close()  # nothing else would run meanwhile: no thread hand-off
            return
        batch, self._batch = self._batch, None
        self.durable_writes += 1
        loop = asyncio.get_running_loop()
        self._writing = True
        write = loop.run_in_executor(None, batch.__exit__, None, None, None)
        write.add_done_callback(self._written)
        try:
            await asyncio.shield(write)
        except asyncio.CancelledError:
            # A cancel does not interrupt a write under way: wait for it, then abort.
            await asyncio.wait([write])
            write.result()
            raise

    def _written(self, _write: asyncio.Future[Any]) -> None:
        self._writing = False

    def close(self) -> None:
        """Write what is pending now, on this thread (when the loop cannot await any more).

        Raises:
            StoreError: the write failed; the events stay queued for the next write.
        """
        batch, self._batch = self._batch, None
        if batch is not None:
            self.durable_writes += 1
            batch.__exit__(None, None, None)
