"""``postgresql://…`` — one session database for many agent workers on many hosts.

Implements DESIGN.md decisions 7 and 10 for PostgreSQL (spec/persistence.md §4 in agentlog's own
schema, ``_pg_schema``) as a ``SqlBackend``: the template's cuts and revisions run on a pooled
connection (``_transaction``, ``_query``), with its row codec; appends, leases, reads, lists and
deletes are the ``_pg_*`` modules' operations (``_pg_steps``), which ``agentlog.aio``'s
``AsyncPostgresBackend`` runs as they are on async connections. Needs the ``postgres`` extra
(psycopg 3 and psycopg_pool), imported only here: ``import agentlog`` never needs it.

Durability: an append is one transaction (``_pg_append``) — move the session's stored next seq
from the expected value (the optimistic fence; the ``(session_id, seq)`` primary key refuses a
duplicate seq anyway), renew the writer's lease, insert the rows, ``NOTIFY`` followers — sent as
one pipeline, then ``COMMIT``. It returns after the server has committed (``synchronous_commit``
as the server has it; ``on`` by default). When the connection is lost so that the outcome of
the ``COMMIT`` is unknown, the rows at those seqs are read back on a new connection: the same
rows mean the append landed (success, never written twice); none mean it did not (it is sent
again).

One writer per session across hosts: a lease row (``_pg_lease``) plus the seq fence.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Self, TypeVar

try:
    import psycopg
    from psycopg import sql
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - exercised by a test without the extra
    raise ImportError(
        f"PostgreSQL stores need the postgres extra: pip install 'agentlog[postgres]' ({exc})"
    ) from exc
import zstandard

from agentlog.errors import StoreError
from agentlog.stores import _pg_queries as queries
from agentlog.stores._pg_append import CHANNEL, AppendPlan, Refused, pack_data, unpack_data
from agentlog.stores._pg_errors import connection_lost, pg_errors
from agentlog.stores._pg_lease import LeaseKeeper, PostgresLease
from agentlog.stores._pg_schema import ensure_schema, migrate
from agentlog.stores._pg_steps import Run, run
from agentlog.stores._pg_url import configure_statements, parse_postgres_url
from agentlog.stores.base import Lease, SessionInfo, StoredLog
from agentlog.stores.sql import SqlBackend
from agentlog.stores.url import StoreURL
from agentlog.values import JsonValue

__all__ = ["CHANNEL", "PostgresBackend", "migrate_schema"]

ATTEMPTS: Final = 3
"""Tries of an append whose connection is lost (each after a read-back found nothing)."""
_T = TypeVar("_T")


class _Statements:
    """A connection as the template uses it: each statement on a fresh cursor.

    Results come in binary: ``bytea`` as raw bytes, not hex text to decode.
    """

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection

    def execute(self, statement: str, params: Sequence[Any]) -> psycopg.Cursor[Any]:
        return self.connection.cursor(binary=True).execute(statement, params)


class PostgresBackend(SqlBackend):
    """Sessions in one PostgreSQL schema, shared by every worker that opens its URL."""

    placeholder = "%s"
    sessions_table = "sessions"  # in the store's schema: every connection's search_path
    events_table = "events"

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        parsed = parse_postgres_url(url)
        self.url = url
        self.schema = parsed.schema
        self._where = parsed.display
        self._read_only = read_only or parsed.read_only
        self._local = threading.local()
        self._listener: psycopg.Connection[Any] | None = None
        self._listen_lock = threading.Lock()
        with pg_errors(self._where):
            # One plain connection first: a refused or unreachable server is reported with
            # its real cause at once (a pool would only time out), and the schema is checked.
            with psycopg.connect(parsed.conninfo, autocommit=True) as first:
                run(
                    first, ensure_schema(self.schema, create=not self._read_only, store=self._where)
                )
            self._lease_seconds = parsed.lease_seconds
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

    @classmethod
    def from_url(cls, url: StoreURL, *, read_only: bool = False) -> Self:
        """The store a ``postgresql://`` URL names (its schema created unless read-only)."""
        return cls(url.url, read_only=read_only or url.read_only)

    def _configure(self, connection: psycopg.Connection[Any]) -> None:
        """Set up a pooled connection: the store's schema, and the idle-transaction limit.

        A transaction left idle (a hung worker) is ended by the server after the lease time,
        so the row locks it holds go with it.
        """
        for statement in configure_statements(self.schema, self._lease_seconds):
            connection.execute(statement)

    # --- the template's hooks ---------------------------------------------------------------

    @property
    def location(self) -> str:
        """The store's URL, its password masked."""
        return self._where

    def _errors(self, session_id: str | None = None) -> contextlib.AbstractContextManager[None]:
        return pg_errors(self._where, session_id)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[_Statements]:
        """``BEGIN`` on a pooled connection; ``COMMIT`` at the end, ``ROLLBACK`` on error."""
        self._writable(None)
        with self._pool.connection() as connection, connection.transaction():
            self._local.transaction = connection
            try:
                yield _Statements(connection)
            finally:
                self._local.transaction = None

    def _query(self, operation: Callable[[Any], _T], *, snapshot: bool = False) -> _T:
        """A read on a pooled connection; a snapshot is one repeatable-read transaction."""
        with self._pool.connection() as connection:
            if not snapshot:
                return operation(_Statements(connection))
            with connection.transaction():
                connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return operation(_Statements(connection))

    def _keep_removed(
        self, session_id: str, cut_at: int, stored_next: int, rows: list[tuple[Any, ...]]
    ) -> str | None:
        """The removed rows go to ``cuts``, in the cut's own transaction."""
        connection: psycopg.Connection[Any] = self._local.transaction
        stamp = connection.execute(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint"
        ).fetchone()
        assert stamp is not None
        connection.cursor().executemany(
            "INSERT INTO cuts VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [(row[0], stamp[0], *row[1:]) for row in rows],
        )
        return f"{self._where} table {self.schema}.cuts, cut_time {stamp[0]}"

    def _pack_data(self, encoded: bytes) -> object:
        """The payload's JSON bytes for the ``bytea`` column, zstd-compressed when smaller."""
        return pack_data(encoded, self._codec())

    def _unpack_data(self, index: int, data: bytes) -> bytes:
        """The JSON bytes of a ``data`` column: a zstd frame decompressed, else as stored."""
        return unpack_data(index, data)

    def _codec(self) -> zstandard.ZstdCompressor:
        """This thread's compressor (a zstd context must not be shared between threads)."""
        compressor: zstandard.ZstdCompressor | None = getattr(self._local, "compressor", None)
        if compressor is None:
            compressor = self._local.compressor = zstandard.ZstdCompressor(level=3)
        return compressor

    def _run(self, operation: Run[_T], session_id: str | None = None) -> _T:
        """Run a shared operation on a pooled connection, its errors translated."""
        with pg_errors(self._where, session_id), self._pool.connection() as connection:
            return run(connection, operation)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        with self._pool.connection() as connection:
            yield connection

    # --- writing ----------------------------------------------------------------------------

    def lease(self, session_id: str) -> Lease:
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
    ) -> None:
        """One transaction: fence on the stored next seq, renew the lease, insert, notify.

        The template's append reads the tail and then writes; this one sends the fenced write
        as one pipeline (``_pg_append``) and recognises an append whose COMMIT outcome was lost.
        """
        session_id = str(header["id"])
        self._writable(session_id)
        plan = AppendPlan.of(
            schema=self.schema,
            header=header,
            events=events,
            next_seq=next_seq,
            lease=lease if isinstance(lease, PostgresLease) else None,
            lease_seconds=self._leases.seconds,
            pack=self._pack_data,
        )
        with pg_errors(self._where, session_id):
            for tries in range(1, ATTEMPTS + 1):
                connection = None
                try:
                    with self._connection() as connection:
                        run(connection, plan.attempt())
                    return
                except (Refused, psycopg.IntegrityError):
                    with self._connection() as connection:
                        raise run(connection, plan.refusal()) from None
                except psycopg.Error as exc:
                    if tries == ATTEMPTS or not connection_lost(exc, connection):
                        raise
                    # The outcome of this attempt is unknown (the connection went, perhaps at
                    # COMMIT): what is stored at those seqs says whether it landed.
                    with self._connection() as connection:
                        if run(connection, plan.landed()):
                            return

    def exists(self, session_id: str) -> bool:
        """Whether the session has a row."""
        return self._run(queries.exists(session_id), session_id)

    def read(self, session_id: str, from_seq: int = 0) -> StoredLog:
        """The header and the event rows from ``from_seq`` on, from one snapshot."""
        return self._run(
            queries.read_log(session_id, from_seq, location=self._where, unpack=self._unpack_data),
            session_id,
        )

    def delete(self, lease: Lease, session_id: str) -> None:
        """One transaction removes the session's events and its row; then the lease goes."""
        self._writable(session_id)
        self._run(queries.delete_session(session_id), session_id)
        lease.release()

    def list(self) -> list[SessionInfo]:
        """Every session row."""
        return self._run(queries.list_sessions())

    def list_page(
        self,
        *,
        cwd: str | None,
        updated_since: int | None,
        after: tuple[int, str] | None,
        limit: int,
    ) -> Sequence[SessionInfo]:
        """One page by keyset on ``(created_at, id)``, served by the sessions' indexes."""
        return self._run(
            queries.list_page(cwd=cwd, updated_since=updated_since, after=after, limit=limit)
        )

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

    def _writable(self, session_id: str | None) -> None:
        if self._read_only:
            subject = "" if session_id is None else f": session {session_id!r} cannot be written"
            raise StoreError(f"store {self._where!r} is open read-only{subject}")

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
        return run(connection, migrate(parsed.schema, store=parsed.display))
