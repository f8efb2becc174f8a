"""The ``sqlite:///`` store: the contract, then what is SQLite's own.

SQLite-specific scenarios are spec/persistence.md §4.11 and §8 rows 33, 52-54, in agentlog's own
schema: the database belongs to agentlog (application id, schema version, exact tables) or is
refused untouched; pragmas are verified; large payloads are stored compressed; a stale writer is
fenced by the stored-tail check; and no ``sqlite3`` exception ever leaks (STYLE.md §16).
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
import zstandard

from agentlog import messages as m
from agentlog.errors import (
    ConcurrentWriteError,
    CorruptLog,
    SessionAlreadyExists,
    SessionLocked,
    StoreError,
)
from agentlog.stores import Backend, Store, open_backend, open_store
from agentlog.stores.sqlite import _SCHEMA, APPLICATION_ID, SCHEMA_VERSION, SqliteBackend, _NoLease
from agentlog.values import dumps
from tests.stores.contract import (
    StoreContract,
    ask_tools,
    clock,
    one_turn,
    run_tool,
    start_turn,
    wire,
)


def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "sessions.db"


def dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, read through a separate connection."""
    if not path.exists():
        return {}
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_schema WHERE type='table'")]
        return {
            table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() for table in tables
        }
    finally:
        db.close()


class TestSqlite(StoreContract):
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{db_path(tmp_path)}"

    def make_store(self, tmp_path: Path, **options: Any) -> Store:
        return open_store(self.store_url(tmp_path), **options)

    def make_backend(self, tmp_path: Path) -> Backend:
        return open_backend(self.store_url(tmp_path))

    def stored_state(self, tmp_path: Path) -> object:
        return dump(db_path(tmp_path))

    def raw_location(self, tmp_path: Path, session_id: str) -> str | None:
        return str(db_path(tmp_path))

    def damage(self, tmp_path: Path, session_id: str, seq: int) -> bool:
        db = raw(db_path(tmp_path))
        try:
            db.execute(
                "UPDATE agentlog_events SET data = '{not json' WHERE session_id = ? AND seq = ?",
                (session_id, seq),
            )
        finally:
            db.close()
        return True


def open_db(tmp_path: Path, **options: Any) -> Store:
    return open_store(f"sqlite:///{db_path(tmp_path)}", **{"clock": clock, **options})


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


# --- schema ownership (spec/persistence.md §8 rows 52-53) -----------------------------------


def test_a_new_database_is_set_up_and_verified(tmp_path: Path) -> None:
    with open_db(tmp_path) as store, store.create("s1") as session:
        one_turn(session)
        db = raw(db_path(tmp_path))
        try:
            assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            assert db.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
            assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
            tables = db.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"
            ).fetchall()
            assert tables == [("agentlog_events",), ("agentlog_sessions",)]
            strict = db.execute("PRAGMA table_list").fetchall()
            assert all(row[5] == 1 for row in strict if row[1].startswith("agentlog_"))
        finally:
            db.close()
        backend = store._backend  # the connection the store writes with
        assert isinstance(backend, SqliteBackend)
        assert backend._db.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
        assert backend._db.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert stat.S_IMODE(db_path(tmp_path).stat().st_mode) == 0o600


