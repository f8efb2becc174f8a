"""``surface_of_markers``: the surface a trusted log's markers give, equal to the full fold."""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import Session
from agentlog import messages as m
from agentlog.adapters._marker_surface import surface_of_markers


def _replace(start: int, end: int) -> dict[str, Any]:
    return {"op": "replace", "startSeq": start, "endSeq": end}


def test_the_markers_give_the_nodes_a_session_folds() -> None:
    session = Session.create("s")
    for index in range(6):
        session.append("user/message", m.user(f"u{index}", id=f"u{index}"), surface_op="append")
    session.append("turn/start", {"turn": 1})
    session.append(
        "user/message",
        m.user("summary", id="s1"),
        surface_op=_replace(1, 3),
        source_event_seqs=[1, 2, 3],
    )
    session.append(
        "user/message",
        m.user("again", id="s2"),
        surface_op=_replace(0, 7),
        source_event_seqs=[0, 7],
    )
    wire = [event.to_wire() for event in session.events]
    nodes = surface_of_markers(wire)
    assert nodes is not None
    assert [node["seq"] for node in nodes] == list(session.surface.nodes) == [8, 4, 5]
    assert nodes[0] is wire[8]  # the caller's dicts, not copies


@pytest.mark.parametrize(
    "marker",
    [
        "prepend",
        {"op": "replace", "startSeq": 0},
        {"op": "remove", "startSeq": 0, "endSeq": 0},
        _replace(0, True),
        _replace(5, 5),  # not a node
        _replace(1, 0),  # reversed span
    ],
)
def test_a_marker_no_append_accepts_gives_up(marker: Any) -> None:
    events = [
        {"seq": 0, "surfaceOp": "append"},
        {"seq": 1, "surfaceOp": "append"},
        {"seq": 2, "surfaceOp": marker},
    ]
    assert surface_of_markers(events) is None
