"""``export`` and ``import``: between any two stores and from session files, verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlog import open_store, thaw
from tests.cli.support import demo_in, files, run
from tests.stores.legacy import format_0_log, write_log


@pytest.mark.parametrize(
    ("source", "target"),
    [("store", "copy.db"), ("s.db", "copy"), ("s.db", "jsonl+zstd:///{tmp}/z")],
)
def test_export_copies_every_session_and_verifies_it(
    source: str, target: str, tmp_path: Path
) -> None:
    source_url = str(tmp_path / source)
    target_url = target.format(tmp=tmp_path) if "{" in target else str(tmp_path / target)
    demo_in(source_url, "a")
    demo_in(source_url, "b")
    before = files(tmp_path / source) if (tmp_path / source).is_dir() else None
    ran = run("export", "--to", target_url, "--store", source_url)
    assert ran.code == 0, ran.stderr
    assert ran.stdout.splitlines() == [
        "a: copied 42 of 42 events, verified",
        "b: copied 42 of 42 events, verified",
    ] or ran.stdout.splitlines() == [
        "b: copied 42 of 42 events, verified",
        "a: copied 42 of 42 events, verified",
    ]
    with open_store(source_url) as mine, open_store(target_url) as theirs:
        for session_id in ("a", "b"):
            assert [thaw(e.to_wire()) for e in theirs.read_from(session_id, 0)] == [
                thaw(e.to_wire()) for e in mine.read_from(session_id, 0)
            ]
    again = run("export", "--to", target_url, "--store", source_url, "--json")
    assert sorted((r["session"], r["copied"]) for r in again.json_lines()) == [("a", 0), ("b", 0)]
    if before is not None:
        assert files(tmp_path / source) == before


def test_export_of_named_sessions_only(tmp_path: Path) -> None:
    demo_in(str(tmp_path / "s.db"), "a")
    demo_in(str(tmp_path / "s.db"), "b")
    ran = run("export", "b", "--to", str(tmp_path / "t.db"), "--store", str(tmp_path / "s.db"))
    assert ran.code == 0
    assert [s["id"] for s in run("ls", "--json", "--store", str(tmp_path / "t.db")).json()] == ["b"]


def test_export_needs_a_target() -> None:
    assert run("export", "--store", "memory:").code == 2


def test_import_reads_session_files_of_any_format_and_whole_stores(tmp_path: Path) -> None:
    old = write_log(tmp_path / "dsh", *format_0_log())
    demo_in(str(tmp_path / "other"), "demo")
    target = str(tmp_path / "mine.db")
    ran = run("import", str(old), str(tmp_path / "other"), "--store", target)
    assert ran.code == 0, ran.stderr
    assert ran.stdout.splitlines() == [
        "old: copied 9 of 9 events, verified",  # migrated: 12 stored records, 9 events
        "demo: copied 42 of 42 events, verified",
    ]
    with open_store(target) as store:
        assert store.inspection("old").stored_version == 4  # converted on the way in
    assert old.with_name("session.v4.jsonl").exists() is False  # the source is only read


def test_import_refuses_a_different_session_under_the_same_id(tmp_path: Path) -> None:
    demo_in(str(tmp_path / "one"), "same")
    demo_in(str(tmp_path / "two"), "same")  # the compaction ids differ: another log
    ran = run("import", str(tmp_path / "two"), "--store", str(tmp_path / "one"))
    assert ran.code == 1
    assert 'Error: session "same" already exists in ' in ran.stderr
    assert "with a different log" in ran.stderr
