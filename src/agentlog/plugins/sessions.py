"""The sessions plugins work on: a ``Session``, or an ``agentlog.aio`` session.

The plugin entry points are written once, against ``AsyncSessionLike`` — the part of
``agentlog.aio.AsyncSession`` they use: the wrapped ``Session`` to read (reads never do I/O),
and awaited ``append``, ``flush`` and group commits (``batch``). ``as_async`` lets a plain
``Session`` through the same code: its calls run at once, on the calling thread, exactly as the
synchronous API runs them. So the compaction entry points (already coroutines: they await a
summarizer) take either kind of session, and the synchronous ones (pruning, image offload)
have twins in ``agentlog.aio`` that share their I/O-free half (STYLE.md §8).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

from agentlog.events import Event
from agentlog.session import Session
from agentlog.values import JsonValue

__all__ = ["AsyncSessionLike", "as_async", "require_session"]


class AsyncSessionLike(Protocol):
    """What a plugin needs of an asyncio session (``agentlog.aio.AsyncSession`` has it)."""

    @property
    def sync(self) -> Session:
        """The session to read: its log, surface and derived messages."""

    async def append(
        self,
        event_type: str,
        data: JsonValue,
        *,
        surface_op: JsonValue = None,
        source_event_seqs: JsonValue = None,
        ignorable: bool = False,
    ) -> Event:
        """Validate and append one event (see ``Session.append``)."""

    async def flush(self) -> None:
        """Return once every appended event is durable."""

    def batch(self) -> AbstractAsyncContextManager[Any]:
        """Group commit: one durable write, and no other task's append in between."""


class _Inline:
    """A ``Session`` behind the async protocol: every call runs at once, on this thread."""

    __slots__ = ("sync",)

    def __init__(self, session: Session) -> None:
        self.sync = session

    async def append(
        self,
        event_type: str,
        data: JsonValue,
        *,
        surface_op: JsonValue = None,
        source_event_seqs: JsonValue = None,
        ignorable: bool = False,
    ) -> Event:
        return self.sync.append(
            event_type,
            data,
            surface_op=surface_op,
            source_event_seqs=source_event_seqs,
            ignorable=ignorable,
        )

    async def flush(self) -> None:
        self.sync.flush()

    @asynccontextmanager
    async def batch(self) -> AsyncIterator[_Inline]:
        # The block's appends never suspend (they are the calls above), so holding the
        # synchronous group commit across them lets nothing else in.
        with self.sync.batch():
            yield self


def as_async(session: Session | AsyncSessionLike) -> AsyncSessionLike:
    """``session`` behind the async protocol (a ``Session`` runs its calls inline)."""
    return _Inline(session) if isinstance(session, Session) else session


def require_session(session: object, name: str) -> None:
    """Refuse an ``agentlog.aio`` session in a synchronous entry point, naming its twin.

    Raises:
        TypeError: when ``session`` is not a ``Session``.
    """
    if not isinstance(session, Session):
        raise TypeError(
            f"{name}() needs a Session, got {type(session).__name__}; for an agentlog.aio "
            f"session use: await agentlog.aio.{name}(session, ...)"
        )
