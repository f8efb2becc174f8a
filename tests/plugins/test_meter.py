"""The token meter: the baseline, the usage anchor and node prices (spec/plugins.md §7).

Sessions are built with the scripted ``Agent``, whose eight-character texts make every text
message cost 10 tokens (``ceil(8 / 4) + 4`` for the block, ``+ 4`` for the message) and whose
request header here carries one tool schema costing 25 tokens. Scenario 58 is the usage anchor.
Logs whose steps do not nest are built without the invariant companion (``structure_free``) so
that the meter's own fold errors can be reached.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentlog import Event, Session, thaw
from agentlog import messages as m
from agentlog.errors import TokenMeterError
from agentlog.plugins.compaction import run_compaction
from agentlog.plugins.meter import Measurement, NodePrice, TokenMeter
from agentlog.plugins.pruner import PruneConfig, prune_tool_results
from agentlog.plugins.tokens import estimate_message
from tests.plugins.agent import MODEL, PROVIDER, Agent
from tests.plugins.compaction.summarizers import Scripted

TOOLS = [{"name": "bash", "description": "Run a shell command", "parameters": {"type": "object"}}]
HEADER_TOKENS = 25
"""``ceil(84 / 4) + 4``: the tools' JSON is 84 characters."""
MESSAGE_TOKENS = 10
"""An eight-character text message."""
IMAGE = m.image("img-1", "image/png", size=2048, width=64, height=48)
"""33 tokens as an image (114 characters of JSON), 20 once offloaded (its placeholder text)."""


def usage(total: int) -> dict[str, int]:
    """A reported usage whose four buckets sum to ``total``."""
    return {
        "inputTokens": total - 30,
        "cacheReadTokens": 20,
        "cacheWriteTokens": 5,
        "outputTokens": 5,
    }


def answered_turn(reported: dict[str, int] | None) -> Agent:
    """One turn ``fix bugs`` → ``all done`` (with ``reported`` usage), then the next prompt.

    Surface: three 10-token messages. The anchored step started with one of them on the
    surface and produced another, so the heuristic anchor is ``25 + 10 + 10 = 45``.
    """
    agent = Agent(tools=TOOLS)
    agent.start_turn("fix bugs")
    agent.start_step()
    agent.reply("all done", usage=reported)
    agent.end_step()
    agent.end_turn()
    agent.start_turn("run test")
    return agent


# --- baseline without an anchor ------------------------------------------------------------


def test_no_header_and_an_empty_surface_measure_nothing() -> None:
    session = Agent().session
    session.append("turn/start", {"turn": 1})
    measurement = TokenMeter().measure(session)
    assert measurement == Measurement(
        log_revision=1,
        baseline="none",
        baseline_tokens=0,
        surface_delta_tokens=0,
        total_tokens=0,
        surface_tokens=0,
        nodes=(),
    )


def test_without_an_anchor_the_baseline_estimates_header_and_surface() -> None:
    agent = Agent(tools=TOOLS)
    agent.start_turn("fix bugs")
    agent.start_step()
    measurement = TokenMeter().measure(agent.session)
    assert measurement == Measurement(
        log_revision=len(agent.session.events),
        baseline="estimated",
        baseline_tokens=HEADER_TOKENS + MESSAGE_TOKENS,
        surface_delta_tokens=0,
        total_tokens=35,
        surface_tokens=MESSAGE_TOKENS,
        nodes=(NodePrice(seq=1, tokens=10, heuristic_tokens=10),),
    )


def test_a_surface_without_a_header_is_estimated_alone() -> None:
    agent = Agent(tools=TOOLS)
    agent.start_turn("fix bugs")
    measurement = TokenMeter().measure(agent.session)
    assert (measurement.baseline, measurement.total_tokens) == ("estimated", MESSAGE_TOKENS)


def test_a_header_without_a_surface_is_estimated_alone() -> None:
    session = Agent().session
    session.append("turn/start", {"turn": 1})
    header = {"config": {"provider": PROVIDER, "model": MODEL}, "tools": TOOLS}
    session.append("request/header", {"header": header, "reason": "initial"})
    measurement = TokenMeter().measure(session)
    assert (measurement.baseline, measurement.total_tokens) == ("estimated", HEADER_TOKENS)


# --- the usage anchor (scenario 58) --------------------------------------------------------


