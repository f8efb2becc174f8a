"""The PostgreSQL store's reads, lists and deletes, as ``_pg_steps`` operations.

Shared by ``PostgresBackend`` and ``AsyncPostgresBackend`` (each only runs them): the statements
of spec/persistence.md §4 in the store's schema (``_pg_schema``), and their results decoded by
the SQL stores' row codec (``agentlog.stores.sql``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from agentlog.stores._pg_steps import Run, Statement, Steps
from agentlog.stores.base import SessionInfo, StoredLog, session_not_found
from agentlog.stores.sql.rows import EVENT_COLUMNS, BadRow, corrupt, stored_log

__all__ = [
    "delete_session",
    "exists",
    "list_page",
    "list_sessions",
    "read_log",
    "stored_next",
]

_INFO: Final = "SELECT id, created_at, version, cwd, parent_session, updated_at FROM sessions"
_PAGE: Final = (
    _INFO + " WHERE (%(cwd)s::text IS NULL OR cwd = %(cwd)s) "
    "AND (%(since)s::bigint IS NULL OR coalesce(updated_at, created_at) >= %(since)s) "
    "AND (%(created)s::bigint IS NULL OR (created_at, id) > (%(created)s, %(id)s)) "
    "ORDER BY created_at, id LIMIT %(limit)s"
)
"""One page by keyset on ``(created_at, id)``, served by the sessions' indexes."""


def exists(session_id: str) -> Run[bool]:
    """Whether the session has a row."""
    return Run(_exists(session_id))


def _exists(session_id: str) -> Steps[bool]:
    (row,) = yield [Statement("SELECT 1 FROM sessions WHERE id = %s", (session_id,), "one")]
    return row is not None


def stored_next(session_id: str) -> Run[int | None]:
    """The session's stored next seq (``None``: no session)."""
    return Run(_stored_next(session_id))


def _stored_next(session_id: str) -> Steps[int | None]:
    (row,) = yield [Statement("SELECT next_seq FROM sessions WHERE id = %s", (session_id,), "one")]
    return None if row is None else int(row[0])


def read_log(
    session_id: str, from_seq: int, *, location: str, unpack: Callable[[int, bytes], bytes]
) -> Run[StoredLog]:
    """The header and the event rows from ``from_seq`` on, from one repeatable-read snapshot.

    Raises (when run):
        SessionNotFound: when no session has that id.
        CorruptLog: when a row is damaged, or the rows do not reach the stored tail.
    """
    return Run(_read_log(session_id, from_seq, location, unpack), transaction=True)


def _read_log(
    session_id: str, from_seq: int, location: str, unpack: Callable[[int, bytes], bytes]
) -> Steps[StoredLog]:
    _, row, rows = yield [
        Statement("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"),
        Statement(
            "SELECT header, next_seq FROM sessions WHERE id = %s", (session_id,), "one", True
        ),
        # A whole read sees every row, so that one no log can hold (a negative seq) is
        # reported; a suffix starts at its seq.
        Statement(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = %s "
            "AND (%s = 0 OR seq >= %s) ORDER BY seq",
            (session_id, from_seq, from_seq),
            "all",
            True,
        ),
    ]
    if row is None:
        raise session_not_found(session_id)
    try:
        return stored_log(session_id, location, row, rows, from_seq, unpack)
    except BadRow as bad:
        ((later,),) = yield [
            Statement(
                "SELECT count(*) FROM events WHERE session_id = %s AND seq > %s",
                (session_id, bad.seq),
                "one",
            )
        ]
        raise corrupt(session_id, location, bad, later) from bad.__cause__


def delete_session(session_id: str) -> Run[None]:
    """One transaction removes the session's events and its row.

    Raises (when run):
        SessionNotFound: when no session has that id (nothing is removed).
    """
    return Run(_delete_session(session_id), transaction=True)


def _delete_session(session_id: str) -> Steps[None]:
    _, removed = yield [
        Statement("DELETE FROM events WHERE session_id = %s", (session_id,)),
        Statement("DELETE FROM sessions WHERE id = %s", (session_id,)),
    ]
    if removed != 1:
        raise session_not_found(session_id)


def list_sessions() -> Run[list[SessionInfo]]:
    """Every session row."""
    return Run(_listed(Statement(_INFO, (), "all")))


def list_page(
    *, cwd: str | None, updated_since: int | None, after: tuple[int, str] | None, limit: int
) -> Run[list[SessionInfo]]:
    """The first ``limit`` matching sessions after the ``(created_at, id)`` key ``after``."""
    params = {
        "cwd": cwd,
        "since": updated_since,
        "created": None if after is None else after[0],
        "id": None if after is None else after[1],
        "limit": limit,
    }
    return Run(_listed(Statement(_PAGE, params, "all")))


def _listed(query: Statement) -> Steps[list[SessionInfo]]:
    (rows,) = yield [query]
    return [_info(row) for row in rows]


def _info(row: Sequence[Any]) -> SessionInfo:
    """A ``SessionInfo`` of ``id, created_at, version, cwd, parent_session, updated_at``."""
    return SessionInfo(
        id=row[0],
        created_at=row[1],
        version=row[2],
        cwd=row[3],
        parent_session=row[4],
        updated_at=row[5],
    )
