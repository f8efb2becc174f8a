"""The ``agentlog`` command, run in-process with typer's runner and as a real subprocess."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from agentlog.cli import app
from agentlog.events import render_event_catalog


def test_demo_shows_log_surface_and_messages() -> None:
    result = CliRunner().invoke(app, ["demo"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Log of 'demo' (42 events)" in result.output
    assert "Surface (8 nodes)" in result.output
    assert "Derived messages" in result.output
    assert "replace 5-16" in result.output  # the compaction summary and its range
    assert "[pruned: 59 lines of parser.py" in result.output  # markup is not swallowed
    assert "42 events in the log, 8 on the surface, 8 messages for the model" in result.output


def test_demo_runs_as_a_console_script_in_seconds() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "agentlog", "demo"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "nothing was deleted" in completed.stdout


def test_catalog_prints_the_generated_catalog() -> None:
    result = CliRunner().invoke(app, ["catalog"])
    assert result.exit_code == 0
    assert result.output == render_event_catalog()


def test_no_arguments_shows_help() -> None:
    result = CliRunner().invoke(app, [])
    assert "Usage" in result.output
    assert "demo" in result.output
