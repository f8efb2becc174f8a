"""What the PostgreSQL proofs share: lease times, the stored rows, and the server's view.

The store takes its lease time from the URL (``lease_seconds``, at least 0.5 s); the proofs
use short leases so that expiry and takeover happen within a test.
"""

from __future__ import annotations

from typing import Any

import psycopg

from agentlog import thaw
from agentlog.stores import open_backend
from tests.conftest import POSTGRES_SERVER

__all__ = ["admin", "schema_of", "stored_events", "waiting_on", "with_lease"]


def with_lease(url: str, seconds: float) -> str:
    """``url`` with a lease time of ``seconds``."""
    return f"{url}&lease_seconds={seconds:g}"


def schema_of(url: str) -> str:
    return url.rsplit("schema=", 1)[1].split("&", 1)[0]


def admin() -> psycopg.Connection[Any]:
    """A connection of the test's own (autocommit) to the test database."""
    return psycopg.connect(POSTGRES_SERVER, autocommit=True)


def stored_events(url: str, sid: str) -> list[dict[str, Any]]:
    """The committed events of ``sid`` as the backend reads them, with no repair."""
    backend = open_backend(url)
    try:
        log = backend.read(sid)
    finally:
        backend.close()
    assert log.torn is None
    return [thaw(event) for event in log.events]


def waiting_on(connection: psycopg.Connection[Any], url: str, table: str) -> list[int]:
    """The server pids of the backends waiting for a lock on ``table`` of the store's schema."""
    rows = connection.execute(
        "SELECT pid FROM pg_locks WHERE relation = %s::regclass AND NOT granted",
        (f"{schema_of(url)}.{table}",),
    ).fetchall()
    return [row[0] for row in rows]
