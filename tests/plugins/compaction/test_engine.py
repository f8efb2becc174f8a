"""The entry points: manual ``compact``, automatic ``compact_if_needed``, ``compact_region``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentlog import CompactionConfig, CompactionConfigError, CompactionError, PruneConfig, compact
from agentlog.plugins import TokenMeter, compact_if_needed, compact_region
from agentlog.plugins.compaction import CompactionPolicy, ModelPolicy, routed_target
from tests.plugins.agent import MODEL, PROVIDER, Agent
from tests.plugins.compaction.summarizers import Scripted

LONG = "lorem ipsum dolor sit amet " * 80  # ~2 KB per message


def history(turns: int = 3, *, output: str = LONG) -> Agent:
    agent = Agent()
    for turn in range(turns):
        agent.exchange(f"task {turn}: {LONG}", f"answer {turn}: {LONG}", tool_output=output)
    return agent


def events_after(agent: Agent, count: int) -> list[str]:
    return [event.type for event in agent.session.events[count:]]


# --- manual ----------------------------------------------------------------------------------


def test_manual_compaction_keeps_the_newest_unit_in_a_standalone_durable_bracket() -> None:
    agent = history()
    count = len(agent.session.events)
    last = agent.session.surface.nodes[-1]
    result = asyncio.run(compact(agent.session, Scripted(), source_command_id="cmd-7"))
    assert result is not None
    assert events_after(agent, count) == [
        "compaction/start",
        "compaction/summary",
        "user/message",
        "compaction/end",
    ]
    assert agent.session.event_at(result.start_seq).data == {
        "compactionId": result.compaction_id,
        "sourceCommandId": "cmd-7",
        "turn": None,
    }
    assert agent.session.surface.nodes == (result.replacement_seq, last)
    agent.exchange("next", "ok")  # turn numbering goes on unchanged
    assert agent.session.events[-1].data == {"turn": 4, "reason": {"kind": "completed"}}


def lone_user_message(agent: Agent) -> None:
    agent.start_turn("hello")
    agent.end_turn()


def one_indivisible_unit(agent: Agent) -> None:
    """A tool call and its result, nothing before them: no cut between them is balanced."""
    agent.session.append("turn/start", {"turn": 1})
    agent.turn = 1
    agent.start_step()
    agent.reply(calls=[("bash", LONG)])
    agent.end_step()
    agent.end_turn()


@pytest.mark.parametrize("build", [lambda agent: None, lone_user_message, one_indivisible_unit])
def test_manual_compaction_with_nothing_to_compact_writes_nothing(build: Any) -> None:
    agent = Agent()
    build(agent)
    count = len(agent.session.events)
    assert asyncio.run(compact(agent.session, Scripted())) is None
    assert len(agent.session.events) == count


def test_manual_compaction_is_busy_while_a_turn_is_open() -> None:
    agent = history()
    agent.start_turn("still talking")
    with pytest.raises(CompactionError) as refused:
        asyncio.run(compact(agent.session, Scripted()))
    assert (str(refused.value), refused.value.code) == (
        "manual compaction: the session already has an open turn",
        "busy",
    )


def test_manual_compaction_summarizes_with_the_configured_pair_and_cap() -> None:
    agent = history()
    config = CompactionConfig(
        policy=CompactionPolicy(
            summarization_provider="cheap", summarization_model="mini", max_tokens=900
        ),
    )
    summarizer = Scripted()
    asyncio.run(compact(agent.session, summarizer, config=config))
    (request,) = summarizer.requests
    assert (request.provider, request.model, request.max_tokens) == ("cheap", "mini", 900)
    agent2 = history()
    summarizer = Scripted()
    asyncio.run(compact(agent2.session, summarizer))
    assert (summarizer.requests[0].provider, summarizer.requests[0].model) == (PROVIDER, MODEL)
    assert routed_target(agent2.session) == (PROVIDER, MODEL)


# --- automatic: pressure -----------------------------------------------------------------------


def window_for(agent: Agent, ratio: float) -> int:
    """A context window in which the session's next request fills ``ratio`` of it."""
    return int(TokenMeter().measure(agent.session).total_tokens / ratio)


def test_below_the_threshold_nothing_happens() -> None:
    agent = history()
    agent.start_turn("more")
    count = len(agent.session.events)
    window = window_for(agent, 0.5)
    assert asyncio.run(compact_if_needed(agent.session, Scripted(), context_window=window)) is None
    assert len(agent.session.events) == count


def test_above_the_threshold_old_history_is_compacted_and_a_tail_kept() -> None:
    agent = history(6)
    agent.start_turn("more")
    window = window_for(agent, 0.9)
    result = asyncio.run(compact_if_needed(agent.session, Scripted(), context_window=window))
    assert result is not None
    start = agent.session.event_at(result.start_seq)
    assert start.data["turn"] == 7  # the open turn owns it
    spec = CompactionPolicy().spec(window)
    kept = [n for n in TokenMeter().measure(agent.session).nodes if n.seq != result.replacement_seq]
    assert sum(n.tokens for n in kept) >= spec.retain_tokens
    assert TokenMeter().measure(agent.session).total_tokens < spec.threshold_tokens


