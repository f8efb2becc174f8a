"""The PostgreSQL append: one fenced transaction, and the read-back of an unknown outcome.

Implements DESIGN.md decision 7 for PostgreSQL ("expected-seq optimistic concurrency under a
unique ``(session_id, seq)`` key"). One transaction, sent as one pipeline: move the session's
stored next seq from the value the writer expects (``UPDATE … WHERE next_seq = expected``; the
first batch inserts the session row instead, ``ON CONFLICT DO NOTHING``), renew the writer's
lease (``_pg_lease.RENEW``), insert the batch as one ``unnest()`` statement of array parameters,
``NOTIFY`` followers (a batch of more than ``CHUNK_BYTES`` in chunks, statement by statement);
then, with the results in hand, ``COMMIT`` — or roll back when the fence
or the lease matched no row. A concurrent writer blocks on the session row until the first
commits and then matches nothing; the primary key refuses a duplicate seq in any case.

The common append — a session that exists, a batch of one chunk — goes as ONE statement in
autocommit (its own transaction, one round trip, ``ONE_STATEMENT``): data-modifying CTEs renew
the lease, move the fence only if the lease row matched, insert the rows only if the fence
moved, and ``NOTIFY`` from the fence's row; no row back means refused, and nothing changed
but, perhaps, the lease's expiry. The pipeline above remains for a first batch and a chunked
one.

A lost connection leaves the outcome unknown when it went at ``COMMIT``. ``landed`` reads the
rows at the batch's seqs back on a new connection: the same rows mean the append is stored
(it must not be written again), none mean it is not (it may be sent again), other rows mean
another writer took the seqs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import psycopg

from agentlog.errors import (
    ConcurrentWriteError,
    SessionAlreadyExists,
    SessionLocked,
    StoreError,
)
from agentlog.stores._pg_lease import RENEW, PostgresLease
from agentlog.stores.base import session_not_found
from agentlog.values import JsonValue, dumps

__all__ = ["CHANNEL", "ONE_STATEMENT", "Refused", "append_once", "landed", "refusal", "session_row"]

CHANNEL: Final = "agentlog"
"""The ``NOTIFY`` channel; the payload is ``"<schema> <session id>"``, one per committed append."""
EVENT_COLUMNS: Final = "seq, type, time, data, source_event_seqs, surface_op, ignorable"
_INSERT_EVENTS: Final = (
    "INSERT INTO events SELECT * FROM unnest(%b::text[], %b::int8[], %b::text[], %b::int8[], "
    "%b::bytea[], %b::text[], %b::text[], %b::int2[])"
)
"""A batch as one statement of eight binary array parameters: one round trip and a few hundred
microseconds for any batch size, where ``executemany`` sends (and psycopg adapts) row by row."""
CHUNK_BYTES: Final = 1 << 20
"""Payload bytes of one ``unnest()`` statement. A larger batch is inserted a chunk at a time
and sent statement by statement, not as one pipeline: in pipeline mode a message of several MB
(a whole batch's array parameters) can deadlock — the server waits for the rest of the message
while the client waits for results (seen from about 8 MB with psycopg 3.3 and libpq 18: the
transaction hung forever, holding the session's row). Chunks are also faster than one huge
statement (2.0 s against 3.8 s for 10^5 events), and beside such a batch the extra round trips
cost nothing."""
ONE_STATEMENT: Final = "/* agentlog: one-statement append */"
"""Opens the one-statement append: it commits as it completes, as a ``COMMIT`` would."""
_RENEWED: Final = (
    "renewed AS (UPDATE leases SET expires_at = now() + make_interval(secs => %s) "
    "WHERE session_id = %s AND token = %s RETURNING 1), "
)
_FENCED: Final = (
    ONE_STATEMENT + " WITH {renewed}fence AS (UPDATE sessions SET next_seq = %s, "
    "updated_at = coalesce(%s, updated_at) WHERE id = %s AND next_seq = %s{held} RETURNING 1), "
    "inserted AS (" + _INSERT_EVENTS + " WHERE EXISTS (SELECT FROM fence)) "
    "SELECT pg_notify(%s, %s) FROM fence"
)
_FENCED_LEASED: Final = _FENCED.format(renewed=_RENEWED, held=" AND EXISTS (SELECT FROM renewed)")
_FENCED_UNLEASED: Final = _FENCED.format(renewed="", held="")
_CREATE: Final = (
    "INSERT INTO sessions VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING"
)
_ADVANCE: Final = (
    "UPDATE sessions SET next_seq = %s, updated_at = coalesce(%s, updated_at) "
    "WHERE id = %s AND next_seq = %s"
)


class Refused(Exception):
    """The fence or the lease matched no row; the transaction is rolled back."""


def session_row(
    header: Mapping[str, JsonValue], events: Sequence[Mapping[str, Any]]
) -> tuple[Any, ...]:
    """The ``sessions`` row a first batch creates (its tail already past the batch)."""
    cwd = header.get("cwd")
    parent = header.get("parentSession")
    return (
        str(header["id"]),
        dumps(header),
        header["version"],
        parent if isinstance(parent, str) else None,
        cwd if isinstance(cwd, str) else None,
        header["createdAt"],
        events[-1]["time"] if events else None,
        len(events),
    )


def append_once(
    connection: psycopg.Connection[Any],
    *,
    schema: str,
    session_id: str,
    created: tuple[Any, ...] | None,
    rows: Sequence[tuple[Any, ...]],
    next_seq: int,
    lease: object,
    lease_seconds: float,
) -> None:
    """Run the append's transaction once (``created``: the session row of a first batch).

    Raises:
        Refused: when the fence or the lease matched no row (nothing was written).
        psycopg.Error: when the statement or the connection failed.
    """
    chunks = _chunks(rows)
    if created is None and len(chunks) == 1:
        columns = [list(column) for column in zip(*rows, strict=True)]
        tail = (next_seq + len(rows), rows[-1][3], session_id, next_seq)
        notify = (CHANNEL, f"{schema} {session_id}")
        if isinstance(lease, PostgresLease):
            held = (lease_seconds, lease.session_id, lease.token)
            moved = connection.execute(_FENCED_LEASED, (*held, *tail, *columns, *notify))
        else:
            moved = connection.execute(_FENCED_UNLEASED, (*tail, *columns, *notify))
        if moved.rowcount != 1:
            raise Refused
        return
    with (
        connection.pipeline() if len(chunks) <= 1 else contextlib.nullcontext() as pipeline,
        connection.transaction(),
    ):
        if created is not None:
            fence = connection.execute(_CREATE, created)
        else:
            updated = rows[-1][3] if rows else None
            fence = connection.execute(
                _ADVANCE, (next_seq + len(rows), updated, session_id, next_seq)
            )
        renewal = None
        if isinstance(lease, PostgresLease):
            renewal = connection.execute(RENEW, (lease_seconds, lease.session_id, lease.token))
        if pipeline is None:
            _check(fence, renewal)  # before sending the rows, when the results are at hand
        for chunk in chunks:
            columns = [list(column) for column in zip(*chunk, strict=True)]
            connection.execute(_INSERT_EVENTS, columns)
        connection.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{schema} {session_id}"))
        if pipeline is not None:
            pipeline.sync()  # one round trip so far; the results decide before COMMIT
        _check(fence, renewal)


def _check(fence: psycopg.Cursor[Any], renewal: psycopg.Cursor[Any] | None) -> None:
    """Refuse unless the fence and the lease renewal each matched their row."""
    if fence.rowcount != 1 or (renewal is not None and renewal.rowcount != 1):
        raise Refused


def _chunks(rows: Sequence[tuple[Any, ...]]) -> list[Sequence[tuple[Any, ...]]]:
    """``rows`` cut into runs of at most ``CHUNK_BYTES`` of payload (and at least one row)."""
    chunks: list[Sequence[tuple[Any, ...]]] = []
    start = size = 0
    for index, row in enumerate(rows):
        if size and size + len(row[4]) > CHUNK_BYTES:
            chunks.append(rows[start:index])
            start, size = index, 0
        size += len(row[4])
    if start < len(rows):
        chunks.append(rows[start:])
    return chunks


def refusal(
    connection: psycopg.Connection[Any], session_id: str, lease: object, next_seq: int
) -> StoreError:
    """Why the fence refused an append: the id is taken, the lease is lost, the tail moved."""
    stored = connection.execute(
        "SELECT next_seq FROM sessions WHERE id = %s", (session_id,)
    ).fetchone()
    held = True
    if isinstance(lease, PostgresLease):
        held = (
            connection.execute(
                "SELECT 1 FROM leases WHERE session_id = %s AND token = %s",
                (lease.session_id, lease.token),
            ).fetchone()
            is not None
        )
    if next_seq == 0 and stored is not None:
        return SessionAlreadyExists(f'session "{session_id}" already exists', session_id=session_id)
    if stored is not None and not held:
        return SessionLocked(
            f'session "{session_id}" is open for writing by another writer (this writer\'s '
            "lease expired and was taken over)",
            session_id=session_id,
        )
    if stored is None:
        return session_not_found(session_id)
    return ConcurrentWriteError(
        f'session "{session_id}" append starts at seq {next_seq}, stored next seq is {stored[0]}',
        session_id=session_id,
        expected_seq=next_seq,
        stored_seq=stored[0],
    )


def landed(
    connection: psycopg.Connection[Any],
    session_id: str,
    created: tuple[Any, ...] | None,
    rows: Sequence[tuple[Any, ...]],
    next_seq: int,
) -> bool:
    """Whether an append of unknown outcome is stored (``False``: nothing of it is).

    Raises:
        SessionAlreadyExists: when another writer created the session meanwhile.
        ConcurrentWriteError: when other rows took those seqs.
    """
    header = connection.execute("SELECT header FROM sessions WHERE id = %s", (session_id,))
    found = header.fetchone()
    stored = connection.execute(
        f"SELECT session_id, {EVENT_COLUMNS} FROM events WHERE session_id = %s "
        "AND seq >= %s AND seq < %s ORDER BY seq",
        (session_id, next_seq, next_seq + len(rows)),
    ).fetchall()
    if created is not None:
        if found is None:
            return False  # no session row: nothing of the append is stored
        if bytes(found[0]) != created[1]:
            raise SessionAlreadyExists(
                f'session "{session_id}" already exists', session_id=session_id
            )
    if [tuple(row) for row in stored] == list(rows):
        return True
    if not stored:
        return False
    raise ConcurrentWriteError(
        f'session "{session_id}": seqs from {next_seq} on were written by another writer',
        session_id=session_id,
        expected_seq=next_seq,
    )
