"""``SqlBackend``: the template alone, filled with its hooks, passes the whole store contract.

``PlainSql`` is the smallest SQL backend: a plain (not ``STRICT``) schema under other table
names, ``BEGIN`` rather than ``BEGIN IMMEDIATE``, an in-process lease, no copy of cut rows.
Everything else — the tail check, the row codec, reads, lists, cuts — is the template's, so
the contract suite passing here proves a new SQL engine needs only the hooks.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pytest

from agentlog.errors import ConcurrentWriteError, SessionLocked, StoreError
from agentlog.stores import Backend, Lease, Store
from agentlog.stores.sql import SqlBackend
from tests.stores.contract import StoreContract

_T = TypeVar("_T")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS plain_sessions (id TEXT PRIMARY KEY, header TEXT, version INTEGER,
    created_at INTEGER, cwd TEXT, parent_session TEXT, next_seq INTEGER);
CREATE TABLE IF NOT EXISTS plain_events (session_id TEXT, seq INTEGER, type TEXT, time INTEGER,
    data, source_event_seqs TEXT, surface_op TEXT, ignorable INTEGER,
    PRIMARY KEY (session_id, seq));
"""


class _Lease(Lease):
    def __init__(self, held: set[tuple[str, str]], key: tuple[str, str]) -> None:
        self._held, self._key = held, key

    def release(self) -> None:
        PlainSql.held.discard(self._key)


class PlainSql(SqlBackend):
    """The hooks, and nothing else."""

    sessions_table = "plain_sessions"
    events_table = "plain_events"
    held: ClassVar[set[tuple[str, str]]] = set()

    def __init__(self, path: Path) -> None:
        self.url = f"plain:///{path}"
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode = WAL")  # readers never block the writer
        self._db.executescript(_SCHEMA)

    @property
    def location(self) -> str:
        return str(self.path)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _query(self, operation: Callable[[Any], _T], *, snapshot: bool = False) -> _T:
        with self._lock:
            if not snapshot:
                return operation(self._db)
            self._db.execute("BEGIN")
            try:
                return operation(self._db)
            finally:
                self._db.execute("ROLLBACK")  # ends the read and every cursor still open

    @contextlib.contextmanager
    def _errors(self, session_id: str | None = None) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"plain store: {exc}", session_id=session_id) from exc

    def _keep_removed(
        self, session_id: str, cut_at: int, stored_next: int, rows: list[tuple[Any, ...]]
    ) -> str | None:
        return None  # the contract asks a copy of stores another process can open (SQLite's)

    def lease(self, session_id: str) -> Lease:
        key = (str(self.path), session_id)
        if key in self.held:
            raise SessionLocked(
                f'session "{session_id}" is open for writing elsewhere', session_id=session_id
            )
        self.held.add(key)
        return _Lease(self.held, key)

    def close(self) -> None:
        self._db.close()


class TestPlainSql(StoreContract):
    def make_store(self, tmp_path: Path, **options: Any) -> Store:
        return Store(self.make_backend(tmp_path), **options)

    def make_backend(self, tmp_path: Path) -> Backend:
        return PlainSql(tmp_path / "plain.db")

    def raw_location(self, tmp_path: Path, session_id: str) -> str | None:
        return str(tmp_path / "plain.db")

    def stored_state(self, tmp_path: Path) -> object:
        path = tmp_path / "plain.db"
        if not path.exists():
            return {}
        db = sqlite3.connect(path)
        try:
            return {
                table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
                for table in ("plain_sessions", "plain_events")
            }
        finally:
            db.close()


def test_an_append_at_a_stale_seq_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    backend = PlainSql(tmp_path / "plain.db")
    header = {"version": 4, "id": "s", "createdAt": 1, "isSeeded": False}
    event = {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}
    lease = backend.lease("s")
    backend.append(lease, header, [event], next_seq=0)
    with pytest.raises(ConcurrentWriteError, match="starts at seq 2, stored next seq is 1"):
        backend.append(lease, header, [event], next_seq=2)
    assert len(backend.read("s").events) == 1
    assert backend.read("s", 1).events == []
    lease.release()
    backend.close()


def test_the_placeholder_and_table_names_are_rewritten_for_the_engine(tmp_path: Path) -> None:
    backend = PlainSql(tmp_path / "plain.db")
    assert backend._sql("SELECT 1 FROM {sessions} WHERE id = ?") == (
        "SELECT 1 FROM plain_sessions WHERE id = ?"
    )

    class Dollar(PlainSql):
        placeholder = "%s"

    dollar = Dollar(tmp_path / "other.db")
    assert dollar._sql("UPDATE {events} SET x = ? WHERE y = ?") == (
        "UPDATE plain_events SET x = %s WHERE y = %s"
    )
    for opened in (backend, dollar):
        opened.close()
