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

Each of ``append_once``, ``refusal`` and ``landed`` is a ``_pg_steps.Run``: the same statements
and decisions for the sync store and for ``agentlog.aio``'s, which only execute them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import zstandard

from agentlog.errors import (
    ConcurrentWriteError,
    SessionAlreadyExists,
    SessionLocked,
    StoreError,
)
from agentlog.stores._pg_lease import RENEW, LeaseRow
from agentlog.stores._pg_steps import Run, Statement, Steps
from agentlog.stores.base import session_not_found
from agentlog.stores.sql.backend import COMPRESS_FROM
from agentlog.stores.sql.rows import decompress_frame, event_rows
from agentlog.values import JsonValue, dumps

__all__ = [
    "CHANNEL",
    "AppendPlan",
    "ONE_STATEMENT",
    "Refused",
    "append_once",
    "landed",
    "pack_data",
    "refusal",
    "session_row",
    "unpack_data",
]

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
_ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
"""The first bytes of a zstd frame (JSON text never starts with 0x28)."""


class Refused(Exception):
    """The fence or the lease matched no row; the transaction is rolled back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AppendPlan:
    """One append as both PostgreSQL stores send it: its rows and the operations around them.

    A store runs ``attempt()``; on ``Refused`` (or a duplicate key) ``refusal()`` says why; on a
    lost connection ``landed()`` says whether the attempt is stored (else it is sent again).
    """

    schema: str
    session_id: str
    created: tuple[Any, ...] | None
    """The session row a first batch creates (``next_seq`` 0), else ``None``."""
    rows: list[tuple[Any, ...]]
    next_seq: int
    lease: LeaseRow | None
    lease_seconds: float

    @classmethod
    def of(
        cls,
        *,
        schema: str,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        next_seq: int,
        lease: LeaseRow | None,
        lease_seconds: float,
        pack: Callable[[bytes], object],
    ) -> AppendPlan:
        """The plan of appending ``events`` at ``next_seq`` (``pack``: the data column codec)."""
        session_id = str(header["id"])
        return cls(
            schema=schema,
            session_id=session_id,
            created=session_row(header, events) if next_seq == 0 else None,
            rows=event_rows(session_id, events, pack),
            next_seq=next_seq,
            lease=lease,
            lease_seconds=lease_seconds,
        )

    def attempt(self) -> Run[None]:
        """The append's transaction, once (``append_once``)."""
        return append_once(
            schema=self.schema,
            session_id=self.session_id,
            created=self.created,
            rows=self.rows,
            next_seq=self.next_seq,
            lease=self.lease,
            lease_seconds=self.lease_seconds,
        )

    def refusal(self) -> Run[StoreError]:
        """Why an attempt was refused (``refusal``)."""
        return refusal(self.session_id, self.lease, self.next_seq)

    def landed(self) -> Run[bool]:
        """Whether an attempt of unknown outcome is stored (``landed``)."""
        return landed(self.session_id, self.created, self.rows, self.next_seq)


def pack_data(encoded: bytes, compressor: zstandard.ZstdCompressor) -> bytes:
    """The payload's JSON bytes for the ``bytea`` column, zstd-compressed when smaller.

    ``compressor`` is the caller's own: a zstd context must not be shared between threads.
    """
    if len(encoded) >= COMPRESS_FROM:
        packed: bytes = compressor.compress(encoded)
        if len(packed) < len(encoded):
            return packed
    return encoded


