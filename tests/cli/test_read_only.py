"""Read-only commands leave the file system exactly as it was (listed before and after).

Every read-only command runs against each kind of store and against a session file; the
store's directory — every file, its size and its mtime — must not change, not even by a lock
file, a SQLite ``-wal``/``-shm`` or a migrated transcript. (``view`` writes its page and
``search`` its disposable index, both outside the store.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.support import demo_in, files, run
from tests.stores.legacy import format_0_log, write_log

KINDS = {
    "jsonl": lambda root: f"jsonl:///{root}/store",
    "jsonl+zstd": lambda root: f"jsonl+zstd:///{root}/store",
    "sqlite": lambda root: f"sqlite:///{root}/store/sessions.db",
    "path": lambda root: str(root / "store"),
}


def _commands(session: str, out: Path) -> list[list[str]]:
    return [
        ["ls"],
        ["ls", "--json"],
        ["show", session],
        ["show", session, "--json"],
        ["show", session, "--turn", "2"],
        ["messages", session],
        ["messages", session, "--format", "json"],
        ["stats", session],
        ["verify", session],
        ["verify", "--all"],
        ["expand", session, "34"],
        ["tail", session, "-n", "5"],
        ["view", session, "-o", str(out / "page.html")],
        ["search", "parser", "--index", str(out / "index.db")],
        ["export", "--to", str(out / "copy")],
        ["migrate"],
    ]


@pytest.mark.parametrize("kind", list(KINDS))
def test_read_only_commands_change_nothing_in_the_store(kind: str, tmp_path: Path) -> None:
    root, out = tmp_path / "data", tmp_path / "out"
    out.mkdir()
    url = KINDS[kind](root)
    demo_in(url)
    before = files(root)
    for command in _commands("demo", out):
        ran = run(*command, "--store", url)
        assert ran.code == 0, (command, ran.stderr)
        assert files(root) == before, command


def test_read_only_commands_change_nothing_beside_a_session_file(tmp_path: Path) -> None:
    root, out = tmp_path / "data", tmp_path / "out"
    out.mkdir()
    demo_in(str(root))
    (transcript,) = root.rglob("session.v4.jsonl")
    before = files(root)
    for command in _commands(str(transcript), out):
        if command[0] in ("ls", "search", "export", "migrate") or command == ["verify", "--all"]:
            continue  # store-wide commands: covered above
        ran = run(*command)
        assert ran.code == 0, (command, ran.stderr)
        assert files(root) == before, command


def test_reading_an_old_format_log_writes_no_migrated_copy(tmp_path: Path) -> None:
    original = write_log(tmp_path / "old", *format_0_log())
    before = files(tmp_path)
    url = f"jsonl:///{tmp_path}/old"
    for command in (["ls"], ["show", "old"], ["stats", "old"], ["verify", "old"], ["migrate"]):
        ran = run(*command, "--store", url)
        assert ran.code == 0, (command, ran.stderr)
    assert run("show", str(original)).code == 0
    assert files(tmp_path) == before
