"""Stores: sessions that persist — JSONL (dsh-compatible, optionally zstd), SQLite, memory.

``open_store(url)`` opens one; ``Store.create`` / ``open`` / ``inspect`` / ``list`` / ``fork`` /
``repair`` work the same on every backend (spec/persistence.md §2). ``load_file`` reads one
transcript.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agentlog.errors import AgentlogError
from agentlog.stores.base import Backend, Lease, RepairResult, SessionInfo, StoredLog, TornTail
from agentlog.stores.files import load_file
from agentlog.stores.jsonl import JsonlBackend
from agentlog.stores.memory import MemoryBackend
from agentlog.stores.sqlite import SqliteBackend
from agentlog.stores.store import MigrationPlan, Store
from agentlog.stores.url import default_home, default_store_url, parse_store_url
from agentlog.surface import IMAGE_OFFLOAD, MessageProjection

__all__ = [
    "Backend",
    "Lease",
    "MigrationPlan",
    "RepairResult",
    "SessionInfo",
    "Store",
    "StoredLog",
    "TornTail",
    "default_home",
    "default_store_url",
    "load_file",
    "open_backend",
    "open_store",
]


def open_backend(url: str) -> Backend:
    """The backend a store URL names (see ``agentlog.stores.url``)."""
    parsed = parse_store_url(url)
    if parsed.scheme == "memory":
        return MemoryBackend(url)
    if parsed.scheme == "postgresql":
        raise AgentlogError(
            f"PostgreSQL stores are not available in this build of agentlog ({url!r}); use "
            "sqlite:/// or jsonl:///"
        )
    assert parsed.path is not None
    if parsed.scheme == "sqlite":
        return SqliteBackend(parsed.path, url=url)
    return JsonlBackend(parsed.path, compressed=parsed.scheme == "jsonl+zstd", url=url)


def open_store(
    url: str | None = None,
    *,
    write_behind: bool = False,
    batch_delay: float = 0.2,
    projections: Iterable[MessageProjection] = (IMAGE_OFFLOAD,),
    clock: Callable[[], int] | None = None,
) -> Store:
    """Open a session store.

    Args:
        url: ``memory:``, ``jsonl:///dir``, ``jsonl+zstd:///dir``, ``sqlite:///file.db`` (three
            slashes and a relative path; four for an absolute one). ``None``: the default
            embedded store, ``$AGENTLOG_STORE`` or ``sessions.db`` in ``$AGENTLOG_HOME``.
        write_behind: Batch appends in the background; ``Session.flush()`` is the barrier.
        batch_delay: Seconds before a write-behind batch is written.
        projections: Message projections the store's sessions may use.
        clock: Epoch-ms source for new events.

    Returns:
        The store; close it (or use it as a context manager) when done.
    """
    backend = open_backend(url or default_store_url())
    return Store(
        backend,
        write_behind=write_behind,
        batch_delay=batch_delay,
        projections=projections,
        clock=clock,
    )