def test_reported_usage_above_the_estimate_is_the_baseline() -> None:
    """Scenario 58: usage, plus the surface grown since the anchored step began."""
    agent = answered_turn(usage(132))
    measurement = TokenMeter().measure(agent.session)
    assert measurement.baseline == "usage"
    assert measurement.baseline_tokens == 132
    assert measurement.surface_tokens == 30
    assert measurement.surface_delta_tokens == 30 - (10 + 10)  # now − (step start + assistant)
    assert measurement.total_tokens == 142


def test_reported_usage_equal_to_the_estimate_is_trusted() -> None:
    measurement = TokenMeter().measure(answered_turn(usage(45)).session)
    assert (measurement.baseline, measurement.baseline_tokens) == ("usage", 45)
    assert measurement.total_tokens == 55


def test_reported_usage_below_the_estimate_falls_back_to_the_estimated_anchor() -> None:
    measurement = TokenMeter().measure(answered_turn(usage(44)).session)
    assert measurement.baseline == "estimated"
    assert measurement.baseline_tokens == HEADER_TOKENS + 10 + 10
    assert measurement.surface_delta_tokens == 10
    assert measurement.total_tokens == 55


def test_an_answer_without_usage_anchors_the_estimate() -> None:
    measurement = TokenMeter().measure(answered_turn(None).session)
    assert (measurement.baseline, measurement.baseline_tokens) == ("estimated", 45)
    assert measurement.surface_delta_tokens == 10


def test_usage_sums_every_input_bucket_and_the_output() -> None:
    reported = {
        "inputTokens": 60,
        "cacheReadTokens": 30,
        "cacheWriteTokens": 20,
        "outputTokens": 10,
    }
    measurement = TokenMeter().measure(answered_turn(reported).session)
    assert (measurement.baseline, measurement.baseline_tokens) == ("usage", 120)


def test_the_anchored_step_s_own_inputs_count_twice() -> None:
    """A message steered into the step is in the usage and, being after step start, in the delta.

    Deliberately conservative (spec/plugins.md §7, §9): over-estimating compacts early.
    """
    agent = Agent(tools=TOOLS)
    agent.start_turn("fix bugs")
    agent.start_step()
    agent.session.append("user/message", m.user("and lint"), surface_op="append")
    agent.reply("all done", usage=usage(200))
    measurement = TokenMeter().measure(agent.session)
    assert measurement.baseline_tokens == 200
    assert measurement.surface_delta_tokens == 30 - (10 + 10)  # the steered message
    assert measurement.total_tokens == 210


def test_usage_without_a_request_header_is_ignored() -> None:
    session = Agent().session
    session.append("turn/start", {"turn": 1})
    session.append("user/message", m.user("fix bugs"), surface_op="append")
    session.append("step/start", {"turn": 1, "step": 1})
    session.append(
        "assistant/message",
        m.assistant("all done", provider=PROVIDER, model=MODEL, turn=1, step=1, usage=usage(500)),
        surface_op="append",
    )
    measurement = TokenMeter().measure(session)
    assert (measurement.baseline, measurement.total_tokens) == ("estimated", 20)


def test_a_header_change_drops_the_anchor_until_the_next_answer() -> None:
    agent = answered_turn(usage(132))
    agent.start_step()
    switched = {"config": {"provider": PROVIDER, "model": "deepseek-reasoner"}, "tools": TOOLS}
    agent.session.append("request/header", {"header": switched, "reason": "change"})
    meter = TokenMeter()
    measurement = meter.measure(agent.session)
    assert measurement.baseline == "estimated"
    assert measurement.baseline_tokens == HEADER_TOKENS + 30  # a fresh full estimate
    assert measurement.surface_delta_tokens == 0

    agent.reply("all done", usage=usage(300))
    measurement = meter.measure(agent.session)
    assert (measurement.baseline, measurement.baseline_tokens) == ("usage", 300)
    assert measurement.surface_delta_tokens == 40 - (30 + 10)


def test_measuring_under_another_header_ignores_the_anchor() -> None:
    """``measure(session, header)`` prices the request as if it went out under ``header``."""
    agent = answered_turn(usage(132))
    meter = TokenMeter()
    logged = {"config": {"provider": PROVIDER, "model": MODEL}, "tools": TOOLS}
    assert meter.measure(agent.session, logged).baseline == "usage"

    toolless = {"config": {"provider": PROVIDER, "model": MODEL}}
    measurement = meter.measure(agent.session, toolless)
    assert (measurement.baseline, measurement.total_tokens) == ("estimated", 30)


# --- node prices ---------------------------------------------------------------------------


