"""``expand``: what a replacement hid, followed back to the original events.

A replacement keeps the events it shadows in the log; ``agentlog.expand(session, seq)`` lists
them in surface order, and expands a shadowed node that was itself a replacement in turn, so a
summary of a summary (or of a pruned tool result) leads back to what was first logged. The
compaction-like replaces here are ``user/message`` events that replace a span and cite every
node in it, as a checkpoint does.
"""

from __future__ import annotations

import pytest

from agentlog import Event, Session, expand
from agentlog import messages as m
from agentlog.plugins.pruner import PruneConfig, prune_tool_results
from tests.plugins.agent import Agent

SMALL = PruneConfig(threshold_chars=60, head_chars=5, tail_chars=5)


def two_turns() -> Agent:
    """Turn 1 runs a tool, turn 2 is a plain exchange, turn 3 is open with its prompt."""
    agent = Agent()
    agent.exchange("List the files", "There are two files.", tool_output="README.md\nsetup.py")
    agent.exchange("Read the README", "It describes the project.")
    agent.start_turn("Now summarise it")
    return agent


def summarize(session: Session, start: int, end: int, text: str) -> Event:
    """Replace the surface span from ``start`` to ``end`` by a summary citing all of it."""
    nodes = session.surface.nodes
    span = nodes[nodes.index(start) : nodes.index(end) + 1]
    return session.append(
        "user/message",
        m.user(text),
        surface_op={"op": "replace", "startSeq": start, "endSeq": end},
        source_event_seqs=list(span),
    )


def test_a_replacement_expands_to_the_events_it_shadowed() -> None:
    session = two_turns().session
    nodes = session.surface.nodes
    first_turn = nodes[:4]  # prompt, tool call, tool result, answer

    summary = summarize(session, first_turn[0], first_turn[-1], "Listed two files.")

    assert [event.type for event in expand(session, summary.seq)] == [
        "user/message",
        "assistant/message",
        "tool/result",
        "assistant/message",
    ]
    assert expand(session, summary.seq) == [session.event_at(seq) for seq in first_turn]
    assert session.surface.nodes == (summary.seq, *nodes[4:])


def test_expansion_goes_through_earlier_replacements() -> None:
    """A summary over an earlier summary expands to the originals of both, never to it."""
    session = two_turns().session
    nodes = session.surface.nodes
    first = summarize(session, nodes[0], nodes[3], "Listed two files.")
    second = summarize(session, first.seq, nodes[5], "Listed and read the files.")

    expanded = expand(session, second.seq)

    assert expanded == [session.event_at(seq) for seq in nodes[:6]]
    assert first not in expanded
    assert session.surface.nodes == (second.seq, nodes[6])


def test_a_replacement_in_the_middle_of_a_span_expands_in_place() -> None:
    """Surface order, not seq order: the earlier summary sits between older nodes."""
    session = two_turns().session
    nodes = session.surface.nodes
    middle = summarize(session, nodes[1], nodes[2], "Ran ls: two files.")
    outer = summarize(session, nodes[0], nodes[4], "Listed the files, asked for the README.")

    assert expand(session, outer.seq) == [session.event_at(seq) for seq in nodes[:5]]
    assert expand(session, middle.seq) == [session.event_at(seq) for seq in nodes[1:3]]


def test_a_pruned_result_expands_to_the_original_output() -> None:
    agent = Agent()
    agent.start_turn("Build it")
    agent.start_step()
    (seq,) = agent.reply(calls=[("bash", "log line\n" * 20)])
    agent.end_step()
    session = agent.session

    (pruned,) = prune_tool_results(session, SMALL).pruned

    assert expand(session, pruned.replacement_seq) == [session.event_at(seq)]


def test_a_summary_over_a_pruned_result_expands_to_the_original_output() -> None:
    agent = two_turns()
    session = agent.session
    agent.start_step()
    (seq,) = agent.reply(calls=[("bash", "log line\n" * 20)])
    agent.end_step()
    (pruned,) = prune_tool_results(session, SMALL).pruned
    nodes = session.surface.nodes

    summary = summarize(session, nodes[0], pruned.replacement_seq, "Everything so far.")

    expanded = expand(session, summary.seq)
    assert session.event_at(seq) in expanded
    assert session.event_at(pruned.replacement_seq) not in expanded
    assert [event.seq for event in expanded] == [*nodes[:-1], seq]


def test_an_event_that_replaced_nothing_expands_to_nothing() -> None:
    session = two_turns().session
    prompt = session.surface.nodes[0]

    assert expand(session, prompt) == []
    assert expand(session, 0) == []  # turn/start: a log-only event
    summary = summarize(session, prompt, prompt, "Asked for the files.")
    assert expand(session, prompt) == []  # shadowed now, but it replaced nothing itself
    assert expand(session, summary.seq) == [session.event_at(prompt)]


@pytest.mark.parametrize("seq", [-1, 99])
def test_a_seq_outside_the_log_raises_index_error(seq: int) -> None:
    session = two_turns().session

    with pytest.raises(IndexError) as caught:
        expand(session, seq)

    assert str(caught.value) == f"session 'agent' has no event at seq {seq}"
