"""``agentlog repair``: the explicit, printed cut of a log that is refused as corrupt."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from agentlog import messages as m
from agentlog import open_store
from tests.cli.support import run


def damaged_store(tmp_path: Path) -> tuple[str, Path]:
    """A JSONL store whose session ``s`` has garbage on line 4 (seq 2), 8 records after it."""
    url = f"jsonl:///{tmp_path}/store"
    with open_store(url) as store, store.create("s") as session:
        session.append("turn/start", {"turn": 1})
        for n in range(10):
            session.append("user/message", m.user(f"message {n}"), surface_op="append")
    (path,) = (tmp_path / "store").rglob("session.v4.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = b"garbage\n"
    path.write_bytes(b"".join(lines))
    return url, path


def test_a_corrupt_log_is_reported_and_repair_cuts_it_where_the_error_says(
    tmp_path: Path,
) -> None:
    url, path = damaged_store(tmp_path)
    damaged = path.read_bytes()
    ran = run("show", "s", "--store", url)
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 1
    assert f'corrupt session log "{path}" line 4' in output
    assert "(seq 2; 8 well-formed record(s) follow)" in output
    assert path.read_bytes() == damaged
    ran = run("repair", "s", "--cut-at", "2", "--store", url)
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 0, output
    (saved,) = path.parent.glob("session.v4.jsonl.cut-at-seq-2.*.removed")
    assert output.splitlines() == [
        "cut session 's' at seq 2: removed 8 well-formed and 1 damaged record(s)",
        f"the removed part is kept in {saved}",
    ]
    assert path.read_bytes() + saved.read_bytes() == damaged
    ran = run("show", "s", "--store", url)
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 0, output
    ran = run("repair", "s", "--cut-at", "2", "--store", url, "--json")
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 0, output
    assert json.loads(output) == {
        "session": "s",
        "cutAt": 2,
        "removed": 0,
        "damaged": 0,
        "savedTo": None,
    }


def test_repair_refuses_a_cut_past_the_damage_and_changes_nothing(tmp_path: Path) -> None:
    url, path = damaged_store(tmp_path)
    damaged = path.read_bytes()
    ran = run("repair", "s", "--cut-at", "5", "--store", url)
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 1
    assert 'Error: cannot cut session "s" at seq 5:' in output
    assert "cut at seq 2 or before" in output
    ran = run("repair", "s", "--store", url)
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 2  # --cut-at is required: a usage error
    assert path.read_bytes() == damaged


def test_repair_reports_as_json(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    with open_store(url) as store, store.create("s") as session:
        session.append("turn/start", {"turn": 1})
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    ran = run("repair", "s", "--cut-at", "1", "--store", url, "--json")
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 0, output
    result = json.loads(output)
    assert {key: result[key] for key in ("session", "cutAt", "removed", "damaged")} == {
        "session": "s",
        "cutAt": 1,
        "removed": 1,
        "damaged": 0,
    }
    saved = Path(result["savedTo"]).read_text().splitlines()
    assert json.loads(saved[0]) == {"session": "s", "cutAt": 1, "storedNextSeq": 2}
    assert json.loads(saved[1])["type"] == "turn/end"


def test_list_escapes_ids_that_would_break_its_output(tmp_path: Path) -> None:
    """Ids the stores refuse can still come from a foreign database or file: ``list`` shows
    them escaped, on one line each."""
    url = f"sqlite:///{tmp_path}/s.db"
    with open_store(url) as store:
        for session_id in ("plain", "two words"):
            with store.create(session_id) as session:
                session.append("turn/start", {"turn": 1})
    db = sqlite3.connect(tmp_path / "s.db")
    try:
        db.execute("UPDATE agentlog_sessions SET id = 'line\nbreak' WHERE id = 'two words'")
        db.commit()
    finally:
        db.close()
    ran = run("list", "--store", url)
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 0, output
    shown = sorted(line.split("  ")[0] for line in output.splitlines()[1:])
    assert shown == ["'line\\nbreak'", "plain"]


def test_list_escapes_an_id_no_terminal_can_print(tmp_path: Path) -> None:
    """Issue 10, repro 6: a transcript whose header id is a lone surrogate (no store accepts
    it now, but a foreign file can hold it) made ``list`` crash with UnicodeEncodeError."""
    directory = tmp_path / "store" / "_no-cwd" / "odd"
    directory.mkdir(parents=True)
    header = b'{"type":"session","version":4,"id":"\\ud800","createdAt":0,"delegationDepth":0}\n'
    (directory / "session.v4.jsonl").write_bytes(header)
    ran = run("list", "--store", f"jsonl:///{tmp_path}/store")
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 0, output
    row = output.splitlines()[1].split()
    assert (row[0], row[3:]) == ("'\\ud800'", ["v4", "-"])
