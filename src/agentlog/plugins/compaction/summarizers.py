"""Two summarizers: one that asks a model, one that extracts offline and deterministically.

``ModelSummarizer`` wraps any async callable from messages to text, or to a ``ModelReply`` when
the call reports more (every block, why it stopped, usage); the request's messages already end
with the compaction instruction. ``ExtractiveSummarizer`` needs no model:
it fills the eight checkpoint sections from the span itself (requests, files, errors, the
latest reply), the same way every time, for offline use and tests.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from agentlog.errors import CompactionError
from agentlog.plugins.compaction.summary import SECTIONS, Summary, SummaryRequest

__all__ = ["ExtractiveSummarizer", "ModelReply", "ModelSummarizer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelReply:
    """A model's whole answer to a summary request, for calls that report more than text."""

    content: Sequence[Mapping[str, Any]]
    """Every block the model produced (reasoning and tool calls too: only text is kept)."""
    finish: Literal["stop", "max-tokens", "error", "aborted"] = "stop"
    """Why generation ended; anything but ``stop`` refuses the summary."""
    error: str | None = None
    """The failure message of an ``error`` or ``aborted`` finish."""
    usage: Mapping[str, Any] | None = None
    """The provider's token usage, recorded on ``compaction/summary``."""


Complete = Callable[[Sequence[Any]], Awaitable[str | ModelReply]]
"""An async model call: the messages to send in, the reply's text (or whole reply) out."""


class ModelSummarizer:
    """Summarises by one model call (``complete``), recorded as such.

    Args:
        complete: Sends the request's messages (ending with the instruction) to a model and
            returns the text it answers.
        provider: The provider ``complete`` calls, recorded on ``compaction/summary``.
        model: The model ``complete`` calls.
    """

    def __init__(self, complete: Complete, *, provider: str, model: str) -> None:
        self._complete = complete
        self.provider = provider
        self.model = model

    async def __call__(self, request: SummaryRequest) -> Summary:
        """Call the model once with the request's messages (spec/plugins.md §2.10).

        Raises:
            CompactionError: ``summary`` code — the reply was cut at the token cap
                (``summarization truncated at the token cap (incomplete checkpoint)``) or ended
                in an error or abort (its message).
        """
        reply = await self._complete(request.messages)
        if isinstance(reply, str):
            reply = ModelReply(content=[{"type": "text", "text": reply}])
        if reply.finish == "max-tokens":
            raise CompactionError(
                "summarization truncated at the token cap (incomplete checkpoint)", code="summary"
            )
        if reply.finish != "stop":
            raise CompactionError(
                reply.error or f"summarization ended with finish {reply.finish!r}", code="summary"
            )
        return Summary(
            output=reply.content,
            provider=self.provider,
            model=self.model,
            max_tokens=request.max_tokens,
            usage=reply.usage,
            llm_stream_call=True,
        )


_TOKEN: Final = re.compile(r"[^\s`'\"()<>\[\]{},;]+")
_FILE_NAME: Final = re.compile(r"[\w-]*[A-Za-z_][\w-]*(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}")
_CHECKPOINT: Final = re.compile(r"<compacted-summary>(.*?)</compacted-summary>", re.DOTALL)


class ExtractiveSummarizer:
    """A deterministic, model-free summarizer: the span's own words, condensed.

    Args:
        max_item_chars: How much of each quoted request, error or reply is kept.
        max_items: How many entries a section lists at most.
    """

    provider: Final = "agentlog"
    model: Final = "extractive"

    def __init__(self, *, max_item_chars: int = 160, max_items: int = 6) -> None:
        self.max_item_chars = max_item_chars
        self.max_items = max_items

    async def __call__(self, request: SummaryRequest) -> Summary:
        """Fill the eight sections from ``request.messages`` (the instruction excluded)."""
        return Summary(
            output=[{"type": "text", "text": self.summarize(request.messages[:-1])}],
            provider=self.provider,
            model=self.model,
        )

    def summarize(self, messages: Sequence[Any]) -> str:
        """The summary text of ``messages`` (the synchronous core of ``__call__``)."""
        requests: list[str] = []
        errors: list[str] = []
        tools: list[str] = []
        prior: list[str] = []
        replies: list[str] = []
        texts: list[str] = []
        for message in messages:
            if not isinstance(message, Mapping):
                continue
            role, text = message.get("role"), _text(message.get("content"))
            texts.append(text)
            if role == "user":
                earlier = _CHECKPOINT.findall(text)
                if earlier:
                    prior.extend(part.strip() for part in earlier)
                elif text.strip():
                    requests.append(text)
            elif role == "assistant":
                if text.strip():
                    replies.append(text)
                tools += [
                    str(block.get("name"))
                    for block in message.get("content") or ()
                    if isinstance(block, Mapping) and block.get("type") == "tool-call"
                ]
            elif role == "tool" and message.get("isError") is True:
                errors.append(text)
        files = list(dict.fromkeys(_paths("\n".join(texts))))
        body = {
            "Primary Request and Intent": self._items(requests),
            "Key Technical Concepts": self._items(f"tool `{t}` used" for t in dict.fromkeys(tools)),
            "Files and Code": self._items(f"`{path}`" for path in files),
            "Errors and Fixes": self._items(errors),
            "Pending Jobs": [],
            "Current Work": self._items(replies[-1:]),
            "Next Step": [],
            "Critical Context": self._items(prior, chars=4 * self.max_item_chars),
        }
        sections = []
        for name in SECTIONS:
            lines = body[name] or ["(none)"]
            sections.append(f"## {name}\n" + "\n".join(lines))
        return "\n\n".join(sections)

    def _items(self, texts: Iterable[str], chars: int | None = None) -> list[str]:
        limit = chars or self.max_item_chars
        items = []
        for text in texts:
            line = " ".join(text.split())
            if len(line) > limit:
                line = line[: limit - 1] + "…"
            items.append(f"- {line}")
            if len(items) == self.max_items:
                break
        return items


def _paths(text: str) -> list[str]:
    """The words of ``text`` that name files, in order.

    A word with a slash names a file when its last part has an extension; a bare word must be
    ``name.ext`` with a letter in a name of two or more characters and an extension starting
    with a letter — so ``3.11``, ``2.5x`` and ``e.g`` are not files, while
    ``dist/agentlog-0.1.0.tar.gz`` is one, whole. A test id ``path::name`` names its path.
    """
    found = []
    # Every file name has a dot: skipping the words without one first is what keeps this fast.
    dotted = (token for token in _TOKEN.findall(text) if "." in token)
    for word in (part.rstrip(".:!?") for token in dotted for part in token.split("::")):
        if "." not in word:
            continue
        name = word.rsplit("/", 1)[-1]
        if "/" in word:
            named = "." in name.strip(".")
        else:
            named = len(name.split(".")[0]) > 1 and _FILE_NAME.fullmatch(name) is not None
        if named:
            found.append(word)
    return found


def _text(content: Any) -> str:
    """The text of a message's content (text blocks), blocks separated by newlines."""
    if not isinstance(content, list):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )
