"""``catalog`` and ``where``: what agentlog knows, for users."""

from __future__ import annotations

from pathlib import Path

from agentlog import KNOWN_EVENT_TYPES
from agentlog.events import render_event_catalog
from tests.cli.support import run


def test_catalog_is_a_table_for_people() -> None:
    ran = run("catalog")
    assert ran.code == 0
    assert ran.stdout.startswith(
        f"{len(KNOWN_EVENT_TYPES)} event types. Kinds:\n  surface    shows"
    )
    assert "turn/start" in ran.stdout
    assert "a test fails" not in ran.stdout
    assert "gen_docs" not in ran.stdout
    assert max(len(line) for line in ran.stdout.splitlines()) <= 80


def test_catalog_as_json_and_markdown() -> None:
    entries = run("catalog", "--json").json()
    assert {entry["type"] for entry in entries} == KNOWN_EVENT_TYPES
    assert {entry["kind"] for entry in entries} == {"surface", "log-only", "projection"}
    assert run("catalog", "--markdown").stdout == render_event_catalog()


def test_where_prints_the_default_store(tmp_path: Path) -> None:
    ran = run("where", env={"AGENTLOG_HOME": str(tmp_path)})
    assert (ran.code, ran.stdout.strip()) == (0, f"sqlite:///{tmp_path}/sessions.db")
