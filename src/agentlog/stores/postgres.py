"""``postgresql://…`` — one session database for many agent workers on many hosts.

Implements DESIGN.md decisions 7 and 10 for PostgreSQL (spec/persistence.md §4 in agentlog's own
schema, ``_pg_schema``). Needs the ``postgres`` extra (psycopg 3 and psycopg_pool), imported
only here: ``import agentlog`` never needs it.

Durability: an append is one transaction — move the session's stored next seq from the
expected value (the optimistic fence: a concurrent writer makes it match no row, and the
``(session_id, seq)`` primary key refuses a duplicate seq anyway), renew the writer's lease,
insert the rows, ``NOTIFY`` followers — sent as one pipeline, then ``COMMIT``. It returns after
the server has committed (``synchronous_commit`` as the server has it; ``on`` by default).
When the connection is lost so that the outcome of the ``COMMIT`` is unknown, the rows at
those seqs are read back on a new connection: the same rows mean the append landed (success,
never written twice); none mean it did not (it is sent again).

One writer per session across hosts: a lease row (``_pg_lease``) plus the seq fence.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from sys import intern
from typing import Any, Final

try:
    import psycopg
    from psycopg import sql
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - exercised by a test without the extra
    raise ImportError(
        f"PostgreSQL stores need the postgres extra: pip install 'agentlog[postgres]' ({exc})"
    ) from exc
import zstandard

from agentlog.errors import (
    CorruptLog,
    SessionNotFound,
    StoreError,
)
from agentlog.events import event_or_record
from agentlog.formats import FORMAT_VERSION
from agentlog.stores._pg_append import (
    CHANNEL,
    Refused,
    append_once,
    landed,
    refusal,
    session_row,
)
from agentlog.stores._pg_errors import connection_lost, pg_errors
from agentlog.stores._pg_lease import LeaseKeeper
from agentlog.stores._pg_schema import ensure_schema, migrate
from agentlog.stores._pg_url import parse_postgres_url
from agentlog.stores.base import Backend, Lease, RepairResult, SessionInfo, StoredLog, TornTail
from agentlog.values import JsonValue, dumps, loads, share_strings

__all__ = ["CHANNEL", "COMPRESS_FROM", "PostgresBackend", "migrate_schema"]

COMPRESS_FROM: Final = 4096
"""Payloads of at least this many bytes are stored zstd-compressed when that is smaller."""
_ATTEMPTS: Final = 3
"""Tries of an append whose connection is lost (each after a read-back found nothing)."""
_EVENT_COLUMNS: Final = "seq, type, time, data, source_event_seqs, surface_op, ignorable"


class _BadRow(Exception):
    """A stored row that cannot be an event (or a header): where, and why."""

    def __init__(self, seq: int, what: str) -> None:
        super().__init__(what)
        self.seq = seq
        self.what = what


class PostgresBackend(Backend):
    """Sessions in one PostgreSQL schema, shared by every worker that opens its URL."""

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        parsed = parse_postgres_url(url)
        self.url = url
        self.schema = parsed.schema
        self._where = parsed.display
        self._read_only = read_only or parsed.read_only
        self._local = threading.local()
        self._decompressor = zstandard.ZstdDecompressor()
        self._listener: psycopg.Connection[Any] | None = None
        self._listen_lock = threading.Lock()
        with pg_errors(self._where):
            # One plain connection first: a refused or unreachable server is reported with
            # its real cause at once (a pool would only time out), and the schema is checked.
            with psycopg.connect(parsed.conninfo, autocommit=True) as first:
                ensure_schema(first, self.schema, create=not self._read_only, store=self._where)
            self._lease_ms = int(parsed.lease_seconds * 1000)
            self._pool = ConnectionPool(
                parsed.conninfo,
                min_size=1,
                max_size=8,
                kwargs={"autocommit": True},
                configure=self._configure,
                name=f"agentlog:{self.schema}",
                open=True,
            )
        self._conninfo = parsed.conninfo
        self._leases = LeaseKeeper(
            self._pool.connection, seconds=parsed.lease_seconds, store=self._where
        )

    def _configure(self, connection: psycopg.Connection[Any]) -> None:
        """Set up a pooled connection: the store's schema, and the idle-transaction limit.

        A transaction left idle (a hung worker) is ended by the server after the lease time,
        so the row locks it holds go with it.
        """
        connection.execute(sql.SQL("SET search_path = {}").format(sql.Identifier(self.schema)))
        connection.execute(f"SET idle_in_transaction_session_timeout = {self._lease_ms}")

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        with self._pool.connection() as connection:
            yield connection

    # --- sessions -------------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        """Whether the session has a row."""
        with pg_errors(self._where, session_id), self._connection() as connection:
            row = connection.execute(
                "SELECT 1 FROM sessions WHERE id = %s", (session_id,)
            ).fetchone()
        return row is not None

    def lease(self, session_id: str, *, cwd: str | None = None) -> Lease:
        """Take the session's lease row (``SessionLocked`` while a live writer holds it)."""
        self._writable(session_id)
        with pg_errors(self._where, session_id):
            return self._leases.take(session_id)

    def append(
        self,
        lease: Lease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
        truncate: TornTail | None = None,
    ) -> None:
        """One transaction: fence on the stored next seq, renew the lease, insert, notify.

        ``truncate`` is never needed: a transaction leaves no torn rows.
        """
        session_id = str(header["id"])
        self._writable(session_id)
        rows = [self._row(session_id, event) for event in events]
        created = session_row(header, events) if next_seq == 0 else None
        with pg_errors(self._where, session_id):
            for attempt in range(1, _ATTEMPTS + 1):
                connection = None
                try:
                    with self._connection() as connection:
                        append_once(
                            connection,
                            schema=self.schema,
                            session_id=session_id,
                            created=created,
                            rows=rows,
                            next_seq=next_seq,
                            lease=lease,
                            lease_seconds=self._leases.seconds,
                        )
                    return
                except (Refused, psycopg.IntegrityError):
                    with self._connection() as connection:
                        raise refusal(connection, session_id, lease, next_seq) from None
                except psycopg.Error as exc:
                    if attempt == _ATTEMPTS or not connection_lost(exc, connection):
                        raise
                    # The outcome of this attempt is unknown (the connection went, perhaps at
                    # COMMIT): what is stored at those seqs says whether it landed.
                    with self._connection() as connection:
                        if landed(connection, session_id, created, rows, next_seq):
                            return

    def _row(self, session_id: str, event: Mapping[str, Any]) -> tuple[Any, ...]:
        encoded = dumps(event["data"])
        data = encoded
        if len(encoded) >= COMPRESS_FROM:
            packed = self._compressor().compress(encoded)
            if len(packed) < len(encoded):
                data = packed
        sources = event.get("sourceEventSeqs")
        surface_op = event.get("surfaceOp")
        return (
            session_id,
            event["seq"],
            event["type"],
            event["time"],
            data,
            None if sources is None else dumps(sources).decode(),
            None if surface_op is None else dumps(surface_op).decode(),
            1 if event.get("ignorable") is True else None,
        )

    def _compressor(self) -> zstandard.ZstdCompressor:
        """This thread's compressor (a zstd context must not be shared between threads)."""
        compressor: zstandard.ZstdCompressor | None = getattr(self._local, "compressor", None)
        if compressor is None:
            compressor = self._local.compressor = zstandard.ZstdCompressor(level=3)
        return compressor

    # --- reading --------------------------------------------------------------------------

    def read(self, session_id: str) -> StoredLog:
        """The header and every event row, from one snapshot."""
        return self.read_from(session_id, 0)

    def read_from(self, session_id: str, from_seq: int) -> StoredLog:
        """The header and the event rows from ``from_seq`` on, from one snapshot."""
        with (
            pg_errors(self._where, session_id),
            self._connection() as connection,
            connection.transaction(),
        ):
            connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            row = connection.execute(
                "SELECT header, next_seq FROM sessions WHERE id = %s", (session_id,)
            ).fetchone()
            if row is None:
                raise SessionNotFound(f'session "{session_id}" not found', session_id=session_id)
            cursor = connection.cursor(binary=True)
            # A whole read sees every row, so that one no log can hold (a negative seq) is
            # reported; a suffix starts at its seq.
            cursor.execute(
                f"SELECT {_EVENT_COLUMNS} FROM events WHERE session_id = %s "
                "AND (%s = 0 OR seq >= %s) ORDER BY seq",
                (session_id, from_seq, from_seq),
            )
            try:
                header = self._decode(-1, "header", row[0])
                current = isinstance(header, dict) and header.get("version") == FORMAT_VERSION
                settle = event_or_record if current else _as_is
                events = [
                    settle(self._event(index, columns))
                    for index, columns in enumerate(cursor, from_seq)
                ]
            except _BadRow as bad:
                later = connection.execute(
                    "SELECT count(*) FROM events WHERE session_id = %s AND seq > %s",
                    (session_id, bad.seq),
                ).fetchone()
                raise self._corrupt(session_id, bad, later[0] if later else 0) from bad.__cause__
        count = from_seq + len(events)
        if count != max(row[1], from_seq):
            what = f"{count} event rows but a stored tail of {row[1]}"
            raise self._corrupt(session_id, _BadRow(count, what), 0)
        return StoredLog(header=header, events=events, location=None)

    def _event(self, index: int, columns: Sequence[Any]) -> dict[str, Any]:
        seq, event_type, time, data, sources, surface_op, ignorable = columns
        if seq != index:
            raise _BadRow(index, f"seq gap (expected {index}, got {seq})")
        data = bytes(data)
        if data[:4] == b"\x28\xb5\x2f\xfd":  # a zstd frame (JSON text never starts so)
            stream = self._decompressor.decompressobj()
            try:
                data = stream.decompress(data)
            except zstandard.ZstdError as exc:
                raise _BadRow(index, f"compressed data: {exc}") from exc
            if not stream.eof:
                raise _BadRow(index, "compressed data: the frame is incomplete")
        event: dict[str, Any] = {
            "type": intern(event_type),
            "seq": seq,
            "time": time,
            "data": self._decode(index, "data", data),
        }
        if sources is not None:
            event["sourceEventSeqs"] = self._decode(index, "source_event_seqs", sources)
        if surface_op is not None:
            event["surfaceOp"] = self._decode(index, "surface_op", surface_op)
        if ignorable:
            event["ignorable"] = True
        share_strings(event)
        return event

    @staticmethod
    def _decode(seq: int, column: str, text: object) -> Any:
        if isinstance(text, memoryview):
            text = bytes(text)
        if not isinstance(text, str | bytes):
            raise _BadRow(seq, f"{column} is not JSON text")
        try:
            return loads(text)
        except ValueError as exc:
            raise _BadRow(seq, f"{column} is not JSON ({exc})") from exc

    def _corrupt(self, session_id: str, bad: _BadRow, following: int) -> CorruptLog:
        if bad.seq < 0:
            where, more = "its session row", ""
        else:
            where, more = f"event row seq {bad.seq}", f" ({following} later row(s) follow)"
        return CorruptLog(
            f'corrupt session "{session_id}" in {self._where!r} at {where}: {bad.what}{more}',
            session_id=session_id,
            line=None if bad.seq < 0 else bad.seq,
            seq=None if bad.seq < 0 else bad.seq,
            following=None if bad.seq < 0 else following,
        )

    def list(self) -> list[SessionInfo]:
        """Every session row."""
        with pg_errors(self._where), self._connection() as connection:
            rows = connection.execute(
                "SELECT id, created_at, version, cwd, parent_session, updated_at FROM sessions"
            ).fetchall()
        return [_info(row) for row in rows]

    def list_page(
        self,
        *,
        cwd: str | None,
        updated_since: int | None,
        after: tuple[int, str] | None,
        limit: int,
    ) -> Sequence[SessionInfo]:
        """One page by keyset on ``(created_at, id)``, served by the sessions' indexes."""
        with pg_errors(self._where), self._connection() as connection:
            rows = connection.execute(
                "SELECT id, created_at, version, cwd, parent_session, updated_at FROM sessions "
                "WHERE (%(cwd)s::text IS NULL OR cwd = %(cwd)s) "
                "AND (%(since)s::bigint IS NULL OR coalesce(updated_at, created_at) >= %(since)s) "
                "AND (%(created)s::bigint IS NULL OR (created_at, id) > (%(created)s, %(id)s)) "
                "ORDER BY created_at, id LIMIT %(limit)s",
                {
                    "cwd": cwd,
                    "since": updated_since,
                    "created": None if after is None else after[0],
                    "id": None if after is None else after[1],
                    "limit": limit,
                },
            ).fetchall()
        return [_info(row) for row in rows]

    def revision(self, session_id: str) -> str | None:
        """The session's stored next seq: it moves with every append (``None``: no session)."""
        with pg_errors(self._where, session_id), self._connection() as connection:
            row = connection.execute(
                "SELECT next_seq FROM sessions WHERE id = %s", (session_id,)
            ).fetchone()
        return None if row is None else str(row[0])

    def wait_for_append(self, session_id: str, revision: str | None, timeout: float) -> None:
        """Block until a ``NOTIFY`` says the session was appended to, or ``timeout`` seconds."""
        wanted = f"{self.schema} {session_id}"
        with pg_errors(self._where, session_id), self._listen_lock:
            try:
                if self._listener is None:
                    self._listener = psycopg.connect(self._conninfo, autocommit=True)
                    self._listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
                    # Notifications sent before LISTEN are not delivered: look once after it.
                    if self.revision(session_id) != revision:
                        return
                for notify in self._listener.notifies(timeout=timeout):
                    if notify.payload == wanted:
                        return
            except psycopg.Error:
                # A lost listening connection is opened again (and LISTENs) on the next wait.
                if self._listener is not None:
                    self._listener.close()
                    self._listener = None
                raise

    # --- removal --------------------------------------------------------------------------

    def delete(self, lease: Lease, session_id: str) -> None:
        """One transaction removes the session's events and its row; then the lease goes."""
        self._writable(session_id)
        with (
            pg_errors(self._where, session_id),
            self._connection() as connection,
            connection.transaction(),
        ):
            connection.execute("DELETE FROM events WHERE session_id = %s", (session_id,))
            removed = connection.execute(
                "DELETE FROM sessions WHERE id = %s", (session_id,)
            ).rowcount
            if removed != 1:
                raise SessionNotFound(f'session "{session_id}" not found', session_id=session_id)
        lease.release()

    def cut(self, lease: Lease, session_id: str, *, cut_at: int) -> RepairResult:
        """Move the event rows from seq ``cut_at`` on into ``cuts``, in one transaction."""
        self._writable(session_id)
        with (
            pg_errors(self._where, session_id),
            self._connection() as connection,
            connection.transaction(),
        ):
            stored = connection.execute(
                "SELECT next_seq FROM sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            if stored is None:
                raise SessionNotFound(f'session "{session_id}" not found', session_id=session_id)
            kept = connection.execute(
                f"SELECT {_EVENT_COLUMNS} FROM events WHERE session_id = %s AND seq >= 0 "
                "AND seq < %s ORDER BY seq",
                (session_id, cut_at),
            ).fetchall()
            for index, columns in enumerate(kept):
                why = f"it has no event row for seq {index}" if columns[0] != index else None
                why = why or self._problem(columns)
                if why is not None:
                    raise CorruptLog(
                        f'cannot cut session "{session_id}" at seq {cut_at}: event row seq '
                        f"{index} is damaged ({why}); cut at seq {index} or before",
                        session_id=session_id,
                        line=index,
                        seq=index,
                    )
            if len(kept) < cut_at:
                raise StoreError(
                    f'cannot cut session "{session_id}" at seq {cut_at}: {self._where!r} holds '
                    f"{len(kept)} complete event(s)",
                    session_id=session_id,
                )
            removed = connection.execute(
                f"DELETE FROM events WHERE session_id = %s AND (seq >= %s OR seq < 0) "
                f"RETURNING {_EVENT_COLUMNS}",
                (session_id, cut_at),
            ).fetchall()
            saved = None
            if removed or stored[0] != cut_at:
                stamp = connection.execute(
                    "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint"
                ).fetchone()
                assert stamp is not None
                connection.cursor().executemany(
                    "INSERT INTO cuts VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [(session_id, stamp[0], *columns) for columns in removed],
                )
                connection.execute(
                    "UPDATE sessions SET next_seq = %s WHERE id = %s", (cut_at, session_id)
                )
                saved = f"{self._where} table {self.schema}.cuts, cut_time {stamp[0]}"
        damaged = sum(self._problem(columns) is not None for columns in removed)
        return RepairResult(
            session_id=session_id,
            cut_at=cut_at,
            removed=len(removed) - damaged,
            damaged=damaged,
            saved_to=saved,
        )

    def _problem(self, columns: Sequence[Any]) -> str | None:
        try:
            self._event(columns[0], columns)
        except _BadRow as bad:
            return bad.what
        return None

    def _writable(self, session_id: str) -> None:
        if self._read_only:
            raise StoreError(
                f"store {self._where!r} is open read-only: session {session_id!r} cannot be "
                "written",
                session_id=session_id,
            )

    def close(self) -> None:
        """Release every lease, stop the renewal thread and close the connections."""
        self._leases.close()
        with self._listen_lock:
            if self._listener is not None:
                self._listener.close()
        self._pool.close()


def migrate_schema(url: str) -> tuple[int, int]:
    """Bring the store's schema to this build's version: ``(from, to)`` (``from`` 0: created).

    The explicit upgrade behind ``agentlog migrate-store``; opening a store never migrates.

    Raises:
        StoreError: for a newer schema than this build's, foreign tables, or a driver error.
    """
    parsed = parse_postgres_url(url)
    with pg_errors(parsed.display), psycopg.connect(parsed.conninfo, autocommit=True) as connection:
        return migrate(connection, parsed.schema, store=parsed.display)


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


def _as_is(record: dict[str, Any]) -> Mapping[str, Any]:
    return record
