"""The async store contract: ``Backend``'s primitives, awaited on the event loop.

Implements DESIGN.md decision 9 ("sync core, async edges") for stores whose driver has native
asyncio connections (PostgreSQL through psycopg's ``AsyncConnection``): an ``AsyncBackend`` does
what a ``Backend`` does (``agentlog.stores.base``: read from a seq, the writer lease, a fenced
durable append, list) with the same arguments, the same results and the same errors, awaited;
``agentlog.aio`` composes it without worker threads (``agentlog.stores.aio_store``). A store
without one (JSONL, SQLite, memory) is run by ``agentlog.aio`` in worker threads instead.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from agentlog.stores.base import SessionInfo, StoredLog
from agentlog.values import JsonValue

if TYPE_CHECKING:
    from agentlog.stores.url import StoreURL

__all__ = ["AsyncBackend", "AsyncLease"]


class AsyncLease(ABC):
    """The exclusive right to write one session (``Lease``), released by an awaited call."""

    @abstractmethod
    async def release(self) -> None:
        """Give the session up so another writer may open it (idempotent)."""


class AsyncBackend(ABC):
    """``Backend``'s storage primitives, awaited; each method's contract is ``Backend``'s."""

    url: str
    """The store URL this backend was opened from."""
    location: str
    """The store, for messages (its password masked)."""

    @classmethod
    @abstractmethod
    async def connect(cls, url: StoreURL, *, read_only: bool = False) -> Self:
        """Open the store ``url`` names (``Backend.from_url``, awaited)."""

    @abstractmethod
    async def exists(self, session_id: str) -> bool:
        """Whether a session with this id has been written."""

    @abstractmethod
    async def read(self, session_id: str, from_seq: int = 0) -> StoredLog:
        """The header and the committed events from ``from_seq`` on (``Backend.read``)."""

    @abstractmethod
    async def lease(self, session_id: str) -> AsyncLease:
        """Take the writer lease of ``session_id`` (``Backend.lease``)."""

    @abstractmethod
    async def append(
        self,
        lease: AsyncLease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        """Durably append ``events`` at ``next_seq`` under ``lease`` (``Backend.append``)."""

    @abstractmethod
    async def delete(self, lease: AsyncLease, session_id: str) -> None:
        """Remove a stored session under its lease, then release it (``Backend.delete``)."""

    @abstractmethod
    async def list(self) -> list[SessionInfo]:
        """Every stored session, read from headers only (``Backend.list``)."""

    @abstractmethod
    async def list_page(
        self,
        *,
        cwd: str | None,
        updated_since: int | None,
        after: tuple[int, str] | None,
        limit: int,
    ) -> Sequence[SessionInfo]:
        """One page of sessions after the ``(created_at, id)`` key (``Backend.list_page``)."""

    @abstractmethod
    async def close(self) -> None:
        """Release leases and connections."""
