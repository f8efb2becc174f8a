"""Renumbering a log: every same-log reference follows its event (spec/persistence.md §5.4)."""

from __future__ import annotations

from typing import Any

import pytest

from agentlog.formats import Refusal
from agentlog.formats.references import Renumbering


def table() -> Renumbering:
    """Old seqs 0..5 where 2 was dropped and one event was inserted before old 4."""
    renumbering = Renumbering("s1")
    renumbering.keep(0, 0)
    renumbering.keep(1, 1)
    renumbering.drop(2, "was folded away")
    renumbering.keep(3, 2)
    renumbering.inserted(3)
    renumbering.keep(4, 4)
    renumbering.keep(5, 5)
    return renumbering


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (
            {"type": "user/message", "seq": 4, "sourceEventSeqs": [0, 3], "surfaceOp": "append"},
            {"type": "user/message", "seq": 4, "sourceEventSeqs": [0, 2], "surfaceOp": "append"},
        ),
        (
            {
                "type": "user/message",
                "seq": 5,
                "surfaceOp": {"op": "replace", "start": 1, "end": 3},
            },
            {
                "type": "user/message",
                "seq": 5,
                "surfaceOp": {"op": "replace", "start": 1, "end": 2},
            },
        ),
        (
            {"type": "x", "seq": 5, "surfaceOp": {"op": "replace", "startSeq": 3, "endSeq": 4}},
            {"type": "x", "seq": 5, "surfaceOp": {"op": "replace", "startSeq": 2, "endSeq": 4}},
        ),
        (
            {"type": "command/done", "seq": 4, "data": {"sourceEventSeq": 3, "kind": "ok"}},
            {"type": "command/done", "seq": 4, "data": {"sourceEventSeq": 2, "kind": "ok"}},
        ),
        (
            {
                "type": "compaction/summary",
                "seq": 4,
                "data": {"shadowedRange": {"start": 1, "end": 3}, "shadowedSeqs": [1, 3]},
            },
            {
                "type": "compaction/summary",
                "seq": 4,
                "data": {"shadowedRange": {"start": 1, "end": 2}, "shadowedSeqs": [1, 2]},
            },
        ),
        (
            {"type": "session/title", "seq": 4, "data": {"messageSeqs": [3]}},
            {"type": "session/title", "seq": 4, "data": {"messageSeqs": [2]}},
        ),
        (
            {"type": "session/title-llm-request", "seq": 4, "data": {"messageSeqs": [0, 3]}},
            {"type": "session/title-llm-request", "seq": 4, "data": {"messageSeqs": [0, 2]}},
        ),
        (
            {"type": "developer/message", "seq": 5, "data": {"headerSeq": 3}},
            {"type": "developer/message", "seq": 5, "data": {"headerSeq": 2}},
        ),
    ],
    ids=[
        "sources",
        "replace-start-end",
        "replace-startSeq-endSeq",
        "command-done",
        "compaction",
        "title",
        "title-request",
        "header-seq",
    ],
)
def test_every_declared_reference_is_remapped(
    event: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert table().event(event, event["seq"]) == expected


def test_an_event_without_changes_is_passed_on_as_it_is() -> None:
    event = {"type": "turn/start", "seq": 1, "data": {"turn": 1}}
    assert table().event(event, 1) is event
    moved = table().event({"type": "turn/end", "seq": 3, "data": {"turn": 1}}, 2)
    assert moved == {"type": "turn/end", "seq": 2, "data": {"turn": 1}}


def test_a_reference_to_a_dropped_event_is_a_refusal() -> None:
    with pytest.raises(Refusal) as refused:
        table().event({"type": "user/message", "seq": 4, "sourceEventSeqs": [2]}, 4)
    assert str(refused.value) == (
        'session "s1" event at seq 4 refers to seq 2, which was folded away'
    )


def test_references_outside_the_table_keep_their_distance_past_its_end() -> None:
    # A forward or out-of-log reference stays invalid after renumbering, whatever grew.
    renumbering = table()
    assert renumbering.seq(9, referrer=5) == 9  # six old, six new: no growth
    renumbering.inserted(6)
    assert renumbering.seq(9, referrer=5) == 10
    assert renumbering.seq("2", referrer=5) == "2"  # left for validation to refuse
