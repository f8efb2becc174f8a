"""The tool-result pruner: oversized tool outputs shortened in place, and nothing lost.

Covers spec/plugins.md §2.12 and §2.13 with acceptance scenarios 34–39 (§8). ``prune_content``
is checked on content blocks directly, lengths counted in code points. ``prune_tool_results``
runs on sessions the scripted ``Agent`` builds. It must write a ``compaction/prune`` shadow price
immediately before each single-node ``tool/result`` replace, keep the original in the log (where
``expand`` finds it), change nothing on a second pass, and replay to the same messages. The
session's own rewrite guard (spec/core.md §5.5) refuses a replacement that changes more than the
content.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlog import (
    IMAGE_OFFLOAD,
    CompactionConfigError,
    CompactionError,
    Event,
    EventRejected,
    Session,
    expand,
)
from agentlog import messages as m
from agentlog.plugins.compaction import install_compaction_invariants
from agentlog.plugins.pruner import (
    MARKER,
    PruneConfig,
    PrunedResult,
    PruneResult,
    prune_content,
    prune_tool_results,
)
from agentlog.plugins.tokens import estimate_message
from tests.plugins.agent import MODEL, PROVIDER, Agent

SMALL = PruneConfig(threshold_chars=60, head_chars=5, tail_chars=5)
"""Keeps 5 + 39 + 5 = 49 code points of an output longer than 60."""

OUTPUT = "".join(str(i % 10) for i in range(100))
"""A 100-character tool output whose every position is recognisable."""


def img(name: str) -> dict[str, Any]:
    return m.image(name, "image/png", size=1024, width=32, height=32, name=f"{name}.png")


def text_of(blocks: list[Any]) -> str:
    return "".join(block["text"] for block in blocks if block["type"] == "text")


def open_turn_after_tool(output: str | list[Any]) -> tuple[Agent, int]:
    """An agent whose second turn is still open after a step that ran one tool; its result seq."""
    agent = Agent()
    agent.exchange("Say hello", "Hello!")
    agent.start_turn("Build the project")
    agent.start_step()
    (seq,) = agent.reply(calls=[("bash", output)])
    agent.end_step()
    return agent, seq


def failed_tool_step(agent: Agent, output: str) -> int:
    """A step whose one call failed, logged with ``error``, ``meta`` and a producer field."""
    session = agent.session
    agent.start_step()
    assistant = m.assistant(
        [m.tool_call("make1", "bash", '{"cmd": "make"}')],
        provider=PROVIDER,
        model=MODEL,
        turn=agent.turn,
        step=agent.step,
    )
    session.append("assistant/message", assistant, surface_op="append")
    session.append(
        "tool/call",
        {"turn": agent.turn, "step": agent.step, "callId": "make1", "name": "bash",
         "arguments": '{"cmd": "make"}'},
    )  # fmt: skip
    data = m.tool_result(
        "make1",
        output,
        turn=agent.turn,
        step=agent.step,
        is_error=True,
        error={"name": "ToolError", "code": "EXIT_STATUS"},
        meta={"exitCode": 2, "cwd": "/work"},
    )
    data["durationMs"] = 1200
    seq = session.append("tool/result", data, surface_op="append").seq
    agent.end_step()
    return seq


# --- PruneConfig ----------------------------------------------------------------------------


def test_marker_and_default_budgets_are_dshs() -> None:
    assert MARKER == "\n\n[... tool result middle pruned ...]\n\n"
    assert len(MARKER) == 39
    config = PruneConfig()
    assert (config.threshold_chars, config.head_chars, config.tail_chars) == (8192, 4096, 1024)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"threshold_chars": 0},
            "ToolResultPruneConfig: thresholdChars must be a positive integer",
        ),
        (
            {"threshold_chars": True},
            "ToolResultPruneConfig: thresholdChars must be a positive integer",
        ),
        (
            {"threshold_chars": 8192.0},
            "ToolResultPruneConfig: thresholdChars must be a positive integer",
        ),
        ({"head_chars": -1}, "ToolResultPruneConfig: headChars must be a non-negative integer"),
        ({"tail_chars": 1.5}, "ToolResultPruneConfig: tailChars must be a non-negative integer"),
        (
            {"threshold_chars": 5000},
            "ToolResultPruneConfig: headChars + marker + tailChars (5159) must be at most "
            "thresholdChars (5000)",
        ),
        (
            {"threshold_chars": 48, "head_chars": 5, "tail_chars": 5},
            "ToolResultPruneConfig: headChars + marker + tailChars (49) must be at most "
            "thresholdChars (48)",
        ),
    ],
)
def test_invalid_config_is_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(CompactionConfigError) as caught:
        PruneConfig(**fields)
    assert str(caught.value) == message


def test_the_budget_may_equal_what_is_kept() -> None:
    config = PruneConfig(threshold_chars=39, head_chars=0, tail_chars=0)
    assert config.threshold_chars == len(MARKER)


def test_from_mapping_reads_dshs_camel_case_keys() -> None:
    raw = {"thresholdChars": 100, "headChars": 40, "tailChars": 20}
    assert PruneConfig.from_mapping(raw) == PruneConfig(
        threshold_chars=100, head_chars=40, tail_chars=20
    )
    assert PruneConfig.from_mapping({}) == PruneConfig()
    assert PruneConfig.from_mapping({"tailChars": 0}) == PruneConfig(tail_chars=0)


def test_from_mapping_refuses_an_unknown_key() -> None:
    with pytest.raises(CompactionConfigError) as caught:
        PruneConfig.from_mapping({"thresholdChars": 100, "maxChars": 50})
    assert str(caught.value) == (
        'ToolResultPruneConfig: unknown key "maxChars" (allowed: thresholdChars, headChars, '
        "tailChars)"
    )


def test_from_mapping_validates_the_values() -> None:
    with pytest.raises(CompactionConfigError) as caught:
        PruneConfig.from_mapping({"headChars": -5})
    assert str(caught.value) == "ToolResultPruneConfig: headChars must be a non-negative integer"


# --- prune_content (scenario 35) -------------------------------------------------------------


def test_content_within_budget_is_left_alone() -> None:
    assert prune_content([m.text("x" * 60)], SMALL) is None
    assert prune_content([m.text("x" * 30), m.text("y" * 30)], SMALL) is None
    assert prune_content([m.text("x" * 8192)]) is None


def test_images_cost_nothing() -> None:
    assert prune_content([img("a"), m.text("x" * 60), img("b")], SMALL) is None


def test_keeps_head_marker_and_tail() -> None:
    assert prune_content([m.text(OUTPUT)], SMALL) == [m.text(OUTPUT[:5] + MARKER + OUTPUT[-5:])]


def test_default_budgets_keep_4096_then_1024_code_points() -> None:
    output = "".join(chr(ord("a") + i % 26) for i in range(10_000))
    kept = output[:4096] + MARKER + output[-1024:]
    assert prune_content([m.text(output)]) == [m.text(kept)]
    assert len(kept) == 5159


def test_an_astral_character_at_a_cut_stays_whole() -> None:
    """A code point outside the BMP counts once and is never split (no lone surrogates)."""
    output = "abcd😀" + "-" * 60 + "😀wxyz"
    assert prune_content([m.text(output)], SMALL) == [m.text("abcd😀" + MARKER + "😀wxyz")]
    assert prune_content([m.text("😀" * 61)], SMALL) == [m.text("😀" * 5 + MARKER + "😀" * 5)]
    assert prune_content([m.text("😀" * 60)], SMALL) is None


def test_the_span_runs_across_text_blocks_with_one_marker() -> None:
    """The span ``[40, 80)`` of 90 characters touches ``b`` first: the marker goes there."""
    config = PruneConfig(threshold_chars=89, head_chars=40, tail_chars=10)
    blocks = [m.text("a" * 30), m.text("b" * 30), m.text("c" * 30)]
    assert prune_content(blocks, config) == [
        m.text("a" * 30),
        m.text("b" * 10 + MARKER),
        m.text("c" * 10),
    ]


def test_text_blocks_left_empty_are_dropped() -> None:
    config = PruneConfig(threshold_chars=69, head_chars=20, tail_chars=10)
    blocks = [m.text("a" * 30), m.text("b" * 30), m.text("c" * 30)]
    assert prune_content(blocks, config) == [m.text("a" * 20 + MARKER), m.text("c" * 10)]


def test_a_block_that_was_empty_outside_the_cut_is_not_touched() -> None:
    config = PruneConfig(threshold_chars=len(MARKER), head_chars=0, tail_chars=0)
    blocks = [m.text(""), m.text("a" * 20), m.text("b" * 20)]
    assert prune_content(blocks, config) == [m.text(""), m.text(MARKER)]


def test_a_cut_block_keeps_its_other_fields() -> None:
    block = {**m.text(OUTPUT), "providerMetadata": {"cache": "hit"}}
    assert prune_content([block], SMALL) == [{**block, "text": OUTPUT[:5] + MARKER + OUTPUT[-5:]}]


def test_images_keep_their_order() -> None:
    blocks = [m.text("a" * 10), img("one"), m.text("b" * 100), img("two"), m.text("c" * 10)]
    assert prune_content(blocks, SMALL) == [
        m.text("a" * 5 + MARKER),
        img("one"),
        img("two"),
        m.text("c" * 5),
    ]


def test_zero_head_and_tail_still_shrink() -> None:
    config = PruneConfig(threshold_chars=len(MARKER), head_chars=0, tail_chars=0)
    assert prune_content([m.text("x" * 40)], config) == [m.text(MARKER)]
    assert prune_content([img("a"), m.text("x" * 20), m.text("y" * 20)], config) == [
        img("a"),
        m.text(MARKER),
    ]


@settings(max_examples=200)
@given(
    pieces=st.lists(
        st.one_of(st.text(alphabet="ab😀\n", max_size=80), st.sampled_from(["IMG1", "IMG2"])),
        max_size=6,
    ),
    head=st.integers(0, 30),
    tail=st.integers(0, 30),
    slack=st.integers(0, 40),
)
def test_pruned_content_fits_keeps_both_ends_and_every_image(
    pieces: list[str], head: int, tail: int, slack: int
) -> None:
    config = PruneConfig(
        threshold_chars=head + len(MARKER) + tail + slack, head_chars=head, tail_chars=tail
    )
    blocks = [img(piece) if piece.startswith("IMG") else m.text(piece) for piece in pieces]
    original = text_of(blocks)
    pruned = prune_content(blocks, config)
    if len(original) <= config.threshold_chars:
        assert pruned is None
        return
    assert pruned is not None
    kept = text_of(pruned)
    assert len(kept) <= config.threshold_chars
    assert len(kept) < len(original)
    assert kept == original[:head] + MARKER + original[len(original) - tail :]
    assert [b for b in pruned if b["type"] == "image"] == [
        b for b in blocks if b["type"] == "image"
    ]
    # blocks the cut emptied are dropped; a block that was empty already stays where it was
    empty_after = [b for b in pruned if b["type"] == "text" and not b["text"]]
    empty_before = [b for b in blocks if b["type"] == "text" and not b["text"]]
    assert len(empty_after) <= len(empty_before)
    assert sum(MARKER in b.get("text", "") for b in pruned) == 1


# --- prune_tool_results (scenarios 34, 36, 37) -----------------------------------------------


def test_prune_one_result() -> None:
    """Scenario 34: a shadow price, then a content-only replace of that one node."""
    agent = Agent()
    agent.exchange("Say hello", "Hello!")
    agent.start_turn("Build the project")
    seq = failed_tool_step(agent, OUTPUT)
    session = agent.session
    install_compaction_invariants(session)
    original = session.event_at(seq)
    position = session.surface.nodes.index(seq)
    generation = session.surface.replace_generation

    result = prune_tool_results(session, SMALL)

    prune, replacement = session.events[-2:]
    assert result == PruneResult(
        pruned=(
            PrunedResult(
                original_seq=seq,
                replacement_seq=replacement.seq,
                call_id="make1",
                chars_before=100,
                chars_after=49,
            ),
        ),
        chars_removed=51,
    )
    assert prune.type == "compaction/prune"
    assert prune.data == {
        "shadowedRange": {"start": seq, "end": seq},
        "shadowedSeqs": [seq],
        "shadowedTokenCount": estimate_message(original.data["message"]),
    }
    assert prune.surface_op is None
    assert replacement.type == "tool/result"
    assert replacement.surface_op == {"op": "replace", "startSeq": seq, "endSeq": seq}
    assert replacement.source_event_seqs == [seq]
    expected = original.to_wire()["data"]
    expected["message"]["content"] = [m.text(OUTPUT[:5] + MARKER + OUTPUT[-5:])]
    assert replacement.data == expected
    assert replacement.data["message"]["id"] == original.data["message"]["id"]

    assert seq not in session.surface.nodes
    assert session.surface.nodes[position] == replacement.seq
    assert session.surface.replace_generation == generation + 1
    assert session.event_at(seq) is original
    assert session.derive_messages()[position] == expected["message"]
    assert expand(session, replacement.seq) == [original]


def test_only_oversized_tool_results_are_pruned() -> None:
    agent = Agent()
    agent.start_turn("Please read " + "x" * 100)
    agent.start_step()
    big, small, bigger = agent.reply(
        "Reading " + "y" * 100,
        calls=[("bash", "a" * 61), ("bash", "b" * 60), ("bash", "c" * 300)],
    )
    agent.end_step()
    session = agent.session
    before = session.derive_messages()

    result = prune_tool_results(session, SMALL)

    assert [(p.original_seq, p.call_id) for p in result.pruned] == [
        (big, "call1"),
        (bigger, "call3"),
    ]
    assert [(p.chars_before, p.chars_after) for p in result.pruned] == [(61, 49), (300, 49)]
    assert result.chars_removed == 12 + 251
    assert [event.type for event in session.events[-4:]] == [
        "compaction/prune",
        "tool/result",
        "compaction/prune",
        "tool/result",
    ]
    after = session.derive_messages()
    assert after[:2] == before[:2]  # the long prompt and reply are not tool results
    assert after[3] == before[3]  # the result within budget is untouched
    assert small in session.surface.nodes


def test_a_second_pass_is_a_no_op() -> None:
    """Scenario 36: the pruned result is within budget now."""
    agent, _ = open_turn_after_tool(OUTPUT)
    session = agent.session
    prune_tool_results(session, SMALL)
    seq = session.seq

    assert prune_tool_results(session, SMALL) == PruneResult()
    assert prune_tool_results(session, SMALL).chars_removed == 0
    assert session.seq == seq


def test_a_replay_derives_the_same_history() -> None:
    """Scenario 36: the replace is in the log, so a replay lands on the same surface."""
    agent, _ = open_turn_after_tool(OUTPUT)
    session = agent.session
    prune_tool_results(session, SMALL)

    replayed = Session.from_events("agent", session.events, projections=(IMAGE_OFFLOAD,))

    assert replayed.derive_messages() == session.derive_messages()
    assert replayed.surface.replace_generation == session.surface.replace_generation == 1
    assert prune_tool_results(replayed, SMALL) == PruneResult()


def test_pruning_needs_an_open_turn() -> None:
    """Scenario 37: a replacement tool/result must be turn-enclosed, so nothing is written."""
    agent, _ = open_turn_after_tool(OUTPUT)
    agent.start_step()
    agent.reply("Built.")
    agent.end_step()
    agent.end_turn()
    session = agent.session
    seq, nodes = session.seq, session.surface.nodes

    with pytest.raises(CompactionError) as caught:
        prune_tool_results(session, SMALL)

    assert caught.value.code == "invalid"
    assert str(caught.value) == (
        "tool-result pruning needs an open turn: a replacement tool/result is turn-enclosed"
    )
    assert (session.seq, session.surface.nodes) == (seq, nodes)


def test_results_pruned_before_a_failure_stay_pruned() -> None:
    agent = Agent()
    agent.start_turn("Build both")
    agent.start_step()
    first, second = agent.reply(calls=[("bash", "a" * 100), ("bash", "b" * 100)])
    agent.end_step()
    session = agent.session

    def veto_second(_session: Session, event: Event) -> None:
        if event.type == "tool/result" and event.source_event_seqs == [second]:
            raise EventRejected("vetoed for the test")

    session.add_validator(veto_second)
    with pytest.raises(EventRejected, match="vetoed for the test"):
        prune_tool_results(session, SMALL)

    assert first not in session.surface.nodes
    assert second in session.surface.nodes
    assert session.surface.replace_generation == 1


def test_offloaded_images_stay_offloaded_in_the_replacement() -> None:
    """The replacement is built from the message as the model sees it (spec/plugins.md §9)."""
    agent, seq = open_turn_after_tool([m.text(OUTPUT), img("screen")])
    session = agent.session
    session.append("image/offload", {"targets": [{"seq": seq, "imageIndexes": [0]}]})

    (pruned,) = prune_tool_results(session, SMALL).pruned

    content = session.event_at(pruned.replacement_seq).data["message"]["content"]
    assert content == [
        m.text(OUTPUT[:5] + MARKER + OUTPUT[-5:]),
        {**img("screen"), "offloaded": True},
    ]
    assert session.event_at(seq).data["message"]["content"][1] == img("screen")


# --- the rewrite guard (scenario 39) -------------------------------------------------------


def _changed_is_error(data: dict[str, Any]) -> None:
    data["message"]["isError"] = True


def _changed_turn(data: dict[str, Any]) -> None:
    data["turn"] = 1


def _changed_id(data: dict[str, Any]) -> None:
    data["message"]["id"] = "another-id"


def _changed_meta(data: dict[str, Any]) -> None:
    data["meta"] = {"pruned": True}


@pytest.mark.parametrize("change", [_changed_is_error, _changed_turn, _changed_id, _changed_meta])
def test_a_rewrite_may_change_only_content(change: Any) -> None:
    agent, seq = open_turn_after_tool(OUTPUT)
    session = agent.session
    data = session.event_at(seq).to_wire()["data"]
    data["message"]["content"] = [m.text("shorter")]
    change(data)
    count = session.seq

    with pytest.raises(EventRejected) as caught:
        session.append(
            "tool/result",
            data,
            surface_op={"op": "replace", "startSeq": seq, "endSeq": seq},
            source_event_seqs=[seq],
        )

    assert str(caught.value) == "tool/result surface replacement may change only content"
    assert session.seq == count


def test_a_rewrite_over_two_nodes_is_refused() -> None:
    agent = Agent()
    agent.start_turn("Build both")
    agent.start_step()
    first, second = agent.reply(calls=[("bash", OUTPUT), ("bash", OUTPUT)])
    agent.end_step()
    session = agent.session
    data = session.event_at(first).to_wire()["data"]
    data["message"]["content"] = [m.text("shorter")]

    with pytest.raises(EventRejected) as caught:
        session.append(
            "tool/result",
            data,
            surface_op={"op": "replace", "startSeq": first, "endSeq": second},
            source_event_seqs=[first, second],
        )

    assert (
        str(caught.value) == "tool/result surface replacement must rewrite exactly one current node"
    )


def test_a_rewrite_of_another_message_type_is_refused() -> None:
    agent, seq = open_turn_after_tool(OUTPUT)
    session = agent.session
    prompt = session.surface.nodes[0]
    data = session.event_at(seq).to_wire()["data"]

    with pytest.raises(EventRejected) as caught:
        session.append(
            "tool/result",
            data,
            surface_op={"op": "replace", "startSeq": prompt, "endSeq": prompt},
            source_event_seqs=[prompt],
        )

    assert str(caught.value) == "tool/result surface replacement must target a current tool/result"
