"""The compaction invariant companion (spec/plugins.md §2.3): brackets checked at append."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentlog import InvariantError, Session, compact
from agentlog.plugins import install_compaction_invariants
from tests.plugins.agent import Agent
from tests.plugins.compaction.summarizers import Scripted

LONG = "lorem ipsum dolor sit amet " * 40


def guarded(turns: int = 2) -> Agent:
    agent = Agent()
    for turn in range(turns):
        agent.exchange(f"task {turn} {LONG}", f"answer {turn} {LONG}", tool_output=LONG)
    install_compaction_invariants(agent.session)
    return agent


def refused(session: Session, event_type: str, data: Any, **envelope: Any) -> str:
    count = len(session.events)
    with pytest.raises(InvariantError) as caught:
        session.append(event_type, data, **envelope)
    assert len(session.events) == count
    return str(caught.value)


def start(session: Session, compaction_id: str = "k1", turn: Any = None) -> None:
    session.append("compaction/start", {"compactionId": compaction_id, "turn": turn})


def shadow(session: Session, first: int, last: int) -> dict[str, Any]:
    nodes = list(session.surface.nodes)
    seqs = nodes[nodes.index(first) : nodes.index(last) + 1]
    return {"shadowedRange": {"start": seqs[0], "end": seqs[-1]}, "shadowedSeqs": seqs}


def summary(session: Session, first: int, last: int, compaction_id: str = "k1") -> dict[str, Any]:
    return {
        "compactionId": compaction_id,
        "summary": [{"type": "text", "text": "s"}],
        **shadow(session, first, last),
        "shadowedTokenCount": 10,
        "provider": "p",
        "model": "m",
    }


def test_a_real_compaction_satisfies_the_companion() -> None:
    agent = guarded()
    assert asyncio.run(compact(agent.session, Scripted())) is not None
    agent.exchange("after", "fine")


def test_turns_cannot_cross_an_open_bracket() -> None:
    agent = guarded()
    session = agent.session
    start(session)
    assert refused(session, "turn/start", {"turn": 3}) == (
        "turn/start cannot cross an open standalone compaction"
    )
    session.append("compaction/end", {"compactionId": "k1", "turn": None, "error": "gave up"})
    agent.start_turn("next")
    start(session, "k2", 3)
    assert refused(session, "turn/end", {"turn": 3, "reason": {"kind": "completed"}}) == (
        "turn/end cannot cross an open compaction for turn 3"
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"compactionId": "", "turn": None},
            "compaction/start compactionId must be a non-empty string",
        ),
        (
            {"compactionId": 7, "turn": None},
            "compaction/start compactionId must be a non-empty string",
        ),
        (
            {"compactionId": "k", "sourceCommandId": "", "turn": None},
            "compaction/start sourceCommandId must be a non-empty string",
        ),
        (
            {"compactionId": "k", "turn": 3},
            "compaction/start for turn 3 appended outside any open turn",
        ),
    ],
)
def test_a_start_needs_an_id_and_a_real_owner(data: dict[str, Any], message: str) -> None:
    assert refused(guarded().session, "compaction/start", data) == message


def test_owners_follow_the_open_turn_and_brackets_do_not_nest() -> None:
    agent = guarded()
    session = agent.session
    agent.start_turn("next")
    assert refused(session, "compaction/start", {"compactionId": "k", "turn": None}) == (
        "compaction/start is standalone but turn 3 is open"
    )
    assert refused(session, "compaction/start", {"compactionId": "k", "turn": 2}) == (
        "compaction/start names turn 2 but open turn is 3"
    )
    start(session, "k", 3)
    assert refused(session, "compaction/start", {"compactionId": "k2", "turn": 3}) == (
        "compaction/start while turn 3 is still compacting"
    )


def test_a_summary_belongs_to_the_open_bracket_once() -> None:
    agent = guarded()
    session = agent.session
    nodes = session.surface.nodes
    assert refused(session, "compaction/summary", summary(session, nodes[0], nodes[3])) == (
        "compaction/summary has no matching compaction/start"
    )
    start(session)
    assert refused(
        session, "compaction/summary", summary(session, nodes[0], nodes[3], "other")
    ) == ("compaction/summary id other does not match compaction/start id k1")
    assert refused(
        session,
        "compaction/summary",
        {**summary(session, nodes[0], nodes[3]), "shadowedTokenCount": -1},
    ) == ("compaction/summary shadowedTokenCount must be a non-negative safe integer")
    session.append("compaction/summary", summary(session, nodes[0], nodes[3]))
    assert refused(session, "compaction/summary", summary(session, nodes[0], nodes[3])) == (
        "compaction/summary repeated within one compaction"
    )


@pytest.mark.parametrize("event_type", ["compaction/summary", "compaction/prune"])
def test_a_shadow_price_names_exactly_a_current_surface_span(event_type: str) -> None:
    agent = guarded()
    session = agent.session
    nodes = session.surface.nodes
    if event_type == "compaction/summary":
        start(session)
    base = (
        summary(session, nodes[0], nodes[3])
        if event_type == "compaction/summary"
        else shadow(session, nodes[0], nodes[3])
    )
    if event_type == "compaction/prune":
        base["shadowedTokenCount"] = 5
    cases: list[tuple[dict[str, Any], str]] = [
        ({"shadowedSeqs": []}, "shadowedSeqs must not be empty"),
        (
            {"shadowedRange": {"start": nodes[0], "end": nodes[2]}},
            "shadowedRange must match the first and last shadowedSeqs",
        ),
        (
            {"shadowedSeqs": [9999], "shadowedRange": {"start": 9999, "end": 9999}},
            "shadowed seqs must name an earlier current surface span",
        ),
        (
            {
                "shadowedSeqs": [nodes[0], nodes[3]],
                "shadowedRange": {"start": nodes[0], "end": nodes[3]},
            },
            "shadowedSeqs must list every node in the current surface span",
        ),
    ]
    for change, message in cases:
        assert refused(session, event_type, {**base, **change}) == f"{event_type} {message}"


def test_an_end_closes_the_open_bracket_and_a_success_needs_its_summary() -> None:
    agent = guarded()
    session = agent.session
    assert refused(session, "compaction/end", {"compactionId": "k1", "turn": None}) == (
        "compaction/end has no matching compaction/start"
    )
    start(session)
    assert refused(session, "compaction/end", {"compactionId": "k1", "turn": None}) == (
        "successful compaction/end requires one compaction/summary"
    )
    assert refused(session, "compaction/end", {"compactionId": "k1", "turn": 3, "error": "x"}) == (
        "compaction/end owner 3 does not match compaction/start owner null"
    )
    session.append("compaction/end", {"compactionId": "k1", "turn": None, "error": "x"})


def test_a_checkpoint_names_its_bracket() -> None:
    agent = guarded()
    session = agent.session
    checkpoint = {
        "id": "cp",
        "role": "user",
        "content": [{"type": "text", "text": "s"}],
        "source": {"kind": "compact-checkpoint", "compactionId": "k1"},
    }
    assert refused(session, "user/message", checkpoint, surface_op="append") == (
        "compaction checkpoint has no matching compaction/start"
    )
    start(session, "k2")
    assert refused(session, "user/message", checkpoint, surface_op="append") == (
        "compaction checkpoint id k1 does not match compaction/start id k2"
    )


def test_a_bracket_a_crash_left_open_is_cleared_by_the_resume_marker() -> None:
    agent = guarded()
    session = agent.session
    start(session, "crashed")
    resumed = Session.from_events(
        "agent", [e.to_wire() for e in session.events], session.header, restore=True
    )
    install_compaction_invariants(resumed)  # replays the stale bracket without complaint
    resumed.append("turn/start", {"turn": 3})  # the end-seed marker released it
    resumed.append("turn/end", {"turn": 3, "reason": {"kind": "completed"}})
