"""Properties of compaction over random sessions with tool calls (issue 6 acceptance).

Random agent sessions — turns of tool steps and answers, some results pruned — go through a
random sequence of compactions: manual ones between turns, explicit regions (valid or not)
inside a turn, automatic ones under pressure. After every operation:

* the surface pairs every tool call with its result (the derived history is provider-valid);
* every replacement cites every node it shadowed;
* every event ever appended is still in the log, unchanged, at its seq;
* ``expand`` of a replacement returns exactly the original events it stands for.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlog import (
    CompactionConfigError,
    CompactionError,
    ExtractiveSummarizer,
    PruneConfig,
    check_provider_history,
    compact,
    expand,
    fold_surface,
    prune_tool_results,
    tool_pairing_balanced_after,
)
from agentlog.plugins import TokenMeter, compact_if_needed, compact_region
from tests.plugins.agent import Agent

WORDS = ("alpha", "beta", "gamma", "delta", "src/app.py", "error:", "kappa", "sigma")


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def turn(agent: Agent, rng: random.Random, *, close: bool = True) -> None:
    agent.start_turn(words(rng, rng.randint(5, 120)))
    for _ in range(rng.randint(0, 2)):
        agent.start_step()
        calls = [("bash", words(rng, rng.randint(5, 600))) for _ in range(rng.randint(1, 3))]
        agent.reply(words(rng, rng.randint(0, 20)), calls=calls)
        agent.end_step()
    if rng.random() < 0.3:
        prune_tool_results(
            agent.session, PruneConfig(threshold_chars=800, head_chars=200, tail_chars=100)
        )
    if close:
        agent.start_step()
        agent.reply(words(rng, rng.randint(3, 80)))
        agent.end_step()
        agent.end_turn()


SUCCESS = ["compaction/start", "compaction/summary", "user/message", "compaction/end"]
FAILURE = ["compaction/start", "compaction/end"]


def brackets(written: list[str]) -> bool:
    """Whether ``written`` is whole compaction brackets (pruning pairs may precede them)."""
    while written[:2] == ["compaction/prune", "tool/result"]:
        written = written[2:]
    while written:
        if written[:4] == SUCCESS:
            written = written[4:]
        elif written[:2] == FAILURE:
            written = written[2:]
        else:
            return False
    return True


def leaves(originals: dict[int, list[int]], seq: int) -> list[int]:
    return originals.get(seq, [seq])


def check(agent: Agent, before: list[dict[str, Any]], originals: dict[int, list[int]]) -> None:
    session = agent.session
    nodes = session.surface.nodes
    if nodes:
        assert tool_pairing_balanced_after(session, nodes[-1])
    check_provider_history(session.derive_messages())
    assert [event.to_wire() for event in session.events[: len(before)]] == before
    for record in fold_surface(session.events, session.projections).replacements:
        cited = set(session.event_at(record.seq).source_event_seqs or ())
        assert set(record.shadowed_seqs) <= cited
        expected = [seq for node in record.shadowed_seqs for seq in leaves(originals, node)]
        originals[record.seq] = expected
        assert [event.seq for event in expand(session, record.seq)] == expected


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_compaction_never_loses_or_unbalances_anything(seed: int) -> None:
    rng = random.Random(seed)
    agent = Agent()
    summarizer = ExtractiveSummarizer()
    originals: dict[int, list[int]] = {}
    for _ in range(rng.randint(2, 5)):
        turn(agent, rng)
    for _ in range(rng.randint(1, 4)):
        before = [event.to_wire() for event in agent.session.events]
        operation = rng.choice(["manual", "region", "pressure"])
        try:
            if operation == "manual":
                asyncio.run(compact(agent.session, summarizer))
            else:
                turn(agent, rng, close=False)
                before = [event.to_wire() for event in agent.session.events]
                if operation == "region":
                    nodes = agent.session.surface.nodes
                    first, last = (
                        sorted(rng.sample(range(len(nodes)), 2)) if len(nodes) > 1 else (0, 0)
                    )
                    asyncio.run(
                        compact_region(agent.session, nodes[first], nodes[last], summarizer)
                    )
                else:
                    total = TokenMeter().measure(agent.session).total_tokens
                    window = max(2, int(total / rng.uniform(0.5, 1.5)))
                    asyncio.run(compact_if_needed(agent.session, summarizer, context_window=window))
        except (CompactionError, CompactionConfigError):
            pass  # a refused span, a failed attempt, or a window too small for the budgets
        # Whatever happened, only whole brackets were written: a failed one holds no summary
        # and no replacement.
        assert brackets([event.type for event in agent.session.events[len(before) :]])
        check(agent, before, originals)
        if operation != "manual":
            agent.start_step()
            agent.reply("done")
            agent.end_step()
            agent.end_turn()
