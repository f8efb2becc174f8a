"""The ``agentlog`` command as a whole: help, version, exit codes, errors, the command set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.main import get_command

from agentlog.cli.app import app
from tests.cli.support import run, run_process

PINNED = {
    "ls", "show", "messages", "stats", "verify", "expand", "fork", "compact", "prune", "migrate",
    "export", "import", "rm", "tail", "search", "view", "catalog", "demo", "chat", "migrate-store",
}  # fmt: skip
"""The pinned command set, less repair (the reliability branch adds it)."""


def test_every_pinned_command_is_registered() -> None:
    commands = get_command(app).commands  # type: ignore[attr-defined]  # a group has commands
    names = {name for name, command in commands.items() if not command.hidden}
    assert names >= PINNED


def test_help_lists_commands_with_plain_flags_and_no_type_noise() -> None:
    ran = run("--help")
    assert ran.code == 0
    assert "Exit codes: 0 success, 1 failure" in ran.stdout
    for name in PINNED:
        assert re.search(rf"^  {name} ", ran.stdout, re.MULTILINE), name
    assert "<bool>" not in ran.stdout
    assert max(len(line) for line in ran.stdout.splitlines()) <= 80


@pytest.mark.parametrize("command", sorted(PINNED))
def test_each_commands_help_has_an_example_and_fits_80_columns(command: str) -> None:
    ran = run(command, "--help")
    assert ran.code == 0, ran.stderr
    assert "Example: agentlog " in ran.stdout
    assert "<bool>" not in ran.stdout
    assert max(len(line) for line in ran.stdout.splitlines()) <= 80


def test_version() -> None:
    ran = run("--version")
    assert ran.code == 0
    assert re.fullmatch(r"agentlog \S+ \(session format 4\)\n", ran.stdout)


def test_ls_is_the_command_and_list_its_hidden_alias(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    run("demo", "--store", store)
    listed, aliased = run("ls", "--store", store), run("list", "--store", store)
    assert listed.code == aliased.code == 0
    assert listed.stdout == aliased.stdout
    assert "list" not in run("--help").stdout.split("Commands:")[1].split()


def test_usage_errors_exit_2_and_failures_exit_1(tmp_path: Path) -> None:
    assert run("show").code == 2  # a missing argument
    assert run("show", "x", "--tail", "0").code == 2  # out of range
    assert run("nosuchcommand").code == 2
    missing = run("show", "nope", "--store", "memory:")
    assert missing.code == 1
    assert missing.stderr.startswith('Error: session "nope" not found\nHint: list the sessions')


def test_no_arguments_shows_help() -> None:
    ran = run()
    assert ran.code in (0, 2)  # click's code for "no command" varies by version
    assert "Usage: agentlog" in ran.stdout + ran.stderr


def test_python_dash_m_runs_the_same_command(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    made = run_process("demo", "--store", store)
    assert made.code == 0, made.stderr
    listed = run_process("ls", "--json", "--store", store)
    assert listed.code == 0
    (session,) = listed.json()
    assert session["id"].startswith("demo-")
    failed = run_process("show", "nope", "--store", store)
    assert failed.code == 1
    assert failed.stderr.startswith('Error: session "nope" not found')
    assert run_process("show").code == 2
