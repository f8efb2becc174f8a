"""``show``, ``messages``, ``stats`` and ``verify`` on the 160 real dsh session logs.

The vendored fixtures (tests/conformance/data, see tests/conformance/test_f0_fixtures.py):
each of the 150 logs the reference loaded is shown, its messages printed as JSON (equal to
what ``load_file`` derives), its figures counted, and verified (exit 0); each of the 10 it refused
fails ``verify`` with exit 1 for the reference's reason, and the other commands report that
reason as ``Error: ...`` (exit 1) instead of crashing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentlog import load_file, thaw
from tests.cli.support import run
from tests.conformance.f0 import load_fixtures
from tests.conformance.test_f0_fixtures import COMMON_REASON, REFUSED_FOR

FIXTURES = [f for f in load_fixtures() if f["artifact"] is not None]

pytestmark = [
    pytest.mark.structure_free("real dsh logs hold fragments outside turns; dsh loads them"),
    pytest.mark.slow,
]


def test_there_are_160_logs() -> None:
    assert len(FIXTURES) == 160
    assert sum(1 for f in FIXTURES if f["ok"]) == 150


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: str(f["fixture"]))
def test_the_read_commands_on_a_real_dsh_log(fixture: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(fixture["artifact"])
    verdict = run("verify", str(path), "--json")
    (report,) = verdict.json_lines()
    commands = [run(*command, str(path)) for command in (["show"], ["stats"])]
    as_json = run("messages", str(path), "--format", "json")
    if fixture["ok"]:
        assert verdict.code == 0, report
        assert report["ok"] is True
        for ran in commands:
            assert ran.code == 0, ran.stderr
        assert as_json.json() == thaw(load_file(path).derive_messages())
        return
    reason = REFUSED_FOR.get(fixture["fixture"], COMMON_REASON)
    assert verdict.code == 1
    assert report["ok"] is False
    assert report["problems"][0]["check"] == "load"
    assert reason in report["problems"][0]["message"]
    for ran in [*commands, as_json]:
        assert ran.code == 1
        assert ran.stderr.startswith("Error: ")
        assert reason in ran.stderr
    assert path.read_text() == fixture["artifact"]  # read only