def test_node_prices_follow_an_image_offload_but_nodes_do_not_move() -> None:
    agent = Agent(tools=TOOLS)
    agent.start_turn([m.text("see this"), IMAGE])
    meter = TokenMeter()
    before = meter.measure(agent.session)
    assert before.nodes == (NodePrice(seq=1, tokens=6 + 33 + 4, heuristic_tokens=43),)

    agent.session.append("image/offload", {"targets": [{"seq": 1, "imageIndexes": [0]}]})
    after = meter.measure(agent.session)
    assert agent.session.surface.nodes == (1,)
    assert after.nodes == (NodePrice(seq=1, tokens=6 + 20 + 4, heuristic_tokens=30),)
    assert after.total_tokens == 30
    assert TokenMeter().measure(agent.session) == after


def test_a_tool_result_rewrite_reprices_the_node_it_replaces() -> None:
    """No metering event before the rewrite (a log from before §2.13): no claim, accepted."""
    agent = Agent(tools=TOOLS)
    agent.exchange("list dir", "all done", tool_output="x" * 400)
    result = agent.session.surface.nodes[2]
    meter = TokenMeter()
    assert meter.measure(agent.session).nodes[2].tokens == 100 + 4 + 4

    agent.start_turn("run test")
    data: Any = thaw(agent.session.event_at(result).data)
    data["message"]["content"] = [m.text("[pruned]")]
    rewrite = agent.session.append(
        "tool/result",
        data,
        surface_op={"op": "replace", "startSeq": result, "endSeq": result},
        source_event_seqs=[result],
    )
    measurement = meter.measure(agent.session)
    assert measurement.nodes[2] == NodePrice(seq=rewrite.seq, tokens=10, heuristic_tokens=10)
    assert measurement.surface_tokens == 10 + 10 + 10 + 10 + 10
    assert TokenMeter().measure(agent.session) == measurement


def test_route_prices_equal_heuristic_prices() -> None:
    """No route here has image pricing of its own, so ``tokens`` is ``heuristic_tokens``."""
    agent = Agent(tools=TOOLS)
    agent.start_turn([m.text("see this"), IMAGE])
    agent.start_step()
    agent.reply(calls=[("bash", "README.md")])
    nodes = TokenMeter().measure(agent.session).nodes
    assert [node.tokens for node in nodes] == [43, 10, 11]
    assert all(node.tokens == node.heuristic_tokens for node in nodes)


def measure_along(agent: Agent) -> list[tuple[Measurement, Measurement]]:
    """Pairs (the meter that saw every append, a fresh meter), one pair per later append."""
    meter = TokenMeter()
    pairs: list[tuple[Measurement, Measurement]] = []

    def observe(session: Session, _event: Event) -> None:
        pairs.append((meter.measure(session), TokenMeter().measure(session)))

    agent.session.add_observer(observe)
    return pairs


def test_an_incremental_measurement_equals_a_fresh_one() -> None:
    agent = Agent(tools=TOOLS)
    pairs = measure_along(agent)
    agent.exchange("list dir", "all done", tool_output="x" * 40)
    agent.start_turn("run test")
    agent.start_step()
    agent.reply("test ok!", calls=[("bash", "passed")], usage=usage(400))
    agent.end_step()
    agent.end_turn()
    assert len(pairs) == len(agent.session.events)
    assert [incremental for incremental, _ in pairs] == [fresh for _, fresh in pairs]
    assert pairs[-1][0].baseline == "usage"


def test_an_incremental_measurement_equals_a_fresh_one_across_an_image_offload() -> None:
    agent = Agent(tools=TOOLS)
    pairs = measure_along(agent)
    agent.start_turn([m.text("see this"), IMAGE])
    agent.start_step()
    agent.reply("all done", usage=usage(500))
    agent.end_step()
    agent.end_turn()
    agent.start_turn("run test")
    agent.session.append("image/offload", {"targets": [{"seq": 1, "imageIndexes": [0]}]})
    incremental, fresh = pairs[-1]
    assert incremental.surface_delta_tokens == (30 + 10 + 10) - (43 + 10)  # the offload shrank it
    assert fresh == incremental


# --- fold errors ---------------------------------------------------------------------------


@pytest.mark.structure_free("a step opens inside an open step")
def test_a_step_opened_inside_an_open_step_is_refused() -> None:
    session = Agent().session
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("step/start", {"turn": 1, "step": 2})
    with pytest.raises(TokenMeterError) as caught:
        TokenMeter().measure(session)
    assert str(caught.value) == "token meter: step/start at seq 2 arrived before turn/step ended"


