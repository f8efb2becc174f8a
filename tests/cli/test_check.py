"""``stats`` and ``verify``: figures and verdicts, as tables and as JSON, with exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlog import messages as m
from agentlog import open_store
from agentlog.plugins.stats import session_stats
from tests.cli.support import demo_in, run


def test_stats_prints_the_figures_and_json_matches_the_library(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    demo_in(url)
    table = run("stats", "demo", "--store", url)
    assert table.code == 0, table.stderr
    assert "events            42 stored" in table.stdout
    assert "turns / steps     3 / 6" in table.stdout
    assert "on disk" in table.stdout
    figures = run("stats", "demo", "--json", "--store", url).json()
    with open_store(url) as store:
        inspection = store.inspection("demo")
    expected = session_stats(inspection.session, stored_events=42).to_json()
    assert {k: v for k, v in figures.items() if k not in ("session", "fileBytes")} == expected
    assert figures["estimatedSavings"] > 0  # the demo's compaction and pruning save tokens
    assert figures["fileBytes"] == Path(inspection.location or "").stat().st_size
    assert figures["usage"] == {"inputTokens": 12000, "outputTokens": 480}


def test_verify_passes_a_sound_session_and_reports_it(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    demo_in(url)
    ran = run("verify", "demo", "--strict", "--store", url)
    assert (ran.code, ran.stdout) == (0, "ok   demo  42 events\n1 of 1 sessions passed\n")
    (verdict,) = run("verify", "demo", "--json", "--store", url).json_lines()
    assert verdict == {
        "session": "demo",
        "ok": True,
        "location": verdict["location"],
        "events": 42,
        "problems": [],
        "warnings": [],
    }


def _damage(store: Path) -> Path:
    (transcript,) = store.rglob("session.v4.jsonl")
    lines = transcript.read_bytes().splitlines(keepends=True)
    lines[7] = b'{"type":"tool/call","seq":6,\n'  # a torn record with records after it
    transcript.write_bytes(b"".join(lines))
    return transcript


@pytest.mark.structure_free("the damaged log is read as any reader would, without the companion")
def test_verify_all_fails_with_exit_1_naming_what_and_where(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    demo_in(url, "good")
    demo_in(url, "bad")
    transcript = _damage(next(p for p in (tmp_path / "store").glob("*/bad")))
    ran = run("verify", "--all", "--store", url)
    assert ran.code == 1
    assert "ok   good  42 events" in ran.stdout
    assert "FAIL bad" in ran.stdout
    assert f'  load: corrupt session log "{transcript}" line 8' in ran.stdout
    assert ran.stdout.endswith("1 of 2 sessions passed\n")
    lines = run("verify", "--all", "--json", "--store", url).json_lines()
    assert sorted((v["session"], v["ok"]) for v in lines) == [("bad", False), ("good", True)]


@pytest.mark.structure_free("the session breaks turn structure on purpose")
def test_structure_problems_are_warnings_unless_strict(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    with open_store(url) as store, store.create("loose", strict=False) as session:
        session.append(
            "assistant/message",
            m.assistant("hi", provider="p", model="m", turn=1, step=1, id="a1"),
            surface_op="append",
        )
    lenient = run("verify", "loose", "--store", url)
    assert lenient.code == 0
    assert "  warning (structure): assistant/message names turn 1/step 1" in lenient.stdout
    strict = run("verify", "loose", "--strict", "--store", url)
    assert strict.code == 1
    assert "  structure: assistant/message names turn 1/step 1" in strict.stdout


def test_verify_needs_sessions_or_all_but_not_both(tmp_path: Path) -> None:
    assert run("verify", "--store", "memory:").code == 2
    assert run("verify", "x", "--all", "--store", "memory:").code == 2
    missing = run("verify", "nope", "--store", "memory:")
    assert missing.code == 1
    assert missing.stderr.startswith('Error: session "nope" not found')
