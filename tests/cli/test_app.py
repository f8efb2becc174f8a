"""The ``agentlog`` command, run in-process with typer's runner and as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from agentlog import expand, open_store, thaw
from agentlog.cli import app
from agentlog.cli.demo import demo_checkpoint
from agentlog.events import render_event_catalog


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200", **(env or {})})
    return result.exit_code, result.output


def test_demo_persists_the_session_and_shows_log_surface_and_messages(tmp_path: Path) -> None:
    url = f"jsonl:///{tmp_path}/sessions"
    code, output = run("demo", "--store", url)
    assert code == 0, output
    assert "(62 events)" in output
    assert "Surface (7 nodes)" in output
    assert "Derived messages" in output
    assert "replace 5-38" in output  # the compaction summary and its range
    assert "resume: read_file, run_tests" in output  # the header after the resume
    assert "62 events in the log, 7 on the surface, 7 messages for the model" in output
    assert "agentlog.expand(session, 45) gives back what the summary replaced: events 5, 8," in (
        output
    )
    with open_store(url) as store:
        (info,) = store.list()
        assert f"Saved as session {info.id!r} in {url}" in output
        assert store.inspect(info.id).first_live_seq == 62


def test_demo_runs_on_the_default_store_as_a_console_script(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "agentlog", "demo"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "AGENTLOG_HOME": str(tmp_path), "AGENTLOG_STORE": ""},
    )
    assert completed.returncode == 0, completed.stderr
    assert "nothing was deleted" in completed.stdout
    assert f"sqlite:///{tmp_path}/sessions.db" in completed.stdout
    assert (tmp_path / "sessions.db").is_file()


def test_list_and_show_read_a_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    run("demo", "--store", url)
    code, listing = run("list", "--store", url)
    assert code == 0
    session_id = listing.split()[0]
    assert session_id.startswith("demo-")
    assert "/demo/project" in listing
    code, shown = run("show", session_id, "--store", url)
    assert code == 0, shown
    assert "Derived messages" in shown
    code, as_json = run("list", "--json", "--store", url)
    assert f'"id": "{session_id}"' in as_json


def test_expand_shows_what_a_summary_replaced(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    run("demo", "--store", url)
    with open_store(url) as store:
        (info,) = store.list()
        session = store.inspect(info.id)
    checkpoint = demo_checkpoint(session)
    originals = expand(session, checkpoint)

    code, shown = run("expand", info.id, str(checkpoint), "--store", url)
    assert code == 0, shown
    assert f"Event {checkpoint} (user/message) stands for {len(originals)} events" in shown
    assert "tests/test_parser.py fails. Please fix it." in shown

    code, lines = run("expand", info.id, str(checkpoint), "--json", "--store", url)
    assert code == 0
    assert [json.loads(line) for line in lines.splitlines()] == [
        thaw(event.to_wire()) for event in originals
    ]


def test_expand_of_an_event_that_replaced_nothing_or_of_no_event(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    run("demo", "--store", url)
    code, listing = run("list", "--store", url)
    session_id = listing.split()[0]
    code, shown = run("expand", session_id, "5", "--store", url)
    assert (code, shown.strip()) == (0, "event 5 (user/message) replaced nothing")
    code, shown = run("expand", session_id, "999", "--store", url)
    assert code == 1
    assert f"Error: session '{session_id}' has no event at seq 999" in shown


def test_a_missing_session_is_an_error_with_exit_1() -> None:
    code, output = run("show", "nope", "--store", "memory:")
    assert code == 1
    assert 'Error: session "nope" not found' in output


def test_where_prints_the_default_store(tmp_path: Path) -> None:
    code, output = run("where", env={"AGENTLOG_HOME": str(tmp_path), "AGENTLOG_STORE": ""})
    assert code == 0
    assert output.strip() == f"sqlite:///{tmp_path}/sessions.db"


def test_catalog_prints_the_generated_catalog() -> None:
    code, output = run("catalog")
    assert code == 0
    assert output == render_event_catalog()


def test_no_arguments_shows_help() -> None:
    code, output = run()
    assert code in (0, 2)  # typer shows help; click's exit code for "no command" varies
    assert "Usage" in output
    assert "demo" in output
