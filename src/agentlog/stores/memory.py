"""``memory:`` — a store that lives in this process: the test double of every other store.

It keeps events as the immutable objects it was given and enforces the same contract (one
writer per session, contiguous appends, atomic creation), so code written against it behaves
the same on disk. Nothing survives the process.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from agentlog.errors import SessionLocked, StoreError
from agentlog.stores.base import (
    Backend,
    Lease,
    RepairResult,
    SessionInfo,
    StoredLog,
    check_tail,
    session_not_found,
)
from agentlog.values import JsonValue

if TYPE_CHECKING:
    from agentlog.stores.url import StoreURL

__all__ = ["MemoryBackend"]


class _MemoryLease(Lease):
    def __init__(self, backend: MemoryBackend, session_id: str) -> None:
        self._backend = backend
        self.session_id = session_id
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            with self._backend._lock:
                self._backend._leases.discard(self.session_id)


class MemoryBackend(Backend):
    """Sessions in a dict: header and events per id."""

    def __init__(self, url: str = "memory:") -> None:
        self.url = url
        self._lock = threading.Lock()
        self._headers: dict[str, Mapping[str, Any]] = {}
        self._events: dict[str, list[Mapping[str, Any]]] = {}
        self._leases: set[str] = set()

    @classmethod
    def from_url(cls, url: StoreURL, *, read_only: bool = False) -> Self:
        """A new, empty store (``memory:``): nothing to open, nothing to refuse."""
        return cls(url.url)

    def exists(self, session_id: str) -> bool:
        """Whether the session was materialized (appended to)."""
        return session_id in self._headers

    def read(self, session_id: str, from_seq: int = 0) -> StoredLog:
        """The stored header and events from ``from_seq`` on (shared immutable objects)."""
        with self._lock:
            if session_id not in self._headers:
                raise session_not_found(session_id)
            return StoredLog(
                header=self._headers[session_id], events=self._events[session_id][from_seq:]
            )

    def lease(self, session_id: str) -> Lease:
        """Take the in-process writer lease."""
        with self._lock:
            if session_id in self._leases:
                raise SessionLocked(
                    f'session "{session_id}" is open for writing elsewhere', session_id=session_id
                )
            self._leases.add(session_id)
        return _MemoryLease(self, session_id)

    def append(
        self,
        lease: Lease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        """Append (or, at ``next_seq == 0``, create) under the lease."""
        session_id = str(header["id"])
        with self._lock:
            stored = self._events.get(session_id)
            check_tail(session_id, None if stored is None else len(stored), next_seq)
            if stored is None:
                self._headers[session_id] = header
                self._events[session_id] = list(events)
            else:
                stored.extend(events)

    def revision(self, session_id: str) -> str | None:
        """The number of stored events.

        A cut followed by as many appends would look unchanged; the memory store is for tests.
        """
        with self._lock:
            events = self._events.get(session_id)
            return None if events is None else str(len(events))

    def delete(self, lease: Lease, session_id: str) -> None:
        """Forget the session, then release the lease."""
        with self._lock:
            if session_id not in self._headers:
                raise session_not_found(session_id)
            del self._headers[session_id], self._events[session_id]
        lease.release()

    def cut(self, lease: Lease, session_id: str, *, cut_at: int) -> RepairResult:
        """Drop the events from ``cut_at`` on (a memory store keeps no copy: nothing persists)."""
        with self._lock:
            stored = self._events.get(session_id)
            if stored is None:
                raise session_not_found(session_id)
            if cut_at > len(stored):
                raise StoreError(
                    f'cannot cut session "{session_id}" at seq {cut_at}: it holds {len(stored)} '
                    "complete event(s)",
                    session_id=session_id,
                )
            removed = len(stored) - cut_at
            del stored[cut_at:]
        return RepairResult(session_id=session_id, cut_at=cut_at, removed=removed, damaged=0)

    def list(self) -> list[SessionInfo]:
        """Every materialized session."""
        with self._lock:
            return [
                SessionInfo(
                    id=session_id,
                    created_at=int(header["createdAt"]),
                    version=int(header["version"]),
                    cwd=header.get("cwd"),
                    parent_session=header.get("parentSession"),
                    updated_at=self._events[session_id][-1]["time"]
                    if self._events[session_id]
                    else None,
                )
                for session_id, header in self._headers.items()
            ]
