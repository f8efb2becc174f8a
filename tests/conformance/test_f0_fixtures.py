"""Every real dsh session log of ``conformance/fixtures`` loads as the reference loaded it.

Issue 5: each log the reference loaded loads here through the migration chain, and its derived
messages equal the reference's after the README's format-4 shape mapping (``f0.py``); each log
the reference refused is refused for the same reason — a fragment of the reference's error,
pinned below, must appear in agentlog's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentlog import AgentlogError, load_file, thaw
from tests.conformance.f0 import load_fixtures, to_format_4, without_system_prompts

REFUSED_FOR = {
    "apps__web__tests__snapshots__cordis-tool-round__session.jsonl": (
        "sourceEventSeqs must reference earlier events: 11 >= current seq 11"
    ),
    "packages__test-support__acp-snapshot__tests__fixtures__suite__authored-error__session.jsonl": (
        "contains malformed pre-react-loop turn/end at seq 0"
    ),
}
"""The reason of each refusal that is not the common one (``lacks provider/model``)."""

COMMON_REASON = "lacks provider/model"
NOT_SESSION_LOGS = "first line is not a"

FIXTURES = load_fixtures()

pytestmark = pytest.mark.structure_free(
    "real logs include fragments (stream chunks outside any turn); dsh loads them without its "
    "opt-in invariant companion, and so must load_file"
)


def fixture_id(fixture: dict[str, Any]) -> str:
    return str(fixture["source_path"])


@pytest.mark.parametrize("fixture", [f for f in FIXTURES if f["ok"]], ids=fixture_id)
def test_a_log_the_reference_loaded_derives_the_same_history(
    fixture: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(fixture["artifact"])
    session = load_file(path)
    ours = thaw(session.derive_messages())
    assert isinstance(ours, list)
    expected = [to_format_4(message) for message in fixture["derived_messages"]]
    assert without_system_prompts(ours) == expected
    assert path.read_text() == fixture["artifact"]  # read only: nothing written


@pytest.mark.parametrize("fixture", [f for f in FIXTURES if f["ok"] is False], ids=fixture_id)
def test_a_log_the_reference_refused_is_refused_for_the_same_reason(
    fixture: dict[str, Any], tmp_path: Path
) -> None:
    reason = REFUSED_FOR.get(fixture["fixture"], COMMON_REASON)
    assert reason in fixture["error"]  # the pinned fragment is the reference's reason
    path = tmp_path / "session.jsonl"
    path.write_text(fixture["artifact"])
    with pytest.raises(AgentlogError) as refused:
        load_file(path)
    assert reason in str(refused.value)


@pytest.mark.parametrize("fixture", [f for f in FIXTURES if f["artifact"] is None], ids=fixture_id)
def test_a_file_the_reference_could_not_even_read_as_a_log_is_refused(
    fixture: dict[str, Any], tmp_path: Path
) -> None:
    assert NOT_SESSION_LOGS in fixture["materialize_error"]
    path = tmp_path / "session.jsonl"
    path.write_text(fixture["raw"])
    with pytest.raises(AgentlogError, match=NOT_SESSION_LOGS):
        load_file(path)


def test_the_fixture_set_is_complete() -> None:
    assert len(FIXTURES) == 163
    assert sum(1 for f in FIXTURES if f["ok"]) == 150
