"""The reference's format-0 disk loads (``f0/vectors.jsonl``, ``load/*``), through the chain.

Each recorded artifact is written as a format-0 transcript and read with ``load_file``: what the
reference loaded must load and derive the same history after the README's format-4 mapping;
what it refused must be refused for the same reason. The reasons are pinned below as a fragment
of the reference's message and one of agentlog's (the same text where both say the same
words). Deviations are listed in ``deviations.json`` under ``f0``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentlog import AgentlogError, load_file, thaw
from tests.conformance.f0 import to_format_4, without_synthetic_seqs, without_system_prompts
from tests.conformance.vectors import load_vectors

DEVIATIONS = json.loads((Path(__file__).parent / "deviations.json").read_text())["f0"]
CASES = [v for v in load_vectors("f0") if v["category"].startswith("load/")]

pytestmark = pytest.mark.structure_free(
    "the load vectors include logs cut mid-turn and edited envelopes; loading must not depend "
    "on the opt-in invariant companion"
)


def same(fragment: str) -> tuple[str, str]:
    return fragment, fragment


REFUSED_FOR: dict[str, tuple[str, str]] = {
    "load-023": same('event type "x-plugin/future-event" (seq 33) unknown to this harness'),
    "load-024": same('event type "x-plugin/future-event" (seq 32) unknown to this harness'),
    "load-027": ("is not surface-eligible", "cites seqs that are not exactly the chunks"),
    "load-028": same('event type "x-plugin/future-event" (seq 0) unknown to this harness'),
    "load-029": same("invalid event envelope"),
    "load-030": ("TypeError", "invalid event envelope"),
    "load-032": same("(expected 29, got 29)"),
    "load-033": same("invalid event envelope"),
    "load-036": same('event type "7" (seq 40) unknown to this harness'),
    "load-037": same("invalid event envelope"),
    "load-038": (
        "invalid event envelope",
        "$.time is 1152921504606846976 (outside the safe integer range",
    ),
    "load-039": same("(expected 55, got 56)"),
    "load-041": same("(expected 28, got 27)"),
    "load-043": same("unparsable"),
    "load-050": ("uses log format v1", "header version 1 does not match the file name's format v0"),
    "load-052": ("first line is not a session header", "delegationDepth must be"),
    "load-053": same('session header cwd must be an absolute path, got "relative/dir"'),
    "load-055": same("session header uses retired policy baseline fields"),
    "load-057": ("header line is not valid JSON", "first line is not a session header"),
    "load-058": same("first line is not a session header"),
    "load-064": ("first line is not a session header", "session header has no numeric version"),
    "load-066": same('"load-066" contains unsupported legacy request/header-delta event at seq 2'),
    "load-067": same('"load-067" contains unsupported legacy mode/set event at seq 2'),
    "load-068": same('unsupported legacy request/header reason "fallback" at seq 2'),
    "load-071": same('"load-071" contains malformed pre-react-loop steering/message at seq 5'),
    "load-077": same('"load-077" contains malformed pre-react-loop turn/start at seq 0'),
    "load-082": same('"load-082" contains malformed pre-react-loop turn/end at seq 6'),
    "load-083": same('"user/message" is surface-eligible and requires a surfaceOp marker'),
    "load-085": same("sourceEventSeqs must include every shadowed surface node; missing"),
    "load-087": same("lacks an identified message"),
    "load-088": same("lacks an identified message"),
    "load-089": same('message must have role "user"'),
    "load-090": same("message has invalid source"),
    "load-091": same("message has invalid source"),
    "load-093": same("message must have model source"),
    "load-096": same("message must contain one tool-result block"),
    "load-097": same("message must contain one tool-result block"),
    "load-098": same("message must have tool source"),
    "load-100": same("has an invalid reasoningEffort"),
    "load-104": same("sourceEventSeqs must reference earlier events"),
    "load-105": same("sourceEventSeqs must not be empty"),
    "load-107": ("", "is -0.0 (no JSON form)"),  # the reference loaded it: deviation D5
    "load-109": ("", "line 36: a value outside the lossless JSON domain (number 1e400"),  # D6
    "load-113": ("unparsable committed event", "malformed text-chunks storage row: dt length"),
    "load-114": ("unparsable committed event", "malformed text-chunks storage row: envelope"),
    "load-116": ("unparsable committed event", "malformed text-chunks storage row: texts"),
}
"""Vector id → (fragment of the reference's error, fragment of agentlog's)."""


def deviation(case_id: str) -> str | None:
    return next((rule for rule, entry in DEVIATIONS.items() if case_id in entry["cases"]), None)


def load(case: dict[str, Any], tmp_path: Path) -> Any:
    path = tmp_path / "session.jsonl"
    path.write_bytes(case["input"]["artifact"].encode("utf-8", "surrogatepass"))
    return load_file(path)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["id"])
def test_a_format_0_log_loads_or_is_refused_as_the_reference_did(
    case: dict[str, Any], tmp_path: Path
) -> None:
    disk = case["expected"]["disk"]
    refused_here = case["id"] in REFUSED_FOR
    assert refused_here == (not disk["ok"] or deviation(case["id"]) in ("D5", "D6"))
    if refused_here:
        reference, ours = REFUSED_FOR[case["id"]]
        if disk["ok"] is False:
            assert reference in disk["error"]["message"]
        with pytest.raises(AgentlogError) as refused:
            load(case, tmp_path)
        assert ours in str(refused.value)
        return
    derived = thaw(load(case, tmp_path).derive_messages())
    expected = [to_format_4(message) for message in disk["state"]["derivedMessages"]]
    assert isinstance(derived, list)
    mine = without_system_prompts(derived)
    if deviation(case["id"]) == "M1":
        mine, expected = without_synthetic_seqs(mine), without_synthetic_seqs(expected)
    assert mine == expected


def test_every_deviation_names_real_load_cases() -> None:
    ids = {case["id"] for case in CASES}
    for rule, entry in DEVIATIONS.items():
        assert entry["rule"]
        assert set(entry["cases"]) <= ids, rule
