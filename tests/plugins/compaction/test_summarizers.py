"""The two summarizers: one model call (``ModelSummarizer``), or offline extraction.

``ModelSummarizer`` must send the request's messages (already ending with the compaction
instruction) to its async callable once and record the call as a single model call.
``ExtractiveSummarizer`` must fill the eight checkpoint sections of spec/plugins.md §2.10 from
the span itself, the same way every time. The span is a session the scripted ``Agent`` logged:
two turns with a tool run, a failing tool and file paths. Summaries are run with
``asyncio.run`` because a summarizer is an async callable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from agentlog import CompactionError, compact
from agentlog import messages as m
from agentlog.plugins.compaction.summarizers import (
    ExtractiveSummarizer,
    ModelReply,
    ModelSummarizer,
)
from agentlog.plugins.compaction.summary import (
    INSTRUCTION,
    SECTIONS,
    Summary,
    SummaryRequest,
    frame_summary,
    summary_text_blocks,
)
from tests.plugins.agent import MODEL, PROVIDER, Agent


def instruction() -> dict[str, Any]:
    """The final user message of every summary request (as the compaction engine builds it)."""
    return dict(m.user(INSTRUCTION, id="instruction", source={"kind": "compact-basic"}))


def request(messages: Sequence[Any], **fields: Any) -> SummaryRequest:
    return SummaryRequest(session_id="agent", messages=[*messages, instruction()], **fields)


def failed_tool_step(agent: Agent, name: str, output: str) -> None:
    """A step whose one call to tool ``name`` failed with ``output``."""
    session = agent.session
    agent.start_step()
    call = m.tool_call(f"{name}1", name, "{}")
    data = m.assistant(
        [m.reasoning(f"Try {name}."), call],
        provider=PROVIDER,
        model=MODEL,
        turn=agent.turn,
        step=agent.step,
    )
    session.append("assistant/message", data, surface_op="append")
    session.append(
        "tool/call",
        {"turn": agent.turn, "step": agent.step, "callId": f"{name}1", "name": name,
         "arguments": "{}"},
    )  # fmt: skip
    session.append(
        "tool/result",
        m.tool_result(f"{name}1", output, turn=agent.turn, step=agent.step, is_error=True),
        surface_op="append",
    )
    agent.end_step()


def span() -> list[Any]:
    """The derived messages of two turns: a failing test fixed, then a lint run that failed."""
    agent = Agent()
    agent.exchange(
        "Fix the failing test in tests/test_app.py",
        "The fixture in tests/conftest.py was stale; fixed it.",
        tool_output="FAILED tests/test_app.py::test_home - KeyError: 'user'",
    )
    agent.start_turn("Lint   src/app/views.py\nand fix what it finds")
    failed_tool_step(agent, "ruff", "ruff: command not found")
    agent.start_step()
    agent.reply("ruff is missing; flake8 reports no problems in views.py.")
    agent.end_step()
    agent.end_turn()
    return agent.session.derive_messages()


SPAN_SUMMARY = """\
## Primary Request and Intent
- Fix the failing test in tests/test_app.py
- Lint src/app/views.py and fix what it finds

## Key Technical Concepts
- tool `bash` used
- tool `ruff` used

## Files and Code
- `tests/test_app.py`
- `tests/conftest.py`
- `src/app/views.py`
- `views.py`

## Errors and Fixes
- ruff: command not found

## Pending Jobs
(none)

## Current Work
- ruff is missing; flake8 reports no problems in views.py.

## Next Step
(none)

