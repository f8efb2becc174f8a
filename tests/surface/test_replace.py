"""Replace semantics: shadowing a range of surface nodes with one new event.

Covers spec/core.md §5.1 and §5.4 step 6 (format 4): endpoints must be earlier seqs (E18),
current nodes (E19, E20) found by surface position, in order (E21); the replacement must cite
every node it shadows (E22); the new seq takes the place of the range, shadowed events stay in
the log, ``replace_generation`` and ``content_generation`` count replaces. §15 scenarios 17–27.
"""

from __future__ import annotations

from agentlog import Session
from agentlog import messages as m
from tests.session.support import (
    TR,
    A,
    S,
    U,
    assert_append_rejected,
    begin,
    call,
    new_session,
    rep,
    texts,
)


def three_messages() -> Session:
    """U(a)@0, U(b)@1, U(c)@2."""
    session = new_session()
    for text in "abc":
        session.append("user/message", U(text), surface_op="append")
    return session


def test_a_replace_shadows_a_range_and_takes_its_place() -> None:
    """§15 scenario 17."""
    session = three_messages()
    event = session.append(
        "user/message", U("summary"), surface_op=rep(0, 1), source_event_seqs=[0, 1]
    )
    assert event.seq == 3
    assert event.surface_op == {"op": "replace", "startSeq": 0, "endSeq": 1}
    assert session.surface.nodes == (3, 2)
    assert session.surface.replace_generation == 1
    assert session.surface.content_generation == 1
    assert texts(session.derive_messages()) == ["summary", "c"]


def test_shadowed_events_stay_in_the_log() -> None:
    session = three_messages()
    session.append("user/message", U("summary"), surface_op=rep(0, 1), source_event_seqs=[0, 1])
    assert [event.seq for event in session.events] == [0, 1, 2, 3]
    assert session.event_at(0).data["content"][0]["text"] == "a"


def test_a_single_node_replace_at_the_tail() -> None:
    """§15 scenario 18."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    session.append("user/message", U("b"), surface_op="append")
    session.append("user/message", U("b2"), surface_op=rep(1, 1), source_event_seqs=[1])
    assert session.surface.nodes == (0, 2)


def test_a_single_node_replace_in_the_middle_keeps_the_order_around_it() -> None:
    """§15 scenario 19."""
    session = three_messages()
    session.append("user/message", U("b2"), surface_op=rep(1, 1), source_event_seqs=[1])
    assert session.surface.nodes == (0, 3, 2)
    assert texts(session.derive_messages()) == ["a", "b2", "c"]


def test_extra_citations_are_allowed() -> None:
    session = three_messages()
    session.append("user/message", U("b2"), surface_op=rep(1, 1), source_event_seqs=[2, 1, 0])
    assert session.surface.nodes == (0, 3, 2)


def test_endpoints_must_be_earlier_than_the_replacing_event() -> None:
    """§15 scenarios 20–21 [F4] (E18): checked before the surface lookup."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    text = "surface replace at seq 1: startSeq and endSeq must reference earlier events"
    assert_append_rejected(
        session, text, "user/message", U("x"), surface_op=rep(5, 0), source_event_seqs=[0]
    )
    assert_append_rejected(
        session, text, "user/message", U("x"), surface_op=rep(0, 99), source_event_seqs=[0]
    )
    assert_append_rejected(
        session, text, "user/message", U("x"), surface_op=rep(1, 1), source_event_seqs=[0]
    )


def test_a_start_that_is_not_a_node_is_not_found() -> None:
    """§15 scenario 20 [F4] (E19): a real earlier event that is not on the surface."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    session.append("turn/start", {"turn": 1})
    assert_append_rejected(
        session,
        "surface replace: start seq 1 not found in surface",
        "user/message",
        U("x"),
        surface_op=rep(1, 0),
        source_event_seqs=[0],
    )


def test_an_end_that_is_not_a_node_is_not_found() -> None:
    """E20."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    session.append("turn/start", {"turn": 1})
    assert_append_rejected(
        session,
        "surface replace: end seq 1 not found in surface",
        "user/message",
        U("x"),
        surface_op=rep(0, 1),
        source_event_seqs=[0],
    )


