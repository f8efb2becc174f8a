"""``SqlBackend``: the SQL half of every SQL store, written once; a subclass fills the hooks.

Implements spec/persistence.md §4 for any SQL engine: two tables, one session row (header,
version, created_at, cwd, parent_session, and ``next_seq``, the stored tail) and one row per
event keyed by ``(session_id, seq)`` (``agentlog.stores.sql.rows``). An append is one
transaction that moves the stored tail from the writer's expected next seq in one conditional
``UPDATE`` (``check_tail`` explains a miss) and inserts the batch; ``read`` decodes the rows of
one snapshot; ``list``, ``delete``, ``cut`` (``agentlog.stores.sql.cut``) and ``revision`` are
template methods too. Statements are written with ``?`` placeholders and ``{sessions}`` /
``{events}`` for the table names; ``_sql`` rewrites them for the engine.

The hooks a subclass provides (``SqliteBackend`` is the reference; a PostgreSQL subclass sets
``placeholder = "%s"``, opens ``BEGIN`` on a pooled connection and maps psycopg's errors):

``placeholder``
    The driver's parameter marker: ``"?"`` (sqlite3) or ``"%s"`` (psycopg).
``sessions_table`` / ``events_table``
    The table names (schema-qualified if need be).
``_transaction()``
    A context manager yielding a connection inside a write transaction (SQLite:
    ``BEGIN IMMEDIATE``; PostgreSQL: ``BEGIN``); commits when the block ends, rolls back when
    it raises. Serializes writers on a shared connection if the engine needs it.
``_query(operation, snapshot=False)``
    Runs ``operation(connection)`` for a read; with ``snapshot`` inside one read transaction.
``_errors(session_id)``
    A context manager translating driver errors into ``StoreError`` once, naming the real
    cause first (disk full, read-only, permission ...).
``lease(session_id)``, ``close()``, ``from_url(url, read_only=...)``
    The writer lease (a file lock, a lease row), releasing connections, opening from a URL.
``location``
    The database, for messages and ``SessionInfo.location``.
``_keep_removed(session_id, cut_at, stored_next, rows)``
    Keeps a durable copy of the rows a cut removes; returns where (``None``: no copy).

Optional: ``_execute_many(connection, statement, rows)`` (default: the driver's
``executemany``; COPY or a multi-row insert are faster elsewhere), ``compress_from`` (default
``None``: payloads stored as JSON text; a size makes ``_pack_data`` store payloads of that many
bytes or more zstd-compressed at level 1, when smaller), ``_pack_data`` / ``_unpack_data``,
``_stored_next`` and ``_insert_session`` (for a schema with more session columns).
"""

from __future__ import annotations

import contextlib
import functools
from abc import abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar, Final, TypeVar

import zstandard

from agentlog.stores.base import (
    Backend,
    Lease,
    RawLog,
    RepairResult,
    SessionInfo,
    StoredLog,
    check_tail,
    session_not_found,
)
from agentlog.stores.sql.cut import Execute, cut_rows
from agentlog.stores.sql.rows import (
    EVENT_COLUMNS,
    BadRow,
    check_type_stats,
    corrupt,
    decode,
    decompress_frame,
    event_from_row,
    event_rows,
    header_text,
    stored_log,
)
from agentlog.values import JsonValue

__all__ = ["COMPRESS_FROM", "SqlBackend"]

COMPRESS_FROM: Final = 4096
"""With compression on, payloads this large or larger are stored zstd-compressed (if smaller)."""
_T = TypeVar("_T")
_INSERT_EVENT: Final = (
    "INSERT INTO {events} VALUES (?, ?, ?, ?, ?, nullif(?, ''), nullif(?, ''), nullif(?, ''))"
)
"""An event row; absent optional columns bind ``''``, which ``nullif`` makes ``NULL`` (``sqlite3``
adapts a ``None`` through a failed attribute lookup, paid for most columns of most rows)."""


