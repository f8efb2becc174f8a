"""What every command shares: store URLs and paths, session files, errors with hints.

Each test here is one of issue 14's findings: a trap the CLI used to fall into.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.support import demo_in, files, run


def test_a_typo_in_a_sqlite_url_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ran = run("show", "x", "--store", "sqlite:///typo.db")
    assert ran.code == 1
    assert ran.stderr.startswith('Error: no SQLite store at "typo.db" (no such file)\nHint: ')
    assert files(tmp_path) == {}


def test_listing_a_store_in_missing_directories_creates_none_of_them(tmp_path: Path) -> None:
    ran = run("ls", "--store", f"sqlite:///{tmp_path}/nodir/sub/x.db")
    assert ran.code == 1
    assert "no SQLite store at" in ran.stderr
    assert files(tmp_path) == {}


def test_listing_a_jsonl_directory_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    ran = run("ls", "--store", f"jsonl:///{tmp_path}/missing")
    assert ran.code == 1
    assert ran.stderr.startswith(f'Error: no JSONL store at "{tmp_path}/missing"')


def test_mode_ro_is_a_query_parameter_not_part_of_the_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run("demo", "--store", "sqlite:///a.db?mode=ro").code == 1  # read-only: refused
    assert files(tmp_path) == {}
    demo_in("sqlite:///a.db")
    ran = run("ls", "--json", "--store", "sqlite:///a.db?mode=ro")
    assert ran.code == 0
    assert [s["id"] for s in ran.json()] == ["demo"]
    assert not [name for name in files(tmp_path) if "?" in name or name.endswith(("-wal", "-shm"))]


def test_an_unknown_query_parameter_is_an_error(tmp_path: Path) -> None:
    ran = run("ls", "--store", f"sqlite:///{tmp_path}/a.db?cache=shared")
    assert ran.code == 1
    assert "unknown query parameter 'cache=shared'" in ran.stderr
    assert files(tmp_path) == {}


@pytest.mark.parametrize("name", ["sessions.db", "sessions.sqlite", "store-dir"])
def test_a_plain_path_is_a_store(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    made = run("demo", "--store", name)
    assert made.code == 0, made.stderr
    assert f"--store {name}" in made.stdout  # the hint to see it again names the store
    (session,) = run("ls", "--json", "--store", name).json()
    assert run("show", session["id"], "--store", name).code == 0
    assert (tmp_path / name).is_dir() == (name == "store-dir")


def test_a_session_file_path_works_wherever_a_session_is_expected(tmp_path: Path) -> None:
    demo_in(str(tmp_path / "store"))
    (transcript,) = (tmp_path / "store").rglob("session.v4.jsonl")
    for command in (["show"], ["messages"], ["stats"], ["verify"], ["tail"], ["expand"]):
        args = [*command, str(transcript)] + (["34"] if command == ["expand"] else [])
        ran = run(*args)
        assert ran.code == 0, (command, ran.stderr)


def test_a_missing_session_file_says_so(tmp_path: Path) -> None:
    ran = run("show", f"{tmp_path}/nope/session.v4.jsonl", "--store", "memory:")
    assert ran.code == 1
    assert f"there is no file '{tmp_path}/nope/session.v4.jsonl' either" in ran.stderr


def test_the_default_store_that_does_not_exist_yet_is_explained(tmp_path: Path) -> None:
    ran = run("ls", env={"AGENTLOG_HOME": str(tmp_path / "home")})
    assert ran.code == 1
    assert "nothing is saved in the default store" in ran.stderr
    assert "run agentlog demo, or pass --store URL|PATH" in ran.stderr
    assert files(tmp_path) == {}


def test_a_corrupt_log_error_names_the_file_and_line_and_hints_at_verify(tmp_path: Path) -> None:
    demo_in(str(tmp_path / "store"))
    (transcript,) = (tmp_path / "store").rglob("session.v4.jsonl")
    lines = transcript.read_bytes().splitlines(keepends=True)
    lines[5] = b"{not json\n"
    transcript.write_bytes(b"".join(lines))
    ran = run("show", "demo", "--store", str(tmp_path / "store"))
    assert ran.code == 1
    assert f'"{transcript}" line 6' in ran.stderr
    assert "Hint: agentlog verify SESSION reports every problem" in ran.stderr
