"""Summaries: what a summarizer is asked, what it returns, and how a checkpoint frames it.

Implements the summarizer contract of spec/plugins.md §2.10. A summarizer is any object with
``async __call__(request: SummaryRequest) -> Summary``. The request holds the messages the
shadowed span derives (the system prompt first, when the surface has one), the tools of the
request in force, and the compaction instruction as a final user message, so a model-backed
summarizer can send exactly what the last request sent plus the instruction (the provider's
prefix cache is reused). The engine keeps only the text blocks of the output; images refuse
the summary, and so does empty text.

``frame_summary`` wraps the kept text in the checkpoint dsh writes: a preamble and a
``<compacted-summary>`` block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from agentlog.errors import CompactionError

__all__ = [
    "INSTRUCTION",
    "PREAMBLE",
    "SECTIONS",
    "Summarizer",
    "Summary",
    "SummaryRequest",
    "frame_summary",
    "summary_text_blocks",
]

SECTIONS: Final = (
    "Primary Request and Intent",
    "Key Technical Concepts",
    "Files and Code",
    "Errors and Fixes",
    "Pending Jobs",
    "Current Work",
    "Next Step",
    "Critical Context",
)
"""The eight sections a checkpoint summary has, in order."""

INSTRUCTION: Final = (
    "You are the compaction engine of this session. Summarise the conversation above so that "
    "work can continue from your summary alone. Output exactly these eight Markdown sections, "
    "in this order: "
    + ", ".join(f"`## {name}`" for name in SECTIONS)
    + ". Use terse bullet points; write `(none)` under a section with nothing to say. Keep "
    "exact file paths, commands, identifiers, error messages and numbers. If the conversation "
    "begins with a <compacted-summary> block, merge its content into your sections instead of "
    "copying it. Do not mention that this is a summary, and do not call any tools."
)
"""The compaction instruction, sent as the last user message of a summary request."""

PREAMBLE: Final = (
    "This is an automatically generated checkpoint condensing an earlier span of the "
    "conversation to free up context. Treat the captured context as established background "
    "and build on it without restating it. Continue the task directly from the messages that "
    "follow, without acknowledging this checkpoint."
)
"""The checkpoint's opening text (spec/plugins.md §2.10, verbatim)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryRequest:
    """What a summarizer is asked to condense."""

    session_id: str
    messages: Sequence[Any]
    """The derived messages of the shadowed span (system prompt first), then the instruction."""
    tools: Sequence[Any] = ()
    """The tool schemas of the request in force (so a model sees the same prefix)."""
    provider: str | None = None
    """The suggested target: configured pair, else the routed request's, else ``None``."""
    model: str | None = None
    max_tokens: int = 8192
    """The generation cap for the summary (reasoning included)."""
    purpose: str = "compaction"


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """A summarizer's answer."""

    output: Sequence[Mapping[str, Any]]
    """Every content block produced (reasoning and tool calls too); only text is kept."""
    provider: str
    model: str
    max_tokens: int | None = None
    usage: Mapping[str, Any] | None = None
    llm_stream_call: bool = False
    """Whether exactly one model call produced it (the raw output is then recorded)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Further ``compaction/summary`` fields a summarizer wants recorded."""


class Summarizer(Protocol):
    """Condenses a span of conversation; raises to refuse."""

    async def __call__(self, request: SummaryRequest) -> Summary:
        """Summarise ``request.messages``."""
        ...


def summary_text_blocks(output: Sequence[Any]) -> list[dict[str, Any]]:
    """The text blocks a checkpoint keeps of a summary's output.

    Raises:
        CompactionError: ``summary`` code — for image output (anywhere, also nested), or when
            no text block holds anything but whitespace.
    """
    if _has_image(output):
        raise CompactionError("compaction summary cannot contain image output", code="summary")
    kept = [
        {"type": "text", "text": block["text"]}
        for block in output
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    if not any(block["text"].strip() for block in kept):
        raise CompactionError("summarization produced no text summary content", code="summary")
    return kept


def _has_image(value: Any) -> bool:
    if isinstance(value, Mapping):
        return value.get("type") == "image" or any(_has_image(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_image(item) for item in value)
    return False


def frame_summary(summary: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The checkpoint content: preamble, ``<compacted-summary>``, the summary, its close."""
    return [
        {"type": "text", "text": PREAMBLE + "\n\n<compacted-summary>"},
        *(dict(block) for block in summary),
        {"type": "text", "text": "</compacted-summary>"},
    ]