def foreign_database(path: Path, *statements: str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = raw(path)
    try:
        for statement in statements:
            db.execute(statement)
    finally:
        db.close()
    return path.read_bytes()


def agentlog_schema(*changes: str) -> tuple[str, ...]:
    """The statements of a current agentlog database, with ``changes`` applied after."""
    return (
        *(statement for statement in _SCHEMA.split(";") if statement.strip()),
        f"PRAGMA application_id = {APPLICATION_ID}",
        f"PRAGMA user_version = {SCHEMA_VERSION}",
        *changes,
    )


@pytest.mark.parametrize(
    ("statements", "text"),
    [
        (
            ("CREATE TABLE notes (x TEXT)",),
            "is not an agentlog store (application id 0, expected 1095191623)",
        ),
        (("PRAGMA application_id = 12345",), "is not an agentlog store (application id 12345"),
        (
            agentlog_schema("PRAGMA user_version = 2"),
            "has agentlog schema version 2, incompatible with this build (1); it is never migrated",
        ),
        (
            agentlog_schema("ALTER TABLE agentlog_events ADD COLUMN extra TEXT"),
            "does not contain the agentlog schema objects it should",
        ),
        (
            agentlog_schema("CREATE TABLE notes (x TEXT)"),
            "does not contain the agentlog schema objects it should",
        ),
        (
            agentlog_schema("CREATE INDEX by_type ON agentlog_events (type)"),
            "does not contain the agentlog schema objects it should",
        ),
        (
            tuple(statement.replace(") STRICT", ")") for statement in agentlog_schema()),
            "does not contain the agentlog schema objects it should",
        ),
    ],
    ids=[
        "foreign-table",
        "foreign-app-id",
        "schema-version",
        "extra-column",
        "extra-table",
        "index",
        "not-strict",
    ],
)
def test_a_database_that_is_not_ours_is_refused_untouched(
    tmp_path: Path, statements: tuple[str, ...], text: str
) -> None:
    path = db_path(tmp_path)
    before = foreign_database(path, *statements)
    with pytest.raises(StoreError) as refused:
        open_db(tmp_path)
    assert str(refused.value).startswith(f'database "{path}" ')
    assert text in str(refused.value)
    assert refused.value.path == str(path)
    assert path.read_bytes() == before
    db = raw(path)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)  # never changed
    finally:
        db.close()


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    path.parent.mkdir()
    path.write_bytes(b"not a database, just text " * 200)
    with pytest.raises(StoreError) as refused:
        open_db(tmp_path)
    assert str(refused.value) == (
        f'SQLite store "{path}": not a database file (file is not a database)'
    )
    assert isinstance(refused.value.__cause__, sqlite3.DatabaseError)
    assert path.read_bytes() == b"not a database, just text " * 200


# --- rows -----------------------------------------------------------------------------------


def test_large_payloads_are_stored_compressed(tmp_path: Path) -> None:
    large = "all work and no play " * 1000  # compressible, well over 4 KiB
    with open_db(tmp_path) as store, store.create("s1") as session:
        start_turn(session, 1)
        ask_tools(session, 1, 1, "c")
        call_seq = run_tool(session, 1, 1, "c", answer=False)
        session.append(
            "tool/result",
            m.tool_result("c", large, turn=1, step=1, id="big"),
            surface_op="append",
            source_event_seqs=[call_seq],
        )
        session.append("step/end", {"turn": 1, "step": 1})
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    db = raw(db_path(tmp_path))
    try:
        rows = dict(db.execute("SELECT seq, typeof(data) FROM agentlog_events").fetchall())
        blob = db.execute("SELECT data FROM agentlog_events WHERE seq = ?", (call_seq + 1,))
        compressed = blob.fetchone()[0]
    finally:
        db.close()
    assert rows[call_seq + 1] == "blob"
    assert {kind for seq, kind in rows.items() if seq != call_seq + 1} == {"text"}  # < 4 KiB
    assert len(compressed) < len(large) // 10
    assert zstandard.ZstdDecompressor().decompressobj().decompress(compressed) == dumps(
        session.event_at(call_seq + 1).data
    )
    with open_db(tmp_path) as store:
        reopened = store.inspect("s1")
    assert wire(reopened.events)[: session.seq] == wire(session.events)
    assert reopened.event_at(call_seq + 1)["data"]["message"]["content"][0]["text"] == large


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        (
            "UPDATE agentlog_events SET data = '{not json' WHERE seq = 3",
            "event row seq 3: data is not JSON",
        ),
        (
            "UPDATE agentlog_events SET data = x'28b52ffd00' WHERE seq = 3",
            "event row seq 3: compressed data",
        ),
        (
            "UPDATE agentlog_events SET seq = 20 WHERE seq = 3",
            "event row seq 3: seq gap (expected 3, got 4)",
        ),
        (
            "DELETE FROM agentlog_events WHERE seq = 10",
            "event row seq 10: 10 event rows but a stored tail of 11",
        ),
        ("UPDATE agentlog_sessions SET header = 'oops'", "its session row: header is not JSON"),
        (
            "UPDATE agentlog_events SET surface_op = '{' WHERE seq = 2",
            "event row seq 2: surface_op is not JSON",
        ),
    ],
    ids=["data", "compressed", "gap", "tail", "header", "surface-op"],
)
def test_damaged_rows_are_reported_and_left_alone(tmp_path: Path, sql: str, what: str) -> None:
    with open_db(tmp_path) as store, store.create("s1") as session:
        one_turn(session)
    db = raw(db_path(tmp_path))
    try:
        db.execute("PRAGMA foreign_keys = OFF")
        db.execute(sql)
    finally:
        db.close()
    before = dump(db_path(tmp_path))
    with open_db(tmp_path) as store:
        for operation in (store.open, store.inspect):
            with pytest.raises(CorruptLog) as refused:
                operation("s1")
            assert str(refused.value).startswith(
                f'corrupt session "s1" in "{db_path(tmp_path)}" at '
            )
            assert what in str(refused.value)
    assert dump(db_path(tmp_path)) == before


