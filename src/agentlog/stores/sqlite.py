"""``sqlite:///file.db`` — the default embedded store: one SQLite file, no server.

Implements spec/persistence.md §4 in agentlog's own schema: ``STRICT`` tables, an
``application_id`` and a ``user_version`` that are checked on every open and never migrated
(bump-and-reject), WAL journaling with ``synchronous=FULL``, one row per event with the nullable
``surface_op`` and ``source_event_seqs`` columns of the surface RFC, and payloads of 4 KiB or more
stored zstd-compressed when that is smaller.

Durability: an append is one ``BEGIN IMMEDIATE`` transaction that checks the stored tail (the
session's next seq) before inserting; it returns after ``COMMIT``, which with ``synchronous=FULL``
has synced the WAL. A failed transaction is rolled back and leaves the log as it was.

One writer per session: the writer holds a non-blocking ``flock`` on a per-session lock file in
``<database>.locks/`` (``_file_lock``; the kernel drops it when the process dies), so a second
process — or a second store object of this one — gets ``SessionLocked`` and writes nothing.
Should two writers ever race anyway, they cannot both win a seq: the loser's transaction sees the
moved tail and raises ``ConcurrentWriteError`` without writing. Readers take no lock.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from sys import intern
from typing import Any, Final, TypeVar

import zstandard

from agentlog.errors import (
    ConcurrentWriteError,
    CorruptLog,
    SessionAlreadyExists,
    SessionNotFound,
    StoreError,
)
from agentlog.events import event_or_record
from agentlog.formats import FORMAT_VERSION
from agentlog.stores._causes import os_cause, sqlite_cause
from agentlog.stores._durable_files import make_dirs
from agentlog.stores._file_lock import lock_name, lock_session, unlock_session
from agentlog.stores._sqlite_cut import cut_rows
from agentlog.stores._sqlite_read_only import read_only_query
from agentlog.stores.base import (
    Backend,
    Lease,
    RepairResult,
    SessionInfo,
    StoredLog,
    TornTail,
)
from agentlog.values import JsonValue, dumps, loads, share_strings

__all__ = ["SCHEMA_VERSION", "SqliteBackend"]

APPLICATION_ID: Final = 0x41474C47
"""``PRAGMA application_id`` of an agentlog database ("AGLG")."""
SCHEMA_VERSION: Final = 1
"""``PRAGMA user_version``: the table layout; any other value is refused, never migrated."""
COMPRESS_FROM: Final = 4096
"""Payloads of at least this many bytes are stored zstd-compressed when that is smaller."""

_SCHEMA: Final = """
CREATE TABLE agentlog_sessions (
    id TEXT PRIMARY KEY,
    header TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    cwd TEXT,
    parent_session TEXT,
    next_seq INTEGER NOT NULL
) STRICT;
CREATE TABLE agentlog_events (
    session_id TEXT NOT NULL REFERENCES agentlog_sessions(id),
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    time INTEGER NOT NULL,
    data ANY NOT NULL,
    source_event_seqs TEXT,
    surface_op TEXT,
    ignorable INTEGER CHECK (ignorable IS NULL OR ignorable = 1),
    PRIMARY KEY (session_id, seq)
) STRICT;
"""
_TABLES: Final = ("agentlog_events", "agentlog_sessions")
_T = TypeVar("_T")


class _BadRow(Exception):
    """A stored row that cannot be an event (or a header): where, and why."""

    def __init__(self, seq: int, what: str) -> None:
        super().__init__(what)
        self.seq = seq
        self.what = what


class _NoLease(Lease):
    """The lease of a private ``:memory:`` database: no other connection can see it."""

    def release(self) -> None:
        """Nothing to release."""


class _LockLease(Lease):
    """A held ``flock`` on the session's lock file; releasing removes the file, then unlocks."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self._path = path

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            unlock_session(fd, self._path)