def unpack_data(index: int, data: bytes) -> bytes:
    """The JSON bytes of a ``data`` column: a zstd frame decompressed, else as stored.

    Raises:
        BadRow: when the frame is damaged or incomplete.
    """
    if not data.startswith(_ZSTD_MAGIC):
        return data
    # A fresh decompressor: a zstd context must not be shared by threads.
    return decompress_frame(index, data, zstandard.ZstdDecompressor())


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
    *,
    schema: str,
    session_id: str,
    created: tuple[Any, ...] | None,
    rows: Sequence[tuple[Any, ...]],
    next_seq: int,
    lease: LeaseRow | None,
    lease_seconds: float,
) -> Run[None]:
    """The append's transaction, once (``created``: the session row of a first batch).

    ``lease``: the writer's lease row, renewed by the append (``None``: a store without leases).

    Raises (when run):
        Refused: when the fence or the lease matched no row (nothing was written).
        psycopg.Error: when a statement or the connection failed.
    """
    chunks = _chunks(rows)
    notify = (CHANNEL, f"{schema} {session_id}")
    if created is None and len(chunks) == 1:
        columns = [list(column) for column in zip(*rows, strict=True)]
        tail = (next_seq + len(rows), rows[-1][3], session_id, next_seq)
        if lease is not None:
            held = (lease_seconds, lease.session_id, lease.token)
            fenced = Statement(_FENCED_LEASED, (*held, *tail, *columns, *notify))
        else:
            fenced = Statement(_FENCED_UNLEASED, (*tail, *columns, *notify))
        return Run(_one_statement(fenced))
    if created is not None:
        fence = Statement(_CREATE, created)
    else:
        updated = rows[-1][3] if rows else None
        fence = Statement(_ADVANCE, (next_seq + len(rows), updated, session_id, next_seq))
    checked = [fence]
    if lease is not None:
        checked.append(Statement(RENEW, (lease_seconds, lease.session_id, lease.token)))
    written = [
        Statement(_INSERT_EVENTS, [list(column) for column in zip(*chunk, strict=True)])
        for chunk in chunks
    ]
    written.append(Statement("SELECT pg_notify(%s, %s)", notify))
    pipelined = len(chunks) <= 1
    return Run(_fenced(checked, written, pipelined), transaction=True, pipeline=pipelined)


def _one_statement(fenced: Statement) -> Steps[None]:
    """The common append: one statement in autocommit; no row back means refused."""
    (moved,) = yield [fenced]
    if moved != 1:
        raise Refused


def _fenced(checked: list[Statement], written: list[Statement], pipelined: bool) -> Steps[None]:
    """Fence (and renew), insert, notify; refuse unless the fence and the renewal matched.

    Pipelined, everything goes in one round trip and the results decide before ``COMMIT``;
    otherwise the fence is checked before the rows are sent.
    """
    if pipelined:
        results = yield [*checked, *written]
        _check(results[: len(checked)])
        return
    _check((yield checked))
    yield written


def _check(rowcounts: Sequence[int]) -> None:
    """Refuse unless the fence and the lease renewal each matched their row."""
    if any(count != 1 for count in rowcounts):
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


def refusal(session_id: str, lease: LeaseRow | None, next_seq: int) -> Run[StoreError]:
    """Why the fence refused an append: the id is taken, the lease is lost, the tail moved."""
    return Run(_refusal(session_id, lease, next_seq))


def _refusal(session_id: str, lease: LeaseRow | None, next_seq: int) -> Steps[StoreError]:
    flight = [Statement("SELECT next_seq FROM sessions WHERE id = %s", (session_id,), "one")]
    if lease is not None:
        flight.append(
            Statement(
                "SELECT 1 FROM leases WHERE session_id = %s AND token = %s",
                (lease.session_id, lease.token),
                "one",
            )
        )
    results = yield flight
    stored = results[0]
    held = lease is None or results[1] is not None
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
    session_id: str,
    created: tuple[Any, ...] | None,
    rows: Sequence[tuple[Any, ...]],
    next_seq: int,
) -> Run[bool]:
    """Whether an append of unknown outcome is stored (``False``: nothing of it is).

    Raises (when run):
        SessionAlreadyExists: when another writer created the session meanwhile.
        ConcurrentWriteError: when other rows took those seqs.
    """
    return Run(_landed(session_id, created, rows, next_seq))


def _landed(
    session_id: str,
    created: tuple[Any, ...] | None,
    rows: Sequence[tuple[Any, ...]],
    next_seq: int,
) -> Steps[bool]:
    found, stored = yield [
        Statement("SELECT header FROM sessions WHERE id = %s", (session_id,), "one"),
        Statement(
            f"SELECT session_id, {EVENT_COLUMNS} FROM events WHERE session_id = %s "
            "AND seq >= %s AND seq < %s ORDER BY seq",
            (session_id, next_seq, next_seq + len(rows)),
            "all",
        ),
    ]
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