# --- two writers (spec/persistence.md §8 row 33) --------------------------------------------


def test_a_second_writer_is_locked_out_and_a_stale_append_is_fenced_off(tmp_path: Path) -> None:
    """The lock keeps a second writer out; should one get past it anyway (a store that lost
    its lock file), the stored-tail check still refuses its stale append."""
    with open_db(tmp_path) as first_store, open_db(tmp_path) as second_store:
        with first_store.create("s1") as session:
            one_turn(session)
        first = first_store.open("s1")
        with pytest.raises(SessionLocked) as refused:
            second_store.open("s1")
        lock = db_path(tmp_path).with_name("sessions.db.locks")
        assert str(refused.value).startswith(
            f'session "s1" is open for writing by another writer (lock "{lock}/'
        )
        seq = first.seq
        first.append("turn/start", {"turn": 2})
        backend = open_backend(f"sqlite:///{db_path(tmp_path)}")
        try:
            assert isinstance(backend, SqliteBackend)
            event = {"type": "turn/start", "seq": seq, "time": 0, "data": {"turn": 2}}
            with pytest.raises(ConcurrentWriteError) as fenced:
                backend.append(_NoLease(), dict(first.header), [event], next_seq=seq)
        finally:
            backend.close()
        assert str(fenced.value) == (
            f'session "s1" append starts at seq {seq}, stored next seq is {seq + 1}'
        )
        assert (fenced.value.expected_seq, fenced.value.stored_seq) == (seq, seq + 1)
        first.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
        first.close()
        rows = dump(db_path(tmp_path))["agentlog_events"]
        assert [row[1] for row in rows] == list(range(first.seq))


def test_materializing_the_same_id_twice_is_refused(tmp_path: Path) -> None:
    with open_db(tmp_path) as first_store, open_db(tmp_path) as second_store:
        first = first_store.create("s1")
        second = second_store.create("s1")  # neither is stored yet
        first.append("turn/start", {"turn": 1})
        with pytest.raises(SessionLocked):
            second.append("turn/start", {"turn": 1})
        first.close()
        with pytest.raises(SessionAlreadyExists, match='session "s1" already exists'):
            second.append("turn/start", {"turn": 1})
        second.close()
        assert len(dump(db_path(tmp_path))["agentlog_events"]) == 1


# --- driver errors (STYLE.md §16) -----------------------------------------------------------


