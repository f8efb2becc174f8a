"""psycopg errors → agentlog errors naming the store and the session (STYLE.md §16).

The message puts the real cause first, in words, chosen by SQLSTATE class: "disk full" for
``53100``, "connection to the server lost" for a broken connection, "permission denied" for
``42501``... A driver error never surfaces raw. A follow-on error — the ``25P02`` "current
transaction is aborted" of a statement sent after the failing one, or a failed ``ROLLBACK``
on a dead connection — is never what is reported: the transaction template reports the first
error and rolls back quietly.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Final

import psycopg

from agentlog.errors import StoreError

__all__ = ["connection_lost", "pg_cause", "pg_errors"]

_CAUSES: Final = {
    "53100": "disk full",
    "53200": "the server is out of memory",
    "53300": "too many connections to the server",
    "53400": "a server configuration limit was exceeded",
    "42501": "permission denied",
    "28000": "authentication failed",
    "28P01": "authentication failed (wrong password)",
    "3D000": "no such database",
    "3F000": "no such schema",
    "25006": "the server is read-only (a standby, or default_transaction_read_only)",
    "25P03": "the transaction was idle too long (idle_in_transaction_session_timeout)",
    "57014": "the statement was cancelled (statement_timeout or a cancel request)",
    "57P01": "the server terminated the connection (administrator command)",
    "57P02": "the server crashed",
    "57P03": "the server is starting up or shutting down",
    "40001": "serialization failure",
    "40P01": "deadlock detected",
    "54000": "a value is too big for PostgreSQL",
    "22021": "a string PostgreSQL cannot store (invalid byte sequence)",
    "22P05": "a string PostgreSQL cannot store (untranslatable character)",
}
_CLASS_CAUSES: Final = {
    "08": "connection to the server lost",
    "53": "the server is out of resources",
    "58": "the server had an I/O error",
    "XX": "internal server error",
}


def pg_cause(exc: BaseException) -> str:
    """``<cause> (<driver message>)`` for a psycopg error, by SQLSTATE when it has one."""
    detail = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, UnicodeEncodeError):
        return f"a string PostgreSQL cannot store ({exc})"
    code = getattr(exc, "sqlstate", None)
    cause = None
    if isinstance(code, str):
        cause = _CAUSES.get(code) or _CLASS_CAUSES.get(code[:2])
    elif isinstance(exc, psycopg.OperationalError):
        cause = (
            "cannot reach the server" if "connect" in detail else "connection to the server lost"
        )
    return f"{cause} ({detail})" if cause else f"{type(exc).__name__}: {detail}"


def connection_lost(
    exc: BaseException, connection: psycopg.Connection[Any] | psycopg.AsyncConnection[Any] | None
) -> bool:
    """Whether ``exc`` broke the connection, so a transaction's outcome may be unknown."""
    if connection is not None and connection.broken:
        return True
    code = getattr(exc, "sqlstate", None)
    if isinstance(code, str):
        return code.startswith("08") or code in ("57P01", "57P02", "57P03")
    return isinstance(exc, psycopg.OperationalError)


@contextlib.contextmanager
def pg_errors(store: str, session_id: str | None = None) -> Iterator[None]:
    """Translate every driver error raised inside into a ``StoreError`` naming the session."""
    try:
        yield
    except (psycopg.Error, UnicodeEncodeError) as exc:
        subject = f' (session "{session_id}")' if session_id is not None else ""
        raise StoreError(
            f"PostgreSQL store {store!r}{subject}: {pg_cause(exc)}", session_id=session_id
        ) from exc