def test_pruning_first_may_be_enough() -> None:
    agent = history(3, output="x" * 20_000)
    agent.start_turn("more")
    window = window_for(agent, 0.85)
    count = len(agent.session.events)
    prune = PruneConfig(threshold_chars=2000, head_chars=500, tail_chars=500)
    result = asyncio.run(
        compact_if_needed(agent.session, Scripted(), context_window=window, prune=prune)
    )
    assert result is None
    assert set(events_after(agent, count)) == {"compaction/prune", "tool/result"}


class Shrinking(Scripted):
    """Answers with ever shorter summaries: each attempt lands, none is enough."""

    def __init__(self) -> None:
        super().__init__()
        self.length = 2000

    async def __call__(self, request: Any) -> Any:
        self.text = "## Current Work\n- " + "w" * self.length
        self.length //= 2
        return await super().__call__(request)


def test_still_above_after_every_attempt_is_an_error() -> None:
    agent = history(8)
    agent.start_turn("x" * 300_000)  # the open turn alone is over the threshold
    window = window_for(agent, 1.0)
    config = CompactionConfig(policy=CompactionPolicy(compaction_retries=1, retain_tokens=0))
    count = len(agent.session.events)
    with pytest.raises(CompactionError) as refused:
        asyncio.run(
            compact_if_needed(agent.session, Shrinking(), context_window=window, config=config)
        )
    assert str(refused.value).startswith(
        "compaction still above threshold after 2 compaction attempts ("
    )
    assert refused.value.code == "summary"
    assert events_after(agent, count).count("compaction/end") == 2  # two brackets landed


def test_a_route_without_a_context_window_is_a_configuration_error() -> None:
    agent = history()
    agent.start_turn("more")
    with pytest.raises(CompactionConfigError) as refused:
        asyncio.run(compact_if_needed(agent.session, Scripted()))
    assert str(refused.value) == (
        f"compaction-basic: no context capacity for {PROVIDER}/{MODEL}; configure "
        "contextWindow on that adapter model"
    )
    assert refused.value.target_key == f"{PROVIDER}/{MODEL}"


def test_no_routed_request_means_nothing_to_measure_against() -> None:
    agent = Agent()
    agent.start_turn("hello")
    assert asyncio.run(compact_if_needed(agent.session, Scripted(), context_window=10)) is None


def test_the_routes_own_policy_applies() -> None:
    agent = history()
    agent.start_turn("more")
    window = window_for(agent, 0.7)
    lenient = CompactionConfig(
        model_policies=(
            ModelPolicy(provider=PROVIDER, model=MODEL, settings={"threshold_ratio": 0.9}),
        )
    )
    assert (
        asyncio.run(
            compact_if_needed(agent.session, Scripted(), context_window=window, config=lenient)
        )
        is None
    )
    strict = CompactionConfig(
        model_policies=(
            ModelPolicy(provider=PROVIDER, model=MODEL, settings={"threshold_ratio": 0.5}),
        )
    )
    assert (
        asyncio.run(
            compact_if_needed(agent.session, Scripted(), context_window=window, config=strict)
        )
        is not None
    )


# --- automatic: context overflow ---------------------------------------------------------------


def test_overflow_recovery_compacts_down_to_the_newest_unit_without_a_threshold() -> None:
    agent = history()
    agent.start_turn("more")
    generation = agent.session.surface.replace_generation
    result = asyncio.run(compact_if_needed(agent.session, Scripted(), trigger="context-overflow"))
    assert result is not None
    assert agent.session.surface.replace_generation == generation + 1
    assert agent.session.surface.nodes == (result.replacement_seq, agent.session.surface.nodes[-1])


# --- explicit region -----------------------------------------------------------------------------


def test_an_explicit_region_is_compacted_inside_the_open_turn() -> None:
    agent = history()
    agent.start_turn("more")
    nodes = agent.session.surface.nodes
    result = asyncio.run(compact_region(agent.session, nodes[4], nodes[7], Scripted()))
    assert result.shadowed_seqs == nodes[4:8]
    assert agent.session.surface.nodes == (*nodes[:4], result.replacement_seq, *nodes[8:])


def test_every_entry_point_is_busy_while_the_lock_is_held() -> None:
    agent = history()
    agent.start_turn("more")
    agent.session.append("compaction/start", {"compactionId": "held", "turn": 4})
    nodes = agent.session.surface.nodes
    calls: list[Any] = [
        compact_if_needed(agent.session, Scripted(), context_window=window_for(agent, 0.9)),
        compact_region(agent.session, nodes[0], nodes[3], Scripted()),
        compact_if_needed(agent.session, Scripted(), trigger="context-overflow"),
    ]
    for call in calls:
        with pytest.raises(CompactionError) as refused:
            asyncio.run(call)
        assert refused.value.code == "busy"