## Critical Context
(none)"""


def headings(text: str) -> list[str]:
    return [line[3:] for line in text.splitlines() if line.startswith("## ")]


# --- ModelSummarizer ------------------------------------------------------------------------


def test_model_summarizer_makes_one_call_with_the_request_messages() -> None:
    sent: list[Sequence[Any]] = []

    async def complete(messages: Sequence[Any]) -> str:
        sent.append(messages)
        return "## Primary Request and Intent\n- fix the test"

    summarizer = ModelSummarizer(complete, provider="deepseek", model="deepseek-reasoner")
    asked = request(span(), provider="openai", model="gpt-4o", max_tokens=4096)

    summary = asyncio.run(summarizer(asked))

    assert len(sent) == 1
    assert sent[0] is asked.messages
    assert sent[0][-1] == instruction()
    assert summary == Summary(
        output=[m.text("## Primary Request and Intent\n- fix the test")],
        provider="deepseek",
        model="deepseek-reasoner",
        max_tokens=4096,
        llm_stream_call=True,
    )


def test_model_summarizer_lets_a_failed_call_propagate() -> None:
    async def complete(messages: Sequence[Any]) -> str:
        raise TimeoutError("model did not answer")

    summarizer = ModelSummarizer(complete, provider="deepseek", model="deepseek-chat")

    with pytest.raises(TimeoutError, match="model did not answer"):
        asyncio.run(summarizer(request(span())))


def test_a_whole_reply_keeps_every_block_and_its_usage() -> None:
    blocks = [
        m.reasoning("Condense it."),
        m.text("## Current Work\n- done"),
        m.tool_call("c", "x", "{}"),
    ]

    async def complete(messages: Sequence[Any]) -> ModelReply:
        return ModelReply(content=blocks, usage={"inputTokens": 900, "outputTokens": 40})

    summary = asyncio.run(ModelSummarizer(complete, provider="p", model="m")(request(span())))

    assert list(summary.output) == blocks  # recorded as rawOutput; only the text is kept
    assert summary_text_blocks(summary.output) == [m.text("## Current Work\n- done")]
    assert summary.usage == {"inputTokens": 900, "outputTokens": 40}


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            ModelReply(content=[m.text("## Primary Request and")], finish="max-tokens"),
            "summarization truncated at the token cap (incomplete checkpoint)",
        ),
        (ModelReply(content=[], finish="error", error="overloaded"), "overloaded"),
        (ModelReply(content=[], finish="aborted"), "summarization ended with finish 'aborted'"),
    ],
)
def test_a_reply_that_did_not_finish_is_refused(reply: ModelReply, message: str) -> None:
    async def complete(messages: Sequence[Any]) -> ModelReply:
        return reply

    with pytest.raises(CompactionError) as refused:
        asyncio.run(ModelSummarizer(complete, provider="p", model="m")(request(span())))
    assert (str(refused.value), refused.value.code) == (message, "summary")


def test_a_truncated_summary_never_lands() -> None:
    agent = Agent()
    agent.exchange("fix the parser " * 40, "fixed it " * 40, tool_output="ok " * 200)
    agent.exchange("now the tests", "they pass")
    before = agent.session.surface.nodes

    async def complete(messages: Sequence[Any]) -> ModelReply:
        return ModelReply(content=[m.text("## Primary")], finish="max-tokens")

    with pytest.raises(CompactionError) as refused:
        asyncio.run(compact(agent.session, ModelSummarizer(complete, provider="p", model="m")))

    assert refused.value.code == "summary"
    assert agent.session.surface.nodes == before
    end = agent.session.events[-1]
    assert end.type == "compaction/end"
    assert end.data["error"] == "summarization truncated at the token cap (incomplete checkpoint)"
    assert "compaction/summary" not in [event.type for event in agent.session.events]


# --- ExtractiveSummarizer -------------------------------------------------------------------


def test_extractive_summary_of_an_agent_span() -> None:
    summary = asyncio.run(ExtractiveSummarizer()(request(span())))

    assert summary == Summary(
        output=[m.text(SPAN_SUMMARY)], provider="agentlog", model="extractive"
    )
    assert headings(SPAN_SUMMARY) == list(SECTIONS)


def test_extractive_summary_is_deterministic() -> None:
    summarizer = ExtractiveSummarizer()
    asked = request(span())

    first, second = asyncio.run(summarizer(asked)), asyncio.run(summarizer(asked))

    assert first == second
    assert asyncio.run(ExtractiveSummarizer()(request(span()))) == first


def test_extractive_summary_of_nothing_has_every_section_empty() -> None:
    text = ExtractiveSummarizer().summarize([])

    assert text == "\n\n".join(f"## {name}\n(none)" for name in SECTIONS)


def test_the_instruction_is_not_summarised() -> None:
    summary = asyncio.run(ExtractiveSummarizer()(request([m.user("Tag the release")])))

    (block,) = summary.output
    assert "- Tag the release\n\n## Key" in block["text"]
    assert "compaction engine" not in block["text"]
    assert "Summarise the conversation" not in block["text"]


def test_the_latest_assistant_reply_is_the_current_work() -> None:
    agent = Agent()
    agent.exchange("Step one", "Did step one.")
    agent.exchange("Step two", "Did step two.")

    text = ExtractiveSummarizer().summarize(agent.session.derive_messages())

    assert "## Current Work\n- Did step two.\n\n" in text
    assert "Did step one." not in text


def test_only_failed_tool_results_are_errors() -> None:
    agent = Agent()
    agent.start_turn("Check the disk")
    agent.start_step()
    agent.reply(calls=[("bash", "Filesystem 93% used")])
    agent.end_step()
    failed_tool_step(agent, "df", "df: permission denied")

    text = ExtractiveSummarizer().summarize(agent.session.derive_messages())

    assert "## Errors and Fixes\n- df: permission denied\n\n" in text
    assert "93% used" not in text


def test_each_tool_is_named_once_in_order_of_first_use() -> None:
    messages = [
        m.assistant(
            [m.tool_call("c1", "grep", "{}"), m.tool_call("c2", "bash", "{}")],
            provider=PROVIDER, model=MODEL, turn=1, step=1,
        )["message"],
        m.assistant(
            [m.tool_call("c3", "bash", "{}"), m.tool_call("c4", "read", "{}")],
            provider=PROVIDER, model=MODEL, turn=1, step=2,
        )["message"],
    ]  # fmt: skip

    text = ExtractiveSummarizer().summarize(messages)

    assert (
        "## Key Technical Concepts\n- tool `grep` used\n- tool `bash` used\n- tool `read` used\n\n"
        in text
    )


def test_long_items_are_cut_and_sections_capped() -> None:
    summarizer = ExtractiveSummarizer(max_item_chars=12, max_items=2)
    messages = [m.user("Refactor the whole parser module"), m.user("Then"), m.user("Ignored")]

    text = summarizer.summarize(messages)

    assert "## Primary Request and Intent\n- Refactor th…\n- Then\n\n" in text
    assert "Ignored" not in text


def test_an_earlier_checkpoint_is_merged_into_critical_context() -> None:
    """A span that begins with a checkpoint keeps what it said, not its preamble."""
    earlier = (
        "## Primary Request and Intent\n- migrate the db\n\n## Files and Code\n- `db/schema.sql`"
    )
    checkpoint = m.user(frame_summary([m.text(earlier)]))
    asked = request([checkpoint, m.user("Now add an index")])

    text = asyncio.run(ExtractiveSummarizer()(asked)).output[0]["text"]

    assert "## Primary Request and Intent\n- Now add an index\n\n" in text
    assert "## Files and Code\n- `db/schema.sql`\n\n" in text
    assert text.endswith(
        "## Critical Context\n"
        "- ## Primary Request and Intent - migrate the db ## Files and Code - `db/schema.sql`"
    )
    assert "automatically generated checkpoint" not in text
    assert headings(text) == list(SECTIONS)


def test_the_merged_checkpoint_may_be_four_items_long() -> None:
    summarizer = ExtractiveSummarizer(max_item_chars=10)
    checkpoint = m.user(frame_summary([m.text("x" * 100)]))

    text = summarizer.summarize([checkpoint])

    assert text.endswith("## Critical Context\n- " + "x" * 39 + "…")


def test_an_extractive_summary_is_a_valid_checkpoint() -> None:
    summary = asyncio.run(ExtractiveSummarizer()(request(span())))

    kept = summary_text_blocks(summary.output)

    assert frame_summary(kept)[1] == m.text(SPAN_SUMMARY)
    assert summary.llm_stream_call is False


def test_numbers_and_abbreviations_are_not_listed_as_files() -> None:
    messages = [m.user("Use Python 3.11, e.g. for the 2.5x speedup, and bump to 0.2.0")]

    text = ExtractiveSummarizer().summarize(messages)

    assert "## Files and Code\n(none)\n\n" in text


def test_a_path_with_several_dots_is_listed_whole() -> None:
    messages = [m.user("Upload dist/agentlog-0.1.0.tar.gz and ../backup/db.tar.gz")]

    text = ExtractiveSummarizer().summarize(messages)

    assert "## Files and Code\n- `dist/agentlog-0.1.0.tar.gz`\n- `../backup/db.tar.gz`\n\n" in text
