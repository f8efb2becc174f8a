"""Running ``agentlog`` in tests: in-process (typer's runner) and as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentlog import open_store
from agentlog.cli import app
from tests.cli.coding import clock, coding_session

__all__ = ["Ran", "demo_in", "files", "run", "run_process"]

ENV = {"COLUMNS": "80", "NO_COLOR": "1", "AGENTLOG_STORE": ""}


@dataclass(frozen=True, slots=True)
class Ran:
    """What a run of ``agentlog`` printed and returned."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """The JSON document on stdout."""
        return json.loads(self.stdout)

    def json_lines(self) -> list[Any]:
        """The JSON lines on stdout."""
        return [json.loads(line) for line in self.stdout.splitlines()]


def run(*args: str, env: dict[str, str] | None = None, input: str | None = None) -> Ran:
    """``agentlog ARGS`` through typer's runner, 80 columns, no colour."""
    result = CliRunner().invoke(app, list(args), env={**ENV, **(env or {})}, input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


def run_process(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Ran:
    """``python -m agentlog ARGS`` as a real subprocess."""
    completed = subprocess.run(
        [sys.executable, "-m", "agentlog", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env={**os.environ, **ENV, **(env or {})},
    )
    return Ran(completed.returncode, completed.stdout, completed.stderr)


def demo_in(url: str, session_id: str = "demo") -> str:
    """Write the compacted coding session (tests/cli/coding.py) into the store at ``url``."""
    with open_store(url, clock=clock()) as store, store.create(session_id, cwd="/demo") as s:
        coding_session(s)
    return session_id


def files(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its size and mtime: equal before and after means untouched."""
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
    }
