"""``sqlite:///file.db`` — the default embedded store: one SQLite file, no server.

Implements spec/persistence.md §4 in agentlog's own schema: ``STRICT`` tables, an
``application_id`` and a ``user_version`` that are checked on every open and never migrated
(bump-and-reject), WAL journaling with ``synchronous=FULL``, one row per event with the nullable
``surface_op`` and ``source_event_seqs`` columns of the surface RFC, and payloads of 4 KiB or more
stored zstd-compressed (level 1) when that is smaller.

Durability: an append is one ``BEGIN IMMEDIATE`` transaction that moves the stored tail (the
session's next seq) from the writer's expected seq, or raises without writing, and inserts; it
returns after ``COMMIT``, which with ``synchronous=FULL`` has synced the WAL. A failed
transaction is rolled back and leaves the log as it was.

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self, TypeVar

from agentlog.errors import StoreError
from agentlog.stores._causes import os_cause, sqlite_cause
from agentlog.stores._durable_files import make_dirs
from agentlog.stores._file_lock import lock_name, lock_session, unlock_session
from agentlog.stores._sqlite_read_only import read_only_query
from agentlog.stores.base import Lease
from agentlog.stores.sql import COMPRESS_FROM, SqlBackend
from agentlog.stores.sql.cut import save_removed_rows

if TYPE_CHECKING:
    from agentlog.stores.url import StoreURL

__all__ = ["COMPRESS_FROM", "SCHEMA_VERSION", "SqliteBackend"]

APPLICATION_ID: Final = 0x41474C47
"""``PRAGMA application_id`` of an agentlog database ("AGLG")."""
SCHEMA_VERSION: Final = 1
"""``PRAGMA user_version``: the table layout; any other value is refused, never migrated."""

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


class SqliteBackend(SqlBackend):
    """Sessions in one SQLite database file (or ``:memory:``): the ``SqlBackend`` hooks."""

    compress_from = COMPRESS_FROM

    def __init__(self, path: Path, *, url: str, read_only: bool = False) -> None:
        self.url = url
        self.path = path
        self._lock = threading.RLock()
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

    @classmethod
    def from_url(cls, url: StoreURL, *, read_only: bool = False) -> Self:
        """The database file of ``sqlite:///file.db`` (created unless ``read_only``)."""
        assert url.path is not None
        return cls(url.path, url=url.url, read_only=read_only)

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

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` on the store's connection (one transaction at a time)."""
        with self._lock:
            db = self._writable()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                _roll_back(db)
                raise

    def _query(
        self, operation: Callable[[sqlite3.Connection], _T], *, snapshot: bool = False
    ) -> _T:
        """Run a read on the store's connection, or on a file-less read-only one."""
        with self._lock:
            if self._read_only:
                return read_only_query(
                    self.path, _in_snapshot(operation) if snapshot else operation
                )
            return (_in_snapshot(operation) if snapshot else operation)(self._db)

    def _writable(self) -> sqlite3.Connection:
        if self._read_only:
            raise StoreError(
                f"store {self.url!r} is open read-only: nothing can be written to it",
                path=str(self.path),
            )
        return self._db

    @property
    def location(self) -> str:
        """The database file."""
        return str(self.path)

    # --- the writer lease -----------------------------------------------------------------

    def lease(self, session_id: str) -> Lease:
        """Lock the session's file in ``<database>.locks/`` (``:memory:``: nothing to lock)."""
        if self._locks is None:
            return _NoLease()
        with self._errors(session_id):
            make_dirs(self._locks)
            path = self._locks / lock_name(session_id)
            return _LockLease(lock_session(path, session_id), path)

    def _keep_removed(
        self, session_id: str, cut_at: int, stored_next: int, rows: list[tuple[Any, ...]]
    ) -> str | None:
        """A synced JSON-lines copy beside the database (none for ``:memory:``)."""
        if self._locks is None:
            return None
        saved = save_removed_rows(
            self.path, session_id, cut_at=cut_at, stored_next_seq=stored_next, rows=rows
        )
        return str(saved)

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


def _in_snapshot(
    operation: Callable[[sqlite3.Connection], _T],
) -> Callable[[sqlite3.Connection], _T]:
    """``operation`` inside one read transaction (a snapshot of the WAL)."""

    def snapshot(db: sqlite3.Connection) -> _T:
        db.execute("BEGIN")
        try:
            return operation(db)
        finally:
            _roll_back(db)  # a read transaction: nothing to keep

    return snapshot


def _schema_sql(db: sqlite3.Connection) -> list[tuple[str, str]]:
    return [
        (name, " ".join((sql or "").split()))
        for name, sql in db.execute(
            "SELECT name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
