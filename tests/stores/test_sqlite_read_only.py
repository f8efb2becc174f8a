"""A read-only SQLite store creates no file: not the database, its directory, -wal or -shm."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentlog import open_store
from agentlog.stores._sqlite_read_only import read_only_query


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_reading_a_quiet_database_leaves_no_wal_or_shm(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    with open_store(url) as store, store.create("s1") as session:
        session.append("turn/start", {"turn": 1})
    before = _files(tmp_path)
    assert "a.db-wal" not in before  # the writer has closed: every commit is in the file
    with open_store(url, read_only=True) as store:
        assert store.inspect("s1").seq == 3  # stored turn/start, a closer, the end-seed marker
        assert [info.id for info in store.list()] == ["s1"]
    assert _files(tmp_path) == before


def test_a_live_writers_uncheckpointed_commits_are_read(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    with open_store(url) as writer_store:
        writer = writer_store.create("s1")
        writer.append("turn/start", {"turn": 1})
        assert (tmp_path / "a.db-wal").exists()  # the commit is in the WAL, not the file yet
        with open_store(url, read_only=True) as reader:
            assert [e.type for e in reader.read_from("s1", 0)] == ["turn/start"]
            writer.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            assert len(reader.read_from("s1", 0)) == 2
        writer.close()


def test_a_writer_arriving_during_an_immutable_read_forces_a_second_read(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE t (x)")
    db.close()
    connections: list[str] = []
    writer: list[sqlite3.Connection] = []

    def operation(connection: sqlite3.Connection) -> int:
        connections.append("read")
        if not writer:  # the first (immutable) read: a writer arrives meanwhile
            writer.append(sqlite3.connect(path, isolation_level=None))
            writer[0].execute("INSERT INTO t VALUES (1)")
        return int(connection.execute("SELECT count(*) FROM t").fetchone()[0])

    assert read_only_query(path, operation) == 1
    assert connections == ["read", "read"]
    writer[0].close()
