"""``Store.repair`` on a SQLite store: the rows removed, and the copy kept beside the database."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import pytest

from agentlog import messages as m
from agentlog.errors import CorruptLog
from agentlog.stores import open_store
from agentlog.stores.sql.cut import COLUMNS, save_removed_rows


def stored(tmp_path: Path, events: int = 6) -> tuple[str, Path]:
    path = tmp_path / "s.db"
    with open_store(f"sqlite:///{path}") as store, store.create("s1") as session:
        session.append("turn/start", {"turn": 1})
        for n in range(events - 1):
            session.append("user/message", m.user("x" * (5000 * n)), surface_op="append")
    return f"sqlite:///{path}", path


def rows(path: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT * FROM agentlog_events ORDER BY seq").fetchall()
    finally:
        db.close()


def test_the_copy_holds_every_removed_row_as_stored(tmp_path: Path) -> None:
    url, path = stored(tmp_path)
    before = rows(path)
    assert isinstance(before[5][4], bytes)  # a large payload is stored compressed
    with open_store(url) as store:
        result = store.repair("s1", cut_at=3)
    assert (result.removed, result.damaged) == (3, 0)
    assert rows(path) == before[:3]
    assert result.saved_to is not None
    saved = [json.loads(line) for line in Path(result.saved_to).read_text().splitlines()]
    assert saved[0] == {"session": "s1", "cutAt": 3, "storedNextSeq": 6}
    assert [record["seq"] for record in saved[1:]] == [3, 4, 5]
    assert saved[3]["data"] == {"base64": base64.b64encode(before[5][4]).decode()}
    assert [tuple(r[name] for name in COLUMNS if name != "data") for r in saved[1:]] == [
        tuple(v for i, v in enumerate(row) if i != 4) for row in before[3:]
    ]


def test_damaged_rows_and_rows_no_log_can_hold_are_removed_and_counted(tmp_path: Path) -> None:
    url, path = stored(tmp_path)
    db = sqlite3.connect(path)
    try:
        db.execute("UPDATE agentlog_events SET data = 7 WHERE seq = 4")
        db.execute("INSERT INTO agentlog_events VALUES ('s1', -3, 'x', 0, '{}', NULL, NULL, NULL)")
        db.commit()
    finally:
        db.close()
    with open_store(url) as store:
        with pytest.raises(CorruptLog, match=r"event row seq 0: seq gap \(expected 0, got -3\)"):
            store.inspect("s1")
        with pytest.raises(
            CorruptLog, match=r"row seq 4 is damaged \(data is an integer, not JSON"
        ):
            store.repair("s1", cut_at=5)
        result = store.repair("s1", cut_at=4)
        assert (result.removed, result.damaged) == (2, 1)
        assert [event.type for event in store.inspect("s1").events][:4] == [
            "turn/start", "user/message", "user/message", "user/message"
        ]  # fmt: skip


def test_two_copies_in_one_second_get_their_own_files(tmp_path: Path) -> None:
    database = tmp_path / "s.db"
    first = save_removed_rows(database, "a", cut_at=0, stored_next_seq=0, rows=[])
    second = save_removed_rows(database, "b", cut_at=0, stored_next_seq=0, rows=[])
    assert first != second
    assert json.loads(second.read_text())["session"] == "b"
    assert first.name.startswith("s.db.cut-at-seq-0.")
    assert first.stat().st_mode & 0o777 == 0o600
