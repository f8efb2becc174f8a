"""Summaries: the compaction instruction, what a checkpoint keeps of a summary, its framing.

Covers spec/plugins.md §2.10 with acceptance scenarios 4 (checkpoint framing) and 16 (output
filtering). The filter keeps only text. Image output anywhere, or text that is only
whitespace, refuses the summary with a ``summary``-coded ``CompactionError``.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import CompactionError
from agentlog import messages as m
from agentlog.plugins.compaction.summary import (
    INSTRUCTION,
    PREAMBLE,
    SECTIONS,
    Summary,
    SummaryRequest,
    frame_summary,
    summary_text_blocks,
)

SCREENSHOT = m.image("shot", "image/png", size=512, width=16, height=16)


def test_the_preamble_is_dshs_verbatim() -> None:
    assert PREAMBLE == (
        "This is an automatically generated checkpoint condensing an earlier span of the "
        "conversation to free up context. Treat the captured context as established background "
        "and build on it without restating it. Continue the task directly from the messages "
        "that follow, without acknowledging this checkpoint."
    )


def test_frame_wraps_the_summary_in_a_compacted_summary_block() -> None:
    """Scenario 4: preamble and open tag, the summary blocks, the close tag."""
    summary = [m.text("## Primary Request and Intent\n- ship it"), m.text("## Next Step\n- tag")]

    assert frame_summary(summary) == [
        m.text(PREAMBLE + "\n\n<compacted-summary>"),
        m.text("## Primary Request and Intent\n- ship it"),
        m.text("## Next Step\n- tag"),
        m.text("</compacted-summary>"),
    ]


def test_frame_copies_the_summary_blocks() -> None:
    summary = [m.text("- done")]

    framed = frame_summary(summary)
    framed[1]["text"] = "changed"

    assert summary == [m.text("- done")]


def test_only_text_blocks_are_kept() -> None:
    """Scenario 16: reasoning and tool calls are dropped; the text keeps its order."""
    output = [
        m.reasoning("Let me recall the span."),
        m.text("## Primary Request and Intent\n"),
        m.tool_call("c1", "bash", "{}"),
        {**m.text("- fix the build"), "providerMetadata": {"id": "t2"}},
    ]

    assert summary_text_blocks(output) == [
        m.text("## Primary Request and Intent\n"),
        m.text("- fix the build"),
    ]


def test_whitespace_text_is_kept_beside_real_text() -> None:
    assert summary_text_blocks([m.text("  \n"), m.text("- done")]) == [
        m.text("  \n"),
        m.text("- done"),
    ]


@pytest.mark.parametrize(
    "output",
    [
        [SCREENSHOT],
        [m.text("## Current Work\n- see the screenshot"), SCREENSHOT],
        [
            m.text("- ran the capture"),
            {"type": "tool-result", "toolCallId": "c1", "content": [m.text("ok"), SCREENSHOT]},
        ],
    ],
    ids=["image", "image-after-text", "image-nested-in-a-tool-result"],
)
def test_image_output_refuses_the_summary(output: list[Any]) -> None:
    with pytest.raises(CompactionError) as caught:
        summary_text_blocks(output)

    assert caught.value.code == "summary"
    assert str(caught.value) == "compaction summary cannot contain image output"


@pytest.mark.parametrize(
    "output",
    [
        [],
        [m.reasoning("Nothing worth keeping.")],
        [m.text("")],
        [m.text("  \n\t"), m.reasoning("...")],
        [m.tool_call("c1", "bash", "{}")],
    ],
    ids=["empty", "reasoning-only", "empty-text", "whitespace-text", "tool-call-only"],
)
def test_output_without_text_refuses_the_summary(output: list[Any]) -> None:
    with pytest.raises(CompactionError) as caught:
        summary_text_blocks(output)

    assert caught.value.code == "summary"
    assert str(caught.value) == "summarization produced no text summary content"


def test_the_instruction_names_the_eight_sections_in_order() -> None:
    assert SECTIONS == (
        "Primary Request and Intent",
        "Key Technical Concepts",
        "Files and Code",
        "Errors and Fixes",
        "Pending Jobs",
        "Current Work",
        "Next Step",
        "Critical Context",
    )
    positions = [INSTRUCTION.index(f"`## {name}`") for name in SECTIONS]
    assert positions == sorted(positions)
    assert "exactly these eight Markdown sections" in INSTRUCTION
    assert "`(none)`" in INSTRUCTION
    assert "<compacted-summary>" in INSTRUCTION
    assert "do not call any tools" in INSTRUCTION


def test_request_and_summary_defaults() -> None:
    request = SummaryRequest(session_id="s1", messages=[m.user(INSTRUCTION)])
    assert (request.tools, request.provider, request.model) == ((), None, None)
    assert (request.max_tokens, request.purpose) == (8192, "compaction")

    summary = Summary(output=[m.text("- done")], provider="deepseek", model="deepseek-chat")
    assert (summary.max_tokens, summary.usage, summary.llm_stream_call) == (None, None, False)
    assert summary.extra == {}