def test_the_start_must_not_come_after_the_end_on_the_surface() -> None:
    """§15 scenario 22 (E21)."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    session.append("user/message", U("b"), surface_op="append")
    assert_append_rejected(
        session,
        "surface replace: start seq 1 (index 1) is after end seq 0 (index 0)",
        "user/message",
        U("x"),
        surface_op=rep(1, 0),
        source_event_seqs=[1, 0],
    )


def test_a_replace_must_cite_every_shadowed_node() -> None:
    """§15 scenario 23 (E22)."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    session.append("user/message", U("b"), surface_op="append")
    assert_append_rejected(
        session,
        "surface replace: sourceEventSeqs must include every shadowed surface node; missing 1",
        "user/message",
        U("x"),
        surface_op=rep(0, 1),
        source_event_seqs=[0],
    )


def test_missing_citations_are_listed_in_surface_order() -> None:
    session = three_messages()
    session.append("user/message", U("c2"), surface_op=rep(2, 2), source_event_seqs=[2])
    session.append("user/message", U("a2"), surface_op=rep(0, 0), source_event_seqs=[0])
    assert session.surface.nodes == (4, 1, 3)
    assert_append_rejected(
        session,
        "surface replace: sourceEventSeqs must include every shadowed surface node; missing 4, 3",
        "user/message",
        U("x"),
        surface_op=rep(4, 3),
        source_event_seqs=[1],
    )


def test_endpoints_are_found_by_surface_position_not_numeric_order() -> None:
    """§15 scenario 24."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    session.append("user/message", U("b"), surface_op="append")
    session.append("user/message", U("a2"), surface_op=rep(0, 0), source_event_seqs=[0])
    before = session.surface.nodes
    assert before == (2, 1)
    session.append("user/message", U("all"), surface_op=rep(2, 1), source_event_seqs=[2, 1])
    assert session.surface.nodes == (3,)
    assert session.surface.replace_generation == 2


def test_a_shadowed_node_can_never_be_targeted_again() -> None:
    """§15 scenario 25 (E19)."""
    session = three_messages()
    session.append("user/message", U("summary"), surface_op=rep(0, 1), source_event_seqs=[0, 1])
    assert_append_rejected(
        session,
        "surface replace: start seq 0 not found in surface",
        "user/message",
        U("x"),
        surface_op=rep(0, 2),
        source_event_seqs=[0, 2],
    )


def test_a_rejected_replace_changes_nothing_and_the_next_append_reuses_its_seq() -> None:
    """§15 scenario 26: an uncited replacement, refused atomically."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    nodes = session.surface.nodes
    text = "surface replace: sourceEventSeqs must include every shadowed surface node; missing 0"
    assert_append_rejected(session, text, "assistant/message", A("x"), surface_op=rep(0, 0))
    assert_append_rejected(session, text, "user/message", U("x"), surface_op=rep(0, 0))
    assert session.surface.nodes is nodes
    assert session.surface.replace_generation == 0
    event = session.append("user/message", U("b"), surface_op="append")
    assert event.seq == 1
    assert session.surface.nodes == (0, 1)


def test_generations_are_current_whichever_is_read_first() -> None:
    """§15 scenario 27."""
    session = three_messages()
    assert session.surface.replace_generation == 0
    assert session.surface.content_generation == 0
    before = session.surface.nodes
    assert before == (0, 1, 2)
    session.append("user/message", U("s"), surface_op=rep(1, 2), source_event_seqs=[1, 2])
    assert session.surface.replace_generation == 1
    assert session.surface.nodes == (0, 3)


def test_every_citing_surface_type_may_replace() -> None:
    """System, developer, user and tool events may be replacements (the guards aside)."""
    session = new_session()
    begin(session)
    session.append("user/message", U("a"), surface_op="append")
    session.append("user/message", U("b"), surface_op="append")
    call(session, "c1")
    session.append("tool/result", TR("c1", "x"), surface_op="append")
    session.append("system/message", S(""), surface_op=rep(2, 2), source_event_seqs=[2])
    session.append(
        "developer/message",
        m.developer(turn=1, step=1, removals=["bash"]),
        surface_op=rep(3, 3),
        source_event_seqs=[3],
    )
    session.append("tool/result", TR("c1", "y"), surface_op=rep(5, 5), source_event_seqs=[5])
    session.append("user/message", U("z"), surface_op=rep(7, 8), source_event_seqs=[7, 8])
    assert session.surface.nodes == (6, 9)
    assert session.surface.replace_generation == 4