@pytest.mark.structure_free("a step closes that never opened")
def test_a_step_end_without_its_start_is_refused() -> None:
    session = Agent().session
    session.append("turn/start", {"turn": 1})
    session.append("step/end", {"turn": 1, "step": 1})
    with pytest.raises(TokenMeterError) as caught:
        TokenMeter().measure(session)
    assert str(caught.value) == "token meter: step/end at seq 1 has no matching step/start event"


@pytest.mark.structure_free("an answer outside any step")
def test_an_answer_outside_any_step_is_refused() -> None:
    session = Agent().session
    session.append("turn/start", {"turn": 1})
    session.append(
        "assistant/message",
        m.assistant("all done", provider=PROVIDER, model=MODEL, turn=1, step=1),
        surface_op="append",
    )
    with pytest.raises(TokenMeterError) as caught:
        TokenMeter().measure(session)
    assert str(caught.value) == (
        "token meter: assistant/message at seq 1 has no matching step/start event"
    )


@pytest.mark.structure_free("a step opens inside an open step")
def test_a_failed_fold_leaves_the_meter_as_it_was() -> None:
    """Spec §7: the fold validates before mutating, so measuring again fails the same way."""
    session = Agent().session
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("step/start", {"turn": 1, "step": 2})
    meter = TokenMeter()
    for _ in range(2):
        with pytest.raises(TokenMeterError) as caught:
            meter.measure(session)
        assert str(caught.value) == (
            "token meter: step/start at seq 2 arrived before turn/step ended"
        )


# --- the shadow-price protocol (§2.13, scenario 59) ---------------------------------------


def test_after_a_compaction_the_total_drops_by_the_shadow_price_and_adds_the_checkpoint() -> None:
    agent = Agent(tools=TOOLS)
    for turn in range(3):
        agent.exchange(f"task {turn} " * 30, f"answer {turn} " * 30, tool_output="x" * 400)
    meter = TokenMeter()
    before = meter.measure(agent.session).surface_tokens
    nodes = agent.session.surface.nodes
    result = asyncio.run(
        run_compaction(
            agent.session, nodes[0], nodes[7], Scripted(), manual=True, meter=meter,
            max_tokens=512, target=None,
        )
    )  # fmt: skip
    after = meter.measure(agent.session)
    checkpoint = estimate_message(agent.session.event_at(result.replacement_seq).data)
    assert after.surface_tokens == before - result.shadowed_token_count + checkpoint
    assert after == TokenMeter().measure(agent.session)


def test_a_pruned_result_costs_its_shadow_price_less_and_its_rewrite_more() -> None:
    agent = Agent(tools=TOOLS)
    agent.exchange("list dir", "all done", tool_output="x" * 400)
    agent.start_turn("run test")
    meter = TokenMeter()
    before = meter.measure(agent.session).surface_tokens
    config = PruneConfig(threshold_chars=100, head_chars=20, tail_chars=20)
    (pruned,) = prune_tool_results(agent.session, config).pruned
    price = agent.session.event_at(pruned.replacement_seq - 1).data["shadowedTokenCount"]
    rewrite = meter.measure(agent.session).nodes[2]
    assert meter.measure(agent.session).surface_tokens == before - price + rewrite.tokens


def test_a_replace_after_a_shadow_price_for_another_range_is_refused() -> None:
    agent = Agent(tools=TOOLS)
    agent.exchange("list dir", "all done", tool_output="x" * 400)
    agent.exchange("list src", "all done", tool_output="y" * 400)
    agent.start_turn("run test")
    session = agent.session
    first, second = session.surface.nodes[2], session.surface.nodes[6]
    session.append(
        "compaction/prune",
        {"shadowedRange": {"start": first, "end": first}, "shadowedSeqs": [first],
         "shadowedTokenCount": 108},
    )  # fmt: skip
    data: Any = thaw(session.event_at(second).data)
    data["message"]["content"] = [m.text("[pruned]")]
    rewrite = session.append(
        "tool/result",
        data,
        surface_op={"op": "replace", "startSeq": second, "endSeq": second},
        source_event_seqs=[second],
    )
    for meter in (TokenMeter(), TokenMeter()):
        for _ in range(2):  # the fold refuses it again, unchanged
            with pytest.raises(TokenMeterError) as caught:
                meter.measure(session)
            assert str(caught.value) == (
                f"token surface: replace at seq {rewrite.seq} over range {second}-{second} has "
                f"no adjacent shadow price (armed claim covers {first}-{first})"
            )