class SqlBackend(Backend):
    """Sessions in two SQL tables; see the module docstring for the hooks to fill."""

    placeholder: ClassVar[str] = "?"
    """The driver's parameter marker."""
    sessions_table: str = "agentlog_sessions"
    """The table of session rows."""
    events_table: str = "agentlog_events"
    """The table of event rows."""

    compress_from: int | None = None
    """Store payloads of this many bytes or more zstd-compressed (when smaller); ``None``: never.

    Reads decode both forms whatever the setting. Level 1: level 3 costs a quarter more CPU per
    payload for about 5% fewer bytes."""

    _compressor: zstandard.ZstdCompressor | None = None
    _decompressor: zstandard.ZstdDecompressor | None = None

    # --- hooks ----------------------------------------------------------------------------

    @property
    @abstractmethod
    def location(self) -> str:
        """The database, for messages."""

    @abstractmethod
    def _transaction(self) -> contextlib.AbstractContextManager[Any]:
        """A connection inside a write transaction: committed at the end, rolled back on error."""

    @abstractmethod
    def _query(self, operation: Callable[[Any], _T], *, snapshot: bool = False) -> _T:
        """Run a read; with ``snapshot``, inside one read transaction."""

    @abstractmethod
    def _errors(self, session_id: str | None = None) -> contextlib.AbstractContextManager[None]:
        """Translate driver errors into ``StoreError`` (STYLE.md §16)."""

    @abstractmethod
    def _keep_removed(
        self, session_id: str, cut_at: int, stored_next: int, rows: list[tuple[Any, ...]]
    ) -> str | None:
        """Durably keep the rows a cut removes; where (``None``: the store keeps no copy)."""

    def _execute_many(self, db: Any, statement: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Run ``statement`` once per row (the driver's ``executemany``)."""
        db.executemany(self._sql(statement), rows)

    def _pack_data(self, encoded: bytes) -> object:
        """The ``data`` column of a payload's JSON bytes: text, or zstd bytes when smaller."""
        compress_from = self.compress_from
        if compress_from is not None and len(encoded) >= compress_from:
            if self._compressor is None:
                self._compressor = zstandard.ZstdCompressor(level=1)
            packed = self._compressor.compress(encoded)
            if len(packed) < len(encoded):  # (then no text is made: decoding costs too)
                return packed
        return encoded.decode("utf-8", "surrogatepass")

    def _unpack_data(self, index: int, data: bytes) -> bytes:
        """The JSON bytes of a bytes ``data`` column (a zstd frame).

        Raises:
            BadRow: when the frame is damaged or incomplete.
        """
        if self._decompressor is None:
            self._decompressor = zstandard.ZstdDecompressor()
        return decompress_frame(index, data, self._decompressor)

    def _stored_next(self, execute: Execute, session_id: str) -> int | None:
        """The stored tail of a session inside the append's transaction (``None``: no row)."""
        row = execute("SELECT next_seq FROM {sessions} WHERE id = ?", (session_id,)).fetchone()
        return None if row is None else int(row[0])

    def _insert_session(self, execute: Execute, header: Mapping[str, JsonValue]) -> None:
        """Insert the session row of a materialized session (its tail at 0)."""
        execute(
            "INSERT INTO {sessions} VALUES (?, ?, ?, ?, ?, ?, 0)",
            (
                header["id"],
                header_text(header),
                header["version"],
                header["createdAt"],
                header.get("cwd"),
                header.get("parentSession"),
            ),
        )

    # --- statements -----------------------------------------------------------------------

    def _sql(self, statement: str) -> str:
        """A statement for this engine: its table names and parameter marker."""
        return _rewrite(statement, self.sessions_table, self.events_table, self.placeholder)

    def _executor(self, db: Any) -> Execute:
        return lambda statement, params: db.execute(self._sql(statement), params)

    # --- the template ---------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        """Whether the session has a row."""
        with self._errors(session_id):
            row = self._query(
                lambda db: self._executor(db)(
                    "SELECT 1 FROM {sessions} WHERE id = ?", (session_id,)
                ).fetchone()
            )
        return row is not None

    def append(
        self,
        lease: Lease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        """One transaction: move the stored tail past the batch, insert the batch.

        The tail moves only from ``next_seq`` (one conditional ``UPDATE`` checks and moves it);
        when it does not, the stored tail is read to say why.
        """
        session_id = str(header["id"])
        rows = event_rows(session_id, events, self._pack_data, "")
        with self._errors(session_id), self._transaction() as db:
            execute = self._executor(db)
            if next_seq == 0:
                check_tail(session_id, self._stored_next(execute, session_id), next_seq)
                self._insert_session(execute, header)
            moved = execute(
                "UPDATE {sessions} SET next_seq = ? WHERE id = ? AND next_seq = ?",
                (next_seq + len(rows), session_id, next_seq),
            ).rowcount
            if moved != 1:
                # No row matched: no session, or a tail other than next_seq; either raises.
                check_tail(session_id, self._stored_next(execute, session_id), next_seq)
            if rows:
                self._execute_many(db, _INSERT_EVENT, rows)

    def read(self, session_id: str, from_seq: int = 0) -> StoredLog:
        """The header and the event rows from ``from_seq`` on, from one snapshot."""
        with self._errors(session_id):
            return self._query(
                lambda db: self._read_rows(self._executor(db), session_id, from_seq),
                snapshot=True,
            )

    def _read_rows(self, execute: Execute, session_id: str, from_seq: int) -> StoredLog:
        row = execute(
            "SELECT header, next_seq FROM {sessions} WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise session_not_found(session_id)
        # A whole read sees every row, so that one no log can hold (a negative seq) is
        # reported; a suffix starts at its seq.
        rows = execute(
            f"SELECT {EVENT_COLUMNS} FROM {{events}} WHERE session_id = ? "
            "AND (? = 0 OR seq >= ?) ORDER BY seq",
            (session_id, from_seq, from_seq),
        )
        try:
            return stored_log(session_id, self.location, row, rows, from_seq, self._unpack_data)
        except BadRow as bad:
            later = execute(
                "SELECT count(*) FROM {events} WHERE session_id = ? AND seq > ?",
                (session_id, bad.seq),
            ).fetchone()[0]
            raise corrupt(session_id, self.location, bad, later) from bad.__cause__

    def read_raw(self, session_id: str, types: Collection[str]) -> RawLog:
        """The event rows of ``types`` from one snapshot, and what the others are.

        Only rows of ``types`` are fetched and decoded (each checked as ``read`` checks it:
        column types, JSON); one aggregate over the session's rows gives ``last_seqs`` and
        ``count`` and checks that the seqs are ``0 .. count - 1`` against the stored tail.
        Nothing is settled or frozen.
        """
        wanted = sorted(frozenset(types))
        with self._errors(session_id):
            header, events, last_seqs, count = self._query(
                lambda db: self._read_raw_rows(self._executor(db), session_id, wanted),
                snapshot=True,
            )
        return RawLog(
            header=header,
            events=events,
            last_seqs=last_seqs,
            count=count,
            location=self.location,
        )

    def _read_raw_rows(
        self, execute: Execute, session_id: str, wanted: list[str]
    ) -> tuple[Any, list[dict[str, Any]], dict[str, int], int]:
        row = execute(
            "SELECT header, next_seq FROM {sessions} WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise session_not_found(session_id)
        stats = execute(
            "SELECT type, count(*), min(seq), max(seq) FROM {events} WHERE session_id = ? "
            "GROUP BY type",
            (session_id,),
        ).fetchall()
        count = sum(int(stat[1]) for stat in stats)
        try:
            header = decode(-1, "header", row[0])
            check_type_stats(stats, row[1])
            marks = ", ".join("?" * len(wanted))
            rows = (
                execute(
                    f"SELECT {EVENT_COLUMNS} FROM {{events}} WHERE session_id = ? "
                    f"AND type IN ({marks}) ORDER BY seq",
                    (session_id, *wanted),
                )
                if wanted
                else ()
            )
            unpack = self._unpack_data
            events = [
                event_from_row(columns[0], tuple(columns), unpack, shared=False) for columns in rows
            ]
        except BadRow as bad:
            raise corrupt(session_id, self.location, bad, max(count - bad.seq - 1, 0)) from (
                bad.__cause__
            )
        return header, events, {stat[0]: stat[3] for stat in stats}, count

    def delete(self, lease: Lease, session_id: str) -> None:
        """One transaction removes the session's events and its row; then the lease goes."""
        with self._errors(session_id), self._transaction() as db:
            execute = self._executor(db)
            execute("DELETE FROM {events} WHERE session_id = ?", (session_id,))
            if execute("DELETE FROM {sessions} WHERE id = ?", (session_id,)).rowcount != 1:
                raise session_not_found(session_id)
        lease.release()

    def cut(self, lease: Lease, session_id: str, *, cut_at: int) -> RepairResult:
        """Delete the event rows from seq ``cut_at`` on, in one transaction, keeping a copy.

        The copy (``_keep_removed``) is durable before the rows are deleted; rows with a
        negative seq, which no log can hold, are removed with them.
        """
        with self._errors(session_id), self._transaction() as db:
            rows, saved = cut_rows(
                self._executor(db),
                session_id,
                cut_at=cut_at,
                location=self.location,
                problem=self._problem,
                keep=lambda stored, removed: self._keep_removed(
                    session_id, cut_at, stored, removed
                ),
            )
        damaged = sum(self._problem(row[1:]) is not None for row in rows)
        return RepairResult(
            session_id=session_id,
            cut_at=cut_at,
            removed=len(rows) - damaged,
            damaged=damaged,
            saved_to=saved,
        )

    def _problem(self, columns: tuple[Any, ...]) -> str | None:
        """Why a row (``seq, type, time, data, ...``) cannot be read as an event, or ``None``."""
        try:
            event_from_row(columns[0], columns, self._unpack_data)
        except BadRow as bad:
            return bad.what
        return None

    def list(self) -> list[SessionInfo]:
        """Every session row, with the time of its last event."""
        with self._errors():
            rows = self._query(
                lambda db: self._executor(db)(
                    "SELECT s.id, s.created_at, s.version, s.cwd, s.parent_session, "
                    "(SELECT e.time FROM {events} e WHERE e.session_id = s.id "
                    "AND e.seq = s.next_seq - 1) FROM {sessions} s",
                    (),
                ).fetchall()
            )
        return [
            SessionInfo(
                id=row[0],
                created_at=row[1],
                version=row[2],
                cwd=row[3],
                parent_session=row[4],
                location=self.location,
                updated_at=row[5],
            )
            for row in rows
        ]

    def revision(self, session_id: str) -> str | None:
        """The session's stored next seq: it moves with every append (``None``: no session)."""
        with self._errors(session_id):
            row = self._query(
                lambda db: self._executor(db)(
                    "SELECT next_seq FROM {sessions} WHERE id = ?", (session_id,)
                ).fetchone()
            )
        return None if row is None else f"{self.location}:{row[0]}"


@functools.lru_cache(maxsize=256)
def _rewrite(statement: str, sessions: str, events: str, placeholder: str) -> str:
    """``SqlBackend._sql``, remembered: an append's statements are rewritten once, not per call."""
    text = statement.replace("{sessions}", sessions).replace("{events}", events)
    return text if placeholder == "?" else text.replace("?", placeholder)