def test_driver_errors_surface_as_store_errors(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match=r"already exists|not a directory") as refused:
        open_store(f"sqlite:///{blocker / 'sessions.db'}")
    assert isinstance(refused.value.__cause__, OSError)
    directory = tmp_path / "directory.db"
    directory.mkdir()
    with pytest.raises(StoreError, match="unable to open database file") as refused:
        open_store(f"sqlite:///{directory}")
    assert isinstance(refused.value.__cause__, sqlite3.OperationalError)
    with open_db(tmp_path) as store:
        session = store.create("s1", cwd="/tmp/\udc80")
        with pytest.raises(StoreError, match="surrogates not allowed"):
            session.append("turn/start", {"turn": 1})
        assert session.seq == 0
        session.close()
        assert store.list() == []


def test_a_locked_database_surfaces_as_a_store_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_db(tmp_path) as store:
        session = store.create("s1")
        session.append("turn/start", {"turn": 1})
        holder = raw(db_path(tmp_path))
        holder.execute("BEGIN EXCLUSIVE")
        try:
            backend = store._backend
            assert isinstance(backend, SqliteBackend)
            backend._db.execute("PRAGMA busy_timeout = 50")  # instead of waiting 5 s
            with pytest.raises(StoreError, match="database is locked") as refused:
                session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            assert isinstance(refused.value.__cause__, sqlite3.OperationalError)
            assert session.seq == 1
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        session.close()


def test_an_in_memory_database_is_a_private_store() -> None:
    with open_store("sqlite:///:memory:", clock=clock) as store, store.create("s1") as session:
        one_turn(session)
        assert [info.id for info in store.list()] == ["s1"]
    with open_store("sqlite:///:memory:") as other:
        assert other.list() == []


def test_a_full_database_reports_the_cause_not_a_failed_rollback(tmp_path: Path) -> None:
    """Issue 10, repro 5: SQLITE_FULL (here from ``max_page_count``, SQLite's own limit) used to
    surface as "cannot rollback - no transaction is active", the real error only in
    ``__context__``. The append fails with the cause, and the session goes on once it is fixed."""
    with open_db(tmp_path) as store:
        session = store.create("s1")
        session.append("turn/start", {"turn": 1})
        backend = store._backend  # the connection the store writes with
        assert isinstance(backend, SqliteBackend)
        pages = backend._db.execute("PRAGMA page_count").fetchone()[0]
        backend._db.execute(f"PRAGMA max_page_count = {pages}")
        before = dump(db_path(tmp_path))
        big = m.user(os.urandom(100_000).hex())  # incompressible
        with pytest.raises(StoreError) as failed:
            session.append("user/message", big, surface_op="append")
        assert str(failed.value) == (
            f'SQLite store "{db_path(tmp_path)}" (session "s1"): disk full (database or disk is '
            "full)"
        )
        assert isinstance(failed.value.__cause__, sqlite3.OperationalError)
        assert (failed.value.session_id, failed.value.path) == ("s1", str(db_path(tmp_path)))
        assert session.seq == 1
        assert dump(db_path(tmp_path)) == before
        backend._db.execute("PRAGMA max_page_count = 1073741823")  # the cause is fixed
        session.append("user/message", big, surface_op="append")
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        session.close()
        assert [event.seq for event in store.inspect("s1").events] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "driver_error",
    [
        sqlite3.Error,
        sqlite3.DatabaseError,
        sqlite3.OperationalError,
        sqlite3.IntegrityError,
        sqlite3.DataError,
        sqlite3.InternalError,
        sqlite3.NotSupportedError,
        sqlite3.ProgrammingError,
        sqlite3.InterfaceError,
    ],
)
def test_every_driver_error_class_is_mapped_once_at_the_boundary(
    tmp_path: Path, driver_error: type[Exception]
) -> None:
    """STYLE.md §16: no ``sqlite3`` exception leaves the backend."""
    with open_db(tmp_path) as store:
        backend = store._backend
        assert isinstance(backend, SqliteBackend)
        with pytest.raises(StoreError) as mapped, backend._errors("s1"):
            raise driver_error("boom")
        assert str(mapped.value).startswith(f'SQLite store "{db_path(tmp_path)}" (session "s1"): ')
        assert "boom" in str(mapped.value)
        assert mapped.value.__cause__ is not None
