"""``fold_surface``: replaying a log (or a window of one) through the surface rules.

Covers spec/core.md §5.8: the pure, from-scratch fold returns the nodes, one replacement record
per replace (field names ``start``/``end`` as in the reference), the projected messages and
both generations; it raises the same errors as live acceptance, plus contiguity (E6) which a
live session cannot violate; a window starting at ``base_seq`` resolves seqs relative to it and
cannot reach before it. Fold results are immutable. §15 scenarios 16, 24, 32, 50.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentlog import EventRejected, FoldResult, Replacement, SeedRejected, Session, fold_surface
from tests.session.support import (
    TR,
    U,
    begin,
    call,
    clock,
    new_session,
    raises_exactly,
    rep,
    thaw_events,
    wire,
)


def appended(seq: int, text: str) -> dict[str, Any]:
    return wire("user/message", seq, U(text), surfaceOp="append")


def replacing(seq: int, start: int, end: int, cites: list[int], text: str) -> dict[str, Any]:
    return wire("user/message", seq, U(text), surfaceOp=rep(start, end), sourceEventSeqs=cites)


def test_an_empty_log_folds_to_an_empty_surface() -> None:
    result = fold_surface([])
    assert result == FoldResult(
        nodes=(),
        replacements=(),
        projected_messages=(),
        replace_generation=0,
        content_generation=0,
    )


def test_nested_replacements_are_recorded_in_log_order() -> None:
    """§15 scenario 24."""
    events = [
        appended(0, "a"),
        appended(1, "b"),
        replacing(2, 0, 0, [0], "a2"),
        replacing(3, 2, 1, [2, 1], "all"),
    ]
    result = fold_surface(events)
    assert result.nodes == (3,)
    assert [r.to_wire() for r in result.replacements] == [
        {"seq": 2, "start": 0, "end": 0, "shadowedSeqs": [0]},
        {"seq": 3, "start": 2, "end": 1, "shadowedSeqs": [2, 1]},
    ]
    assert result.replacements[1] == Replacement(seq=3, start=2, end=1, shadowed_seqs=(2, 1))
    assert (result.replace_generation, result.content_generation) == (2, 2)


def test_a_fold_result_cannot_be_mutated() -> None:
    """§15 scenario 24: mutating what a fold returned affects neither a session nor a new fold."""
    events = [appended(0, "a"), replacing(1, 0, 0, [0], "b")]
    result = fold_surface(events)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.nodes = ()  # type: ignore[misc]  # the point: it is frozen
    with pytest.raises(TypeError):
        result.replacements[0].shadowed_seqs[0] = 9  # type: ignore[index]  # a tuple
    record = result.replacements[0].to_wire()
    record["shadowedSeqs"].append(9)
    assert result.replacements[0].to_wire()["shadowedSeqs"] == [0]
    assert fold_surface(events) == result


def test_a_fold_matches_the_live_session_it_replays() -> None:
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    begin(session)
    call(session, "c1")
    session.append("tool/result", TR("c1", "x"), surface_op="append")
    session.append("user/message", U("s"), surface_op=rep(0, 4), source_event_seqs=[0, 4])
    result = fold_surface(session.events)
    assert result.nodes == session.surface.nodes == (5,)
    assert result.replace_generation == session.surface.replace_generation
    assert fold_surface(thaw_events(session.events)) == result


def test_a_fold_reads_any_iterable_of_events() -> None:
    events = [appended(0, "a"), appended(1, "b")]
    assert fold_surface(iter(events)).nodes == (0, 1)
    assert fold_surface(event for event in events).nodes == (0, 1)


def test_a_seq_gap_is_not_contiguous() -> None:
    """E6."""
    with raises_exactly(EventRejected, "session event seq 5 is not contiguous; expected 1"):
        fold_surface([appended(0, "a"), appended(5, "b")])
    with raises_exactly(EventRejected, "session event seq 1 is not contiguous; expected 0"):
        fold_surface([appended(1, "a")])


def test_a_fold_refuses_markers_on_a_log_only_event() -> None:
    """§15 scenario 16 (E8)."""
    with raises_exactly(
        EventRejected,
        'session event "turn/start" is not surface-eligible and cannot carry sourceEventSeqs',
    ):
        fold_surface([appended(0, "a"), wire("turn/start", 1, {"turn": 1}, sourceEventSeqs=[0])])


@pytest.mark.parametrize(
    ("events", "text"),
    [
        (
            [wire("user/message", 0, U("a"))],
            'session event "user/message" is surface-eligible and requires a surfaceOp marker',
        ),
        (
            [appended(0, "a"), wire("user/message", 1, U("b"), surfaceOp="nope")],
            'session event "user/message" carries an invalid surfaceOp',
        ),
        (
            [appended(0, "a"), replacing(1, 0, 0, [], "b")],
            "sourceEventSeqs must not be empty",
        ),
        (
            [appended(0, "a"), replacing(1, 0, 1, [0], "b")],
            "surface replace at seq 1: startSeq and endSeq must reference earlier events",
        ),
        (
            [appended(0, "a"), appended(1, "b"), replacing(2, 1, 0, [1, 0], "c")],
            "surface replace: start seq 1 (index 1) is after end seq 0 (index 0)",
        ),
        (
            [appended(0, "a"), appended(1, "b"), replacing(2, 0, 1, [1], "c")],
            "surface replace: sourceEventSeqs must include every shadowed surface node; missing 0",
        ),
        (
            [
                wire("tool/result", 0, TR("c1", "x"), surfaceOp="append"),
                wire(
                    "tool/result",
                    1,
                    TR("c1", "y", err=True),
                    surfaceOp=rep(0, 0),
                    sourceEventSeqs=[0],
                ),
            ],
            "tool/result surface replacement may change only content",
        ),
    ],
)
def test_a_fold_raises_the_errors_of_live_acceptance(
    events: list[dict[str, Any]], text: str
) -> None:
    with raises_exactly(EventRejected, text):
        fold_surface(events)


def test_a_fold_runs_the_data_rules_with_its_own_subject() -> None:
    """Data rules (E49–E58) of surface events, subject ``<type> at seq <n>``."""
    bad = wire("user/message", 0, {**U("a"), "role": "developer"}, surfaceOp="append")
    with raises_exactly(
        EventRejected,
        "user/message at seq 0 developer/message and developer role must occur together",
    ):
        fold_surface([bad])


def test_a_fold_skips_the_seed_shape_checks() -> None:
    """A fold replays what a log holds; message identity is a seed/append concern."""
    anonymous = wire("user/message", 0, {"content": []}, surfaceOp="append")
    assert fold_surface([anonymous]).nodes == (0,)


@pytest.mark.parametrize("entry", [None, "event", {"seq": 0}, {"type": "turn/start"}])
def test_a_fold_refuses_an_entry_that_is_not_an_event(entry: Any) -> None:
    with raises_exactly(EventRejected, "event at index 0 has an invalid event envelope"):
        fold_surface([entry])


def test_a_start_missing_from_the_surface_fails_the_same_in_fold_and_seed() -> None:
    """§15 scenario 50, format 4: 42 must be an earlier seq to reach the surface lookup."""
    events = [appended(0, "a")]
    events += [wire("plugin/event", seq, None) for seq in range(1, 43)]
    events.append(replacing(43, 42, 0, [0], "s"))
    text = "surface replace: start seq 42 not found in surface"
    with raises_exactly(EventRejected, text):
        fold_surface(events)
    with raises_exactly(SeedRejected, f"invalid seed event at index 43: {text}"):
        Session.from_events("s", events, clock=clock)


# --- windows -----------------------------------------------------------------------------


def test_a_window_fold_resolves_seqs_from_its_base() -> None:
    """§15 scenario 32: the tool-result guard finds the original inside the window."""
    original = TR("c1", "original")
    pruned = TR("c1", "[pruned]")
    window = [
        wire("tool/result", 400000, original, surfaceOp="append"),
        wire(
            "tool/result", 400001, pruned, surfaceOp=rep(400000, 400000), sourceEventSeqs=[400000]
        ),
    ]
    result = fold_surface(window, base_seq=400000)
    assert result.nodes == (400001,)
    assert result.replacements[0].to_wire() == {
        "seq": 400001,
        "start": 400000,
        "end": 400000,
        "shadowedSeqs": [400000],
    }


def test_a_window_fold_cannot_reach_before_its_base() -> None:
    """§15 scenario 32 (E19)."""
    window = [
        wire("tool/result", 400000, TR("c1", "x"), surfaceOp="append"),
        wire(
            "tool/result",
            400001,
            TR("c1", "y"),
            surfaceOp=rep(399999, 399999),
            sourceEventSeqs=[399999],
        ),
    ]
    with raises_exactly(EventRejected, "surface replace: start seq 399999 not found in surface"):
        fold_surface(window, base_seq=400000)


def test_a_window_must_start_at_its_base() -> None:
    with raises_exactly(EventRejected, "session event seq 0 is not contiguous; expected 7"):
        fold_surface([appended(0, "a")], base_seq=7)


def test_a_window_resolves_a_developer_header_binding_inside_it() -> None:
    header = {
        "header": {
            "config": {"provider": "p", "model": "m"},
            "tools": [{"name": "t", "description": "d", "parameters": {}}],
        },
        "reason": "initial",
    }
    developer = {
        "turn": 1,
        "step": 1,
        "message": {
            "id": "d",
            "role": "developer",
            "content": [{"type": "tool-addition", "toolName": "t"}],
            "source": {"kind": "tool-registry"},
        },
        "headerSeq": 10,
    }
    window = [
        wire("request/header", 10, header),
        wire("developer/message", 11, developer, surfaceOp="append"),
    ]
    assert fold_surface(window, base_seq=10).nodes == (11,)
    before_window = {**developer, "headerSeq": 9}
    with raises_exactly(
        EventRejected, "developer/message headerSeq must reference an earlier request/header"
    ):
        fold_surface(
            [window[0], wire("developer/message", 11, before_window, surfaceOp="append")],
            base_seq=10,
        )