class SqliteBackend(Backend):
    """Sessions in one SQLite database file (or ``:memory:``)."""

    def __init__(self, path: Path, *, url: str, read_only: bool = False) -> None:
        self.url = url
        self.path = path
        self._lock = threading.RLock()
        self._compressor = zstandard.ZstdCompressor(level=3)
        self._decompressor = zstandard.ZstdDecompressor()
        in_memory = str(path) == ":memory:"
        self._locks = None if in_memory else path.with_name(f"{path.name}.locks")
        self._read_only = read_only
        if read_only:
            # Read-only: nothing is created, not even the database's directory or file.
            if not path.is_file():
                raise StoreError(f'no SQLite store at "{path}" (no such file)', path=str(path))
            with self._errors():
                self._query(self._check_schema)
        else:
            with self._errors():
                self._db = self._connect()

    # --- opening --------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=5.0)
        try:
            db.execute("PRAGMA trusted_schema = OFF")
            db.execute("PRAGMA foreign_keys = ON")
            self._own_schema(db)
            mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode not in ("wal", "memory"):
                raise StoreError(f'database "{self.path}" refused WAL journaling ({mode})')
            db.execute("PRAGMA synchronous = FULL")
        except BaseException:
            db.close()
            raise
        return db

    def _own_schema(self, db: sqlite3.Connection) -> None:
        """Create the schema in a fresh database, or check an existing one is ours and current."""
        db.execute("BEGIN IMMEDIATE")
        try:
            self._check_schema(db, create=True)
            db.execute("COMMIT")
        except BaseException:
            _roll_back(db)
            raise

    def _check_schema(self, db: sqlite3.Connection, *, create: bool = False) -> None:
        """Check the database is an agentlog store of this schema (creating it when empty)."""
        version = db.execute("PRAGMA user_version").fetchone()[0]
        application = db.execute("PRAGMA application_id").fetchone()[0]
        objects = db.execute(
            "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'"
        ).fetchone()[0]
        if version == 0 and application == 0 and objects == 0:
            if not create:
                raise StoreError(
                    f'database "{self.path}" is empty: not an agentlog store (yet)',
                    path=str(self.path),
                )
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        elif application != APPLICATION_ID:
            raise StoreError(
                f'database "{self.path}" is not an agentlog store (application id '
                f"{application}, expected {APPLICATION_ID})",
                path=str(self.path),
            )
        elif version != SCHEMA_VERSION:
            raise StoreError(
                f'database "{self.path}" has agentlog schema version {version}, '
                f"incompatible with this build ({SCHEMA_VERSION}); it is never migrated",
                path=str(self.path),
            )
        else:
            self._check_tables(db)

    def _check_tables(self, db: sqlite3.Connection) -> None:
        reference = sqlite3.connect(":memory:")
        try:
            reference.executescript(_SCHEMA)
            expected = _schema_sql(reference)
        finally:
            reference.close()
        if _schema_sql(db) != expected:
            raise StoreError(
                f'database "{self.path}" does not contain the agentlog schema objects it should',
                path=str(self.path),
            )

    @contextlib.contextmanager
    def _errors(self, session_id: str | None = None) -> Iterator[None]:
        """Translate every driver error into an agentlog error, once (STYLE.md §16).

        Besides ``sqlite3.Error`` (whose ``ProgrammingError`` and ``InterfaceError`` are not
        ``DatabaseError``s), that is an ``OSError`` while creating the file, its directory or a
        lock file, and the ``UnicodeEncodeError`` the driver raises when binding a string
        holding a lone surrogate (a valid JSON string, e.g. a ``cwd``, that SQLite TEXT cannot
        hold). The message names the real cause first: disk full, read-only, permission ...
        """
        try:
            yield
        except (sqlite3.Error, OSError, UnicodeEncodeError) as exc:
            if isinstance(exc, OSError):
                cause = os_cause(exc)
            elif isinstance(exc, UnicodeEncodeError):
                cause = f"a string SQLite cannot store ({exc})"
            else:
                cause = sqlite_cause(exc, None if self._locks is None else self.path)
            subject = f' (session "{session_id}")' if session_id is not None else ""
            raise StoreError(
                f'SQLite store "{self.path}"{subject}: {cause}',
                session_id=session_id,
                path=str(self.path),
            ) from exc

    def _query(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run a read on the store's connection, or on a file-less read-only one."""
        if self._read_only:
            return read_only_query(self.path, operation)
        return operation(self._db)

    def _writable(self) -> sqlite3.Connection:
        if self._read_only:
            raise StoreError(
                f"store {self.url!r} is open read-only: nothing can be written to it",
                path=str(self.path),
            )
        return self._db

    # --- sessions -------------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        """Whether the session has a row."""
        with self._lock, self._errors(session_id):
            row = self._query(
                lambda db: db.execute(
                    "SELECT 1 FROM agentlog_sessions WHERE id = ?", (session_id,)
                ).fetchone()
            )
        return row is not None

    def lease(self, session_id: str, *, cwd: str | None = None) -> Lease:
        """Lock the session's file in ``<database>.locks/`` (``:memory:``: nothing to lock)."""
        if self._locks is None:
            return _NoLease()
        with self._errors(session_id):
            make_dirs(self._locks)
            path = self._locks / lock_name(session_id)
            return _LockLease(lock_session(path, session_id), path)

    def append(
        self,
        lease: Lease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
        truncate: TornTail | None = None,
    ) -> None:
        """One transaction: check the stored tail, insert the batch, move the tail."""
        session_id = str(header["id"])
        rows = [self._row(session_id, event) for event in events]
        with self._lock, self._errors(session_id):
            db = self._writable()
            db.execute("BEGIN IMMEDIATE")
            try:
                stored = db.execute(
                    "SELECT next_seq FROM agentlog_sessions WHERE id = ?", (session_id,)
                ).fetchone()
                if next_seq == 0:
                    if stored is not None:
                        raise SessionAlreadyExists(
                            f'session "{session_id}" already exists', session_id=session_id
                        )
                    db.execute(
                        "INSERT INTO agentlog_sessions VALUES (?, ?, ?, ?, ?, ?, 0)",
                        (
                            session_id,
                            dumps(header).decode("utf-8", "surrogatepass"),
                            header["version"],
                            header["createdAt"],
                            header.get("cwd"),
                            header.get("parentSession"),
                        ),
                    )
                elif stored is None:
                    raise SessionNotFound(
                        f'session "{session_id}" not found', session_id=session_id
                    )
                elif stored[0] != next_seq:
                    raise ConcurrentWriteError(
                        f'session "{session_id}" append starts at seq {next_seq}, stored next seq '
                        f"is {stored[0]}",
                        session_id=session_id,
                        expected_seq=next_seq,
                        stored_seq=stored[0],
                    )
                db.executemany("INSERT INTO agentlog_events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
                db.execute(
                    "UPDATE agentlog_sessions SET next_seq = ? WHERE id = ?",
                    (next_seq + len(rows), session_id),
                )
                db.execute("COMMIT")
            except BaseException:
                _roll_back(db)
                raise

    def _row(self, session_id: str, event: Mapping[str, Any]) -> tuple[Any, ...]:
        encoded = dumps(event["data"])
        data: str | bytes = encoded.decode("utf-8", "surrogatepass")
        if len(encoded) >= COMPRESS_FROM:
            packed = self._compressor.compress(encoded)
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

    def read(self, session_id: str) -> StoredLog:
        """The header and every event row, from one read transaction."""
        return self.read_from(session_id, 0)

    def read_from(self, session_id: str, from_seq: int) -> StoredLog:
        """The header and the event rows from ``from_seq`` on, from one read transaction."""
        with self._lock, self._errors(session_id):
            return self._query(lambda db: self._read_rows(db, session_id, from_seq))

    def _read_rows(self, db: sqlite3.Connection, session_id: str, from_seq: int) -> StoredLog:
        db.execute("BEGIN")
        try:
            row = db.execute(
                "SELECT header, next_seq FROM agentlog_sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                raise SessionNotFound(f'session "{session_id}" not found', session_id=session_id)
            # A whole read sees every row, so that one no log can hold (a negative seq) is
            # reported; a suffix starts at its seq.
            rows = db.execute(
                "SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable "
                "FROM agentlog_events WHERE session_id = ? AND (? = 0 OR seq >= ?) ORDER BY seq",
                (session_id, from_seq, from_seq),
            )
            try:
                header = self._decode(-1, "header", row[0])
                # Decoded row by row from the cursor, so the rows are never all held at once;
                # a current-format record becomes its checked Event while it is fresh.
                current = isinstance(header, dict) and header.get("version") == FORMAT_VERSION
                settle = event_or_record if current else _as_is
                events = [
                    settle(self._event(index, columns))
                    for index, columns in enumerate(rows, from_seq)
                ]
            except _BadRow as bad:
                later = db.execute(
                    "SELECT count(*) FROM agentlog_events WHERE session_id = ? AND seq > ?",
                    (session_id, bad.seq),
                ).fetchone()[0]
                raise self._corrupt(session_id, bad, later) from bad.__cause__
        finally:
            _roll_back(db)  # a read transaction: nothing to keep
        count = from_seq + len(events)
        if count != max(row[1], from_seq):
            what = f"{count} event rows but a stored tail of {row[1]}"
            raise self._corrupt(session_id, _BadRow(count, what), 0)
        return StoredLog(header=header, events=events, location=str(self.path))

    def _event(self, index: int, columns: tuple[Any, ...]) -> dict[str, Any]:
        seq, event_type, time, data, sources, surface_op, ignorable = columns
        if seq != index:
            raise _BadRow(index, f"seq gap (expected {index}, got {seq})")
        if type(event_type) is not str or type(time) is not int:
            raise _BadRow(index, "type or time has the wrong column type")
        if isinstance(data, bytes):
            # A decompression object: one-shot decompression would allocate whatever size a
            # damaged frame header claims.
            stream = self._decompressor.decompressobj()
            try:
                data = stream.decompress(data)
            except zstandard.ZstdError as exc:
                raise _BadRow(index, f"compressed data: {exc}") from exc
            if not stream.eof:
                raise _BadRow(index, "compressed data: the frame is incomplete")
        event: dict[str, Any] = {
            "type": intern(event_type),  # one shared string per type, as the JSONL reader
            "seq": seq,
            "time": time,
            "data": self._decode(index, "data", data),
        }
        if sources is not None:
            event["sourceEventSeqs"] = self._decode(index, "source_event_seqs", sources)
        if surface_op is not None:
            event["surfaceOp"] = self._decode(index, "surface_op", surface_op)
        if ignorable is not None:
            event["ignorable"] = True
        share_strings(event)  # before the next row is decoded, which reuses the freed memory
        return event

    @staticmethod
    def _decode(seq: int, column: str, text: object) -> Any:
        if not isinstance(text, str | bytes):
            what = {int: "an integer", float: "a real number"}.get(type(text), "NULL")
            raise _BadRow(seq, f"{column} is {what}, not JSON text")
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
            f'corrupt session "{session_id}" in "{self.path}" at {where}: {bad.what}{more}',
            session_id=session_id,
            path=str(self.path),
            line=None if bad.seq < 0 else bad.seq,
            seq=None if bad.seq < 0 else bad.seq,
            following=None if bad.seq < 0 else following,
        )

    def delete(self, lease: Lease, session_id: str) -> None:
        """One transaction removes the session's events and its row; then the lease goes."""
        with self._lock, self._errors(session_id):
            db = self._writable()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM agentlog_events WHERE session_id = ?", (session_id,))
                removed = db.execute(
                    "DELETE FROM agentlog_sessions WHERE id = ?", (session_id,)
                ).rowcount
                if removed != 1:
                    raise SessionNotFound(
                        f'session "{session_id}" not found', session_id=session_id
                    )
                db.execute("COMMIT")
            except BaseException:
                _roll_back(db)
                raise
        lease.release()

    def cut(self, lease: Lease, session_id: str, *, cut_at: int) -> RepairResult:
        """Delete the event rows from seq ``cut_at`` on, in one transaction, keeping a copy.

        The copy (``_sqlite_cut``; none for ``:memory:``) is written and synced before the rows
        are deleted; rows with a negative seq, which no log can hold, are removed with them.
        """
        with self._lock, self._errors(session_id):
            db = self._writable()
            db.execute("BEGIN IMMEDIATE")
            try:
                rows, saved = cut_rows(
                    db,
                    self.path,
                    session_id,
                    cut_at=cut_at,
                    keep_copy=self._locks is not None,
                    problem=self._problem,
                )
                db.execute("COMMIT")
            except BaseException:
                _roll_back(db)
                raise
        damaged = sum(self._problem(row[1:]) is not None for row in rows)
        return RepairResult(
            session_id=session_id,
            cut_at=cut_at,
            removed=len(rows) - damaged,
            damaged=damaged,
            saved_to=None if saved is None else str(saved),
        )

    def _problem(self, columns: tuple[Any, ...]) -> str | None:
        """Why a row (``seq, type, time, data, ...``) cannot be read as an event, or ``None``."""
        try:
            self._event(columns[0], columns)
        except _BadRow as bad:
            return bad.what
        return None

    def list(self) -> list[SessionInfo]:
        """Every session row."""
        with self._lock, self._errors():
            rows = self._query(
                lambda db: db.execute(
                    "SELECT s.id, s.created_at, s.version, s.cwd, s.parent_session, "
                    "(SELECT e.time FROM agentlog_events e WHERE e.session_id = s.id "
                    "AND e.seq = s.next_seq - 1) FROM agentlog_sessions s"
                ).fetchall()
            )
        return [
            SessionInfo(
                id=row[0],
                created_at=row[1],
                version=row[2],
                cwd=row[3],
                parent_session=row[4],
                location=str(self.path),
                updated_at=row[5],
            )
            for row in rows
        ]

    def revision(self, session_id: str) -> str | None:
        """The session's stored next seq: it moves with every append (``None``: no session)."""
        with self._lock, self._errors(session_id):
            row = self._query(
                lambda db: db.execute(
                    "SELECT next_seq FROM agentlog_sessions WHERE id = ?", (session_id,)
                ).fetchone()
            )
        return None if row is None else f"{self.path}:{row[0]}"

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            if not self._read_only:
                self._db.close()


def _roll_back(db: sqlite3.Connection) -> None:
    """End a failed transaction, if SQLite has not already.

    After a full disk or an I/O error SQLite may have rolled the transaction back itself; a
    ``ROLLBACK`` then fails with "no transaction is active" and would hide the real error.
    """
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def _as_is(record: dict[str, Any]) -> Mapping[str, Any]:
    return record


def _schema_sql(db: sqlite3.Connection) -> list[tuple[str, str]]:
    return [
        (name, " ".join((sql or "").split()))
        for name, sql in db.execute(
            "SELECT name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
