"""A store opened read-only: every read passes through, every write is refused up front.

``open_store(url, read_only=True)`` (or a URL with ``?mode=ro``) wraps its backend in
``ReadOnlyBackend``: ``inspect``, ``list`` and the other reads work as usual, while ``create``,
``open`` and ``fork`` fail with a ``StoreError`` before anything is created on disk.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, NoReturn

from agentlog.errors import StoreError
from agentlog.stores.base import (
    Backend,
    Lease,
    RawLog,
    RepairResult,
    SessionInfo,
    StoredLog,
)
from agentlog.values import JsonValue

__all__ = ["ReadOnlyBackend", "read_only_error"]


class ReadOnlyBackend(Backend):
    """Reads of ``backend``; taking a writer lease or appending raises ``StoreError``."""

    def __init__(self, backend: Backend) -> None:
        self.url = backend.url
        self._backend = backend

    def exists(self, session_id: str) -> bool:
        """Whether the session exists in the wrapped store."""
        return self._backend.exists(session_id)

    def read(self, session_id: str, from_seq: int = 0) -> StoredLog:
        """Read the session (from ``from_seq`` on) from the wrapped store."""
        return self._backend.read(session_id, from_seq)

    def read_raw(self, session_id: str, types: Collection[str]) -> RawLog:
        """The trusted read of the wrapped store."""
        return self._backend.read_raw(session_id, types)

    def revision(self, session_id: str) -> str | None:
        """The wrapped store's revision of the session."""
        return self._backend.revision(session_id)

    def wait_for_append(self, session_id: str, revision: str | None, timeout: float) -> None:
        """Wait as the wrapped store does (PostgreSQL: ``LISTEN``; files: a sleep)."""
        self._backend.wait_for_append(session_id, revision, timeout)

    def list(self) -> list[SessionInfo]:
        """The wrapped store's sessions."""
        return self._backend.list()

    def list_page(
        self,
        *,
        cwd: str | None,
        updated_since: int | None,
        after: tuple[int, str] | None,
        limit: int,
    ) -> Sequence[SessionInfo]:
        """A page of the wrapped store's sessions."""
        return self._backend.list_page(
            cwd=cwd, updated_since=updated_since, after=after, limit=limit
        )

    def lease(self, session_id: str) -> Lease:
        """Refused: nothing is written through a read-only store."""
        self._refuse(session_id)

    def append(
        self,
        lease: Lease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        """Refused: nothing is written through a read-only store."""
        self._refuse(str(header.get("id")))

    def delete(self, lease: Lease, session_id: str) -> None:
        """Refused: nothing is removed through a read-only store."""
        self._refuse(session_id)

    def cut(self, lease: Lease, session_id: str, *, cut_at: int) -> RepairResult:
        """Refused: nothing is cut through a read-only store."""
        self._refuse(session_id)

    def close(self) -> None:
        """Close the wrapped store."""
        self._backend.close()

    def _refuse(self, session_id: str) -> NoReturn:
        raise read_only_error(self.url, session_id)


def read_only_error(url: str, session_id: str) -> StoreError:
    """The refusal of a write through a read-only store (sync or ``agentlog.aio``)."""
    return StoreError(
        f'store {url!r} is open read-only: session "{session_id}" cannot be written',
        session_id=session_id,
    )
