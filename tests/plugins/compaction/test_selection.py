"""Which span a compaction replaces (spec/plugins.md §2.8; scenarios 6 and 7).

Sessions come from the scripted ``Agent``; with eight-character texts every message — prompt,
answer, tool call, tool result — costs 10 tokens, so a ``retain_tokens`` budget reads as a
number of newest nodes. The span always starts at the head (after a system prompt there) and
ends at a cut that splits no tool call from its result.
"""

from __future__ import annotations

import pytest

from agentlog import messages as m
from agentlog import tool_pairing_balanced_before
from agentlog.errors import TokenMeterError
from agentlog.plugins.compaction import select_compactable_range
from agentlog.plugins.meter import TokenMeter
from tests.plugins.agent import Agent

MISMATCH = "compaction: token-meter surface does not match the current session surface"


def select(agent: Agent, retain_tokens: int) -> tuple[int, int] | None:
    """The span a compaction of the agent's session would take now."""
    session = agent.session
    return select_compactable_range(session, TokenMeter().measure(session), retain_tokens)


def two_turns() -> Agent:
    """Surface ``[prompt, answer, prompt, call, result, answer]``, 10 tokens each."""
    agent = Agent()
    agent.exchange("fix bugs", "all done")
    agent.exchange("run test", "test ok!", tool_output="passed!!")
    return agent


def with_system_prompt() -> Agent:
    """Turn 1 open in step 1, with the system prompt as surface node 0."""
    agent = Agent()
    agent.turn = 1
    agent.session.append("turn/start", {"turn": 1})
    agent.start_step()
    agent.session.append(
        "system/message", m.system("be brief", turn=1, step=1), surface_op="append"
    )
    return agent


# --- the span ------------------------------------------------------------------------------


def test_with_nothing_to_retain_all_but_the_newest_node_goes() -> None:
    agent = two_turns()
    nodes = agent.session.surface.nodes
    assert select(agent, 0) == (nodes[0], nodes[-2])


@pytest.mark.parametrize(("retain_tokens", "kept"), [(1, 1), (10, 1), (11, 2), (30, 3), (31, 4)])
def test_the_retained_tail_is_the_fewest_newest_nodes_that_meet_the_budget(
    retain_tokens: int, kept: int
) -> None:
    agent = Agent()
    for prompt in ("fix bugs", "run test", "lint it!"):
        agent.exchange(prompt, "all done")
    nodes = agent.session.surface.nodes
    assert select(agent, retain_tokens) == (nodes[0], nodes[-kept - 1])


def test_the_span_is_head_anchored_after_an_earlier_checkpoint() -> None:
    """A checkpoint at the head (a high seq before low ones) is summarised again."""
    agent = two_turns()
    session = agent.session
    first, second = session.surface.nodes[:2]
    checkpoint = session.append(
        "user/message",
        m.user("summary!"),
        surface_op={"op": "replace", "startSeq": first, "endSeq": second},
        source_event_seqs=[first, second],
    )
    nodes = session.surface.nodes
    assert nodes[0] == checkpoint.seq > nodes[1]
    assert select(agent, 0) == (checkpoint.seq, nodes[-2])


def test_a_budget_met_inside_a_tool_pair_moves_the_cut_head_ward() -> None:
    """Scenario 6: the tail would start at the result; it is extended to start at the call."""
    agent = Agent()
    agent.exchange("fix bugs", "all done")
    agent.start_turn("run test")
    agent.start_step()
    (result,) = agent.reply(calls=[("bash", "x" * 400)])  # 108 tokens
    agent.end_step()
    agent.start_step()
    agent.reply("test ok!")
    prompt, call = agent.session.surface.nodes[2:4]
    assert not tool_pairing_balanced_before(agent.session, result)

    assert select(agent, 100) == (agent.session.surface.nodes[0], prompt)
    assert tool_pairing_balanced_before(agent.session, call)


def test_every_result_of_a_step_stays_with_its_calls() -> None:
    agent = Agent()
    agent.start_turn("fix bugs")
    agent.start_step()
    first, second = agent.reply(calls=[("bash", "passed!!"), ("bash", "passed!!")])
    prompt = agent.session.surface.nodes[0]
    assert not tool_pairing_balanced_before(agent.session, second)
    assert not tool_pairing_balanced_before(agent.session, first)
    assert select(agent, 0) == (prompt, prompt)


# --- nothing to compact --------------------------------------------------------------------


def test_an_empty_surface_selects_nothing() -> None:
    agent = Agent()
    agent.session.append("turn/start", {"turn": 1})
    assert select(agent, 0) is None


def test_a_single_node_selects_nothing() -> None:
    """Scenario 7: the newest node is always kept."""
    agent = Agent()
    agent.start_turn("fix bugs")
    assert select(agent, 0) is None


def test_a_single_indivisible_unit_selects_nothing() -> None:
    """Scenario 7: a surface that is one tool call and its result cannot be cut."""
    agent = Agent()
    agent.turn = 1
    agent.session.append("turn/start", {"turn": 1})
    agent.start_step()
    agent.reply(calls=[("bash", "passed!!")])
    assert len(agent.session.surface.nodes) == 2
    assert select(agent, 0) is None


@pytest.mark.parametrize("retain_tokens", [60, 61, 10**6])
def test_a_budget_that_retains_everything_selects_nothing(retain_tokens: int) -> None:
    assert select(two_turns(), retain_tokens) is None


# --- the system prompt at the head ---------------------------------------------------------


def test_a_system_prompt_at_the_head_is_never_in_the_span() -> None:
    agent = with_system_prompt()
    agent.session.append("user/message", m.user("fix bugs"), surface_op="append")
    agent.reply("all done")
    agent.end_step()
    agent.end_turn()
    agent.exchange("run test", "test ok!")
    system, first_prompt, *_, last_prompt, _ = agent.session.surface.nodes
    assert agent.session.event_at(system).type == "system/message"
    assert select(agent, 0) == (first_prompt, last_prompt)
    assert select(agent, 40) is None  # everything after the system prompt is retained


def test_a_system_prompt_and_one_node_select_nothing() -> None:
    agent = with_system_prompt()
    agent.session.append("user/message", m.user("fix bugs"), surface_op="append")
    assert select(agent, 0) is None


def test_a_system_prompt_and_one_unit_select_nothing() -> None:
    agent = with_system_prompt()
    agent.reply(calls=[("bash", "passed!!")])
    assert len(agent.session.surface.nodes) == 3
    assert select(agent, 0) is None


# --- the measurement -----------------------------------------------------------------------


def test_a_stale_measurement_is_refused() -> None:
    agent = two_turns()
    measurement = TokenMeter().measure(agent.session)
    agent.start_turn("lint it!")
    with pytest.raises(TokenMeterError) as caught:
        select_compactable_range(agent.session, measurement, 0)
    assert str(caught.value) == MISMATCH


def test_a_measurement_of_another_session_is_refused() -> None:
    other = Agent()
    other.exchange("fix bugs", "all done")
    measurement = TokenMeter().measure(other.session)
    with pytest.raises(TokenMeterError) as caught:
        select_compactable_range(two_turns().session, measurement, 0)
    assert str(caught.value) == MISMATCH
