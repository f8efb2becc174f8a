"""Stores: sessions that persist — JSONL (dsh-compatible, optionally zstd), SQLite, PostgreSQL.

And ``memory:``, for tests.

``open_store(url)`` opens one; ``Store.create`` / ``open`` / ``inspect`` / ``list`` / ``fork`` /
``repair`` work the same on every backend (spec/persistence.md §2). ``load_file`` reads one
transcript.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agentlog.stores.base import (
    Backend,
    Lease,
    RawLog,
    RepairResult,
    SessionInfo,
    StoredLog,
    TornTail,
)
from agentlog.stores.files import load_file
from agentlog.stores.paging import SessionPage
from agentlog.stores.read_only import ReadOnlyBackend
from agentlog.stores.reading import Inspection
from agentlog.stores.registry import backend_entry, register_backend
from agentlog.stores.store import MigrationPlan, Store
from agentlog.stores.url import default_home, default_store_url, parse_store_url
from agentlog.surface import IMAGE_OFFLOAD, MessageProjection

__all__ = [
    "Backend",
    "Inspection",
    "Lease",
    "MigrationPlan",
    "RawLog",
    "RepairResult",
    "SessionInfo",
    "SessionPage",
    "Store",
    "StoredLog",
    "TornTail",
    "default_home",
    "default_store_url",
    "load_file",
    "migrate_store",
    "open_backend",
    "open_store",
    "register_backend",
]


def open_backend(url: str, *, read_only: bool = False) -> Backend:
    """The backend a store URL (or path) names (see ``agentlog.stores.url``).

    The scheme's class comes from ``agentlog.stores.registry`` (imported on first use).
    Read-only (``read_only=True`` or ``?mode=ro``): nothing is created, and a file store that
    does not exist is an error rather than an empty store.
    """
    parsed = parse_store_url(url)
    read_only = read_only or parsed.read_only
    backend = backend_entry(parsed.scheme).load(url).from_url(parsed, read_only=read_only)
    return ReadOnlyBackend(backend) if read_only else backend


def migrate_store(url: str) -> tuple[int, int] | None:
    """Upgrade a store's own schema to this build's version, explicitly.

    Only a PostgreSQL store has a schema that is upgraded (opening one never does it); SQLite
    databases are bump-and-reject, and JSONL and memory stores have no schema.

    Returns:
        ``(from, to)`` versions (``from`` is 0 when the schema was created), or ``None`` when
        the store has no schema to upgrade.

    Raises:
        StoreError: for a newer schema than this build's, or one that is not agentlog's.
    """
    if parse_store_url(url).scheme != "postgresql":
        return None
    from agentlog.stores.postgres import migrate_schema  # the optional extra, as above

    return migrate_schema(url)


def open_store(
    url: str | None = None,
    *,
    read_only: bool = False,
    write_behind: bool = False,
    batch_delay: float = 0.2,
    projections: Iterable[MessageProjection] = (IMAGE_OFFLOAD,),
    clock: Callable[[], int] | None = None,
) -> Store:
    """Open a session store.

    Args:
        url: ``memory:``, ``jsonl:///dir``, ``jsonl+zstd:///dir``, ``sqlite:///file.db`` (three
            slashes and a relative path; four for an absolute one), ``postgresql://...``, or a
            plain path (a
            directory: JSONL; a ``.db`` file: SQLite). ``None``: the default embedded store,
            ``$AGENTLOG_STORE`` or ``sessions.db`` in ``$AGENTLOG_HOME``.
        read_only: Never create or write anything (as ``?mode=ro``): reads work, writes raise
            ``StoreError``, and a store that does not exist is an error.
        write_behind: Batch appends in the background; ``Session.flush()`` is the barrier.
        batch_delay: Seconds before a write-behind batch is written.
        projections: Message projections the store's sessions may use.
        clock: Epoch-ms source for new events.

    Returns:
        The store; close it (or use it as a context manager) when done.
    """
    backend = open_backend(url or default_store_url(), read_only=read_only)
    return Store(
        backend,
        write_behind=write_behind,
        batch_delay=batch_delay,
        projections=projections,
        clock=clock,
    )
