"""``AsyncSession``: a ``Session`` for asyncio code, the sessions ``agentlog.aio`` hands out.

Appends, flushes and closes are awaited: on an async-native store (``AsyncWriter``) the write
is awaited on the event loop, on any other store it runs in a worker thread; reads stay
synchronous because they never touch storage. ``async with session.batch():`` is the group
commit of ``Session.batch()``.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from agentlog.events import Event
from agentlog.session import EventLog, Observer, Session, Surface, Validator
from agentlog.stores.aio_writer import AsyncWriter
from agentlog.values import JsonValue

__all__ = ["AsyncSession"]

_BATCHING: contextvars.ContextVar[AsyncSession | None] = contextvars.ContextVar(
    "agentlog_aio_batching", default=None
)
"""The session whose group commit the current task is inside, if any."""


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
