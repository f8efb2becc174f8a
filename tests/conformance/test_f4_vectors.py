"""Every recorded format-4 reference case, replayed against agentlog (``data/README.md``).

Each case runs the same calls the recorder made on the TypeScript reference and compares every
recorded field. Where agentlog deliberately differs (``deviations.json``), the harness applies
the named rule mechanically — it checks that agentlog refused with the rule's own text — and
stops comparing that case; a test below pins the exact set of cases each rule touched, so a
deviation can neither hide a failure nor go stale.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from agentlog import (
    Event,
    NotLosslessJson,
    Session,
    SessionForkError,
    build_fork_seed,
    open_turn_closers,
)
from agentlog.events import is_declared
from agentlog.surface import check_markers
from agentlog.values import is_seq, thaw
from tests.conformance.vectors import (
    Comparison,
    append_call,
    clock,
    decode,
    fold_view,
    has_big_integer,
    load_vectors,
    projections_of,
    run_append,
    state_view,
    step_view,
)

pytestmark = pytest.mark.structure_free(
    "the vectors replay the reference's recorded calls and results, recorded without the "
    "invariant companion; about a hundred cases append outside any turn or step, and giving "
    "them structure would change the very calls compared with the recording"
)

DEVIATIONS = json.loads((Path(__file__).parent / "deviations.json").read_text())

_SHAPE_SUFFIXES = (
    r"lacks provider/model|has an invalid reasoningEffort|has invalid adapterDefaults"
    r"|has an invalid reason|has an invalid startsSeries marker|has invalid settlement fields"
    r"|lacks an identified message|message must have role \"[a-z]+\"|message has invalid source"
    r"|message has invalid content|message must have model source"
    r"|message must have tool source|message has mismatched tool call ids"
    r"|message must have system-prompt source"
)
_SHAPE_AT_APPEND = re.compile(rf'session event "[^"]+" at seq \d+ ({_SHAPE_SUFFIXES})')
_NON_JSON_DATA = re.compile(
    r'session event "[^"]+" carries non-JSON-serializable (data|surface metadata)'
)


def _deviation(call: Any, expected_error: str | None, ours: Any) -> str | None:
    """The deviation rule that explains agentlog refusing (or accepting) differently."""
    if call.absent_means_null:
        return "P1"
    if ours.ok:
        return None
    if not is_declared(call.event_type) and "has an undeclared type" in (ours.error or ""):
        return "D2"
    if has_big_integer([call.data, call.kwargs]) and _NON_JSON_DATA.fullmatch(ours.error or ""):
        return "D4"
    if _SHAPE_AT_APPEND.fullmatch(ours.error or ""):
        return "D1"
    return None


def _check_refused(comparison: Comparison, where: str, fold: dict[str, Any]) -> None:
    """Rule T1: where the reference crashed with a JS TypeError, agentlog must refuse cleanly."""
    if "error" not in fold:
        comparison.fail(f"{where}: the reference crashed (TypeError) but agentlog accepted")


def replay_steps(
    comparison: Comparison,
    session: Session,
    appends: list[dict[str, Any]],
    steps: list[Any],
    where: str,
) -> bool:
    """Replay recorded appends; False when a deviation rule ended the comparison."""
    for index, (spec, expected) in enumerate(zip(appends, steps, strict=True)):
        call = append_call(spec)
        ours = run_append(session, call)
        expected_error = None if expected["ok"] else expected["error"]["message"]
        if ours.ok != expected["ok"] or (not ours.ok and ours.error != expected_error):
            rule = _deviation(call, expected_error, ours)
            if rule is None:
                comparison.fail(
                    f"{where}[{index}] {call.event_type}: agentlog "
                    f"{'accepted' if ours.ok else repr(ours.error)}, reference "
                    f"{'accepted' if expected['ok'] else repr(expected_error)}"
                )
            else:
                comparison.rules.add(rule)
            return False
        if ours.ok:
            comparison.check(f"{where}[{index}].eventSeq", ours.event_seq, expected["eventSeq"])
        view = step_view(session)
        for key, value in view.items():
            if key in expected:
                comparison.check(f"{where}[{index}].{key}", value, expected[key])
    return True


def replay_append(record: dict[str, Any]) -> Comparison:
    inp, exp = record["input"], record["expected"]
    comparison = Comparison(record["id"])
    session = Session.create(
        inp["session_id"], projections=projections_of(inp.get("projections")), clock=clock
    )
    if replay_steps(comparison, session, inp["appends"], exp["steps"], "steps"):
        comparison.check_state("final", session, exp["final"])
    return comparison


def replay_seed(record: dict[str, Any]) -> Comparison:
    inp, exp = record["input"], record["expected"]
    comparison = Comparison(record["id"])
    projections = projections_of(inp.get("projections"))
    seed = decode(inp["seed"])
    restore = inp["source"] == "restore"
    seed_fold = exp["seedFold"]
    if seed_fold.get("error", {}).get("name") == "TypeError":
        comparison.rules.add("T1")
        _check_refused(comparison, "seedFold", fold_view(seed, projections))
    else:
        comparison.check("seedFold", fold_view(seed, projections), seed_fold)
    header = decode(inp["header"]) if "header" in inp else None
    inherited = inp.get("inheritedEventCount", 0 if restore else None)
    try:
        session = Session.from_events(
            inp["session_id"],
            seed,
            header,
            inherited_event_count=inherited,
            restore=restore,
            projections=projections,
            clock=clock,
        )
    except Exception as exc:
        construct = exp["construct"]
        reference_error = None if construct["ok"] else construct["error"]["message"]
        spec_text = getattr(exc, "spec_text", str(exc))  # the catalogue text alone
        if spec_text == reference_error:
            return comparison
        if restore and spec_text.endswith("is not losslessly JSON-serializable"):
            comparison.rules.add("D3")
        elif has_big_integer(seed) and spec_text.endswith("is not losslessly JSON-serializable"):
            comparison.rules.add("D4")
        else:
            comparison.fail(f"construct: agentlog raised {exc!r}, reference {construct}")
        return comparison
    if not exp["construct"]["ok"]:
        if inp.get("header", 0) is None:
            comparison.rules.add("P1")
        else:
            comparison.fail(f"construct: agentlog accepted, reference {exp['construct']}")
        return comparison
    appends, steps = inp.get("appends", []), exp.get("steps", [])
    if replay_steps(comparison, session, appends, steps, "steps") and "final" in exp:
        comparison.check_state("final", session, exp["final"])
    return comparison


def replay_fork(record: dict[str, Any]) -> Comparison:
    inp, exp = record["input"], record["expected"]
    comparison = Comparison(record["id"])
    header: dict[str, Any] = {"version": 4, "id": inp["session_id"], "createdAt": clock()}
    if "cwd" in inp:
        header["cwd"] = inp["cwd"]
    header["isSeeded"] = False
    source = Session.create(
        inp["session_id"], header, projections=projections_of(inp.get("projections")), clock=clock
    )
    if not replay_steps(comparison, source, inp["appends"], exp["sourceSteps"], "sourceSteps"):
        return comparison
    comparison.check_state("source", source, exp["source"])
    boundary = decode(inp["boundary"]) if "boundary" in inp else None
    cut = source.seq - 1 if boundary is None else boundary
    if exp["buildForkSeed"] is None:
        if is_seq(cut) and cut < source.seq:
            comparison.fail(f"buildForkSeed: boundary {cut} exists, reference had none")
    elif is_seq(cut) and cut < source.seq:
        comparison.check(
            "buildForkSeed", thaw(build_fork_seed(source.events, int(cut))), exp["buildForkSeed"]
        )
    try:
        child = source.fork(boundary, inp["child_id"])
    except SessionForkError as exc:
        comparison.check(
            "fork",
            {"ok": False, "message": exc.spec_text, "code": exc.code},
            {
                "ok": False,
                "message": exp["fork"].get("error", {}).get("message"),
                "code": exp["fork"].get("error", {}).get("code"),
            },
        )
        return comparison
    comparison.check("fork.ok", True, exp["fork"]["ok"])
    if not exp["fork"]["ok"]:
        return comparison
    if replay_steps(
        comparison, child, inp.get("childAppends", []), exp.get("childSteps", []), "childSteps"
    ):
        comparison.check_state("child", child, exp["child"])
    if inp.get("grandchild"):
        grandchild = child.fork(None, f"{child.id}-child")
        comparison.check("grandchild.ok", True, exp["grandchild"]["ok"])
        comparison.check_state("grandchild.state", grandchild, exp["grandchild"]["state"])
    comparison.check("source.unchanged", state_view(source)["events"], exp["source"]["events"])
    return comparison


def replay_fold(record: dict[str, Any]) -> Comparison:
    inp, exp = record["input"], record["expected"]
    comparison = Comparison(record["id"])
    events = decode(inp["events"])
    comparison.check("fold", fold_view(events, projections_of(inp.get("projections"))), exp["fold"])
    comparison.check(
        "interruptedTurnClosers",
        open_turn_closers(events, "interrupted"),
        exp["interruptedTurnClosers"],
    )
    comparison.check(
        "forkedTurnClosers", open_turn_closers(events, "forked"), exp["forkedTurnClosers"]
    )
    for index, (wire, expected) in enumerate(zip(events, exp["events"], strict=True)):
        try:
            check_markers(Event.from_wire(wire))
            ours: dict[str, Any] = {"ok": True}
        except NotLosslessJson as exc:
            if expected["snapshot"]["ok"] or expected["adopt"]["ok"]:
                comparison.fail(
                    f"events[{index}]: agentlog refused a value the reference kept: {exc}"
                )
            comparison.rules.add("D5")
            continue
        except Exception as exc:
            ours = {"ok": False, "message": getattr(exc, "spec_text", str(exc))}
        for path in ("snapshot", "adopt"):
            reference = expected[path]
            comparison.check(
                f"events[{index}].{path}",
                ours,
                {"ok": True}
                if reference["ok"]
                else {"ok": False, "message": reference["error"]["message"]},
            )
    return comparison


REPLAY = {"append": replay_append, "seed": replay_seed, "fork": replay_fork, "fold": replay_fold}


@cache
def replay_all() -> dict[str, Comparison]:
    """Every case replayed once; the parametrized tests and the deviation audit share it."""
    return {r["id"]: REPLAY[r["input"]["mode"]](r) for r in load_vectors("f4")}


@pytest.mark.parametrize("case", [r["id"] for r in load_vectors("f4")])
def test_reference_case(case: str) -> None:
    comparison = replay_all()[case]
    assert not comparison.differences, "\n".join(comparison.differences)


def test_deviation_rules_touch_exactly_the_listed_cases() -> None:
    """Each deviation rule of deviations.json applied to exactly the cases it lists."""
    applied: dict[str, set[str]] = {}
    for comparison in replay_all().values():
        for rule in comparison.rules:
            applied.setdefault(rule, set()).add(comparison.case)
    listed = {rule: set(spec["cases"]) for rule, spec in DEVIATIONS["f4"].items()}
    assert applied == {rule: cases for rule, cases in listed.items() if cases}
