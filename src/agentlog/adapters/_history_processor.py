"""A Pydantic AI history processor that compacts with agentlog's lossless compaction.

Implements spec/plugins.md §2 (compaction: a summary replaces a head-anchored span of the
surface, citing every node it shadows) for Pydantic AI's ``ProcessHistory`` capability:
before each model request the history is laid out as a session (each part one message event,
tool calls paired), measured with agentlog's token meter and, at the threshold
(``floor(context_window × 0.8)`` by default), compacted by ``compact_if_needed`` — the
newest history is kept verbatim (``retainRatio``), a step's tool calls are never cut from their
results. The history the model gets is the summary, as a ``ModelRequest`` holding a
``CompactionPart`` (Pydantic AI's form of an application's summary), then the kept messages —
the very objects given, a request cut by the span keeping only its later parts.

Nothing is lost: the summary's ``metadata["agentlog"]`` cites the positions of the messages it
replaces and holds the compaction's events, and a conversation store keeps the originals
(Pydantic AI saves only the messages a run adds).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from agentlog.adapters._pydantic_messages import message_of_part, response_message
from agentlog.adapters._writer import Batch, LogState
from agentlog.errors import CompactionConfigError, CompactionError
from agentlog.plugins import CompactionConfig, Summarizer, compact_if_needed
from agentlog.session import Session

__all__ = ["PART_KEY", "compaction_processor"]

PART_KEY = "historyPart"
"""On each event: ``[message index, part index]`` of what it shows (``None`` for a response)."""
_logger = logging.getLogger("agentlog.adapters.pydantic_ai")

Processor = Callable[[list[Any]], Coroutine[Any, Any, list[Any]]]
"""A history processor: the history in, the history to send out."""


def compaction_processor(
    summarizer: Summarizer, *, context_window: int, config: CompactionConfig | None = None
) -> Processor:
    """A history processor for ``capabilities=[ProcessHistory(...)]`` that compacts losslessly.

    Args:
        summarizer: Writes the summary (``agentlog.ModelSummarizer``,
            ``agentlog.ExtractiveSummarizer``, ...).
        context_window: The model's context window, in tokens.
        config: Threshold, retained share and summary budget (dsh's defaults when ``None``).

    Returns:
        An async function from the history to the history to send. A compaction that fails is
        logged and the full history sent.
    """

    async def process(messages: list[Any]) -> list[Any]:
        session = _session_of(messages)
        try:
            result = await compact_if_needed(
                session, summarizer, context_window=context_window, config=config
            )
        except (CompactionError, CompactionConfigError) as exc:
            _logger.warning("history compaction failed, the full history is sent: %s", exc)
            return messages
        if result is None:
            return messages
        bracket = [session.event_at(seq).to_wire() for seq in range(result.start_seq, session.seq)]
        return _rebuilt(session, messages, result.replacement_seq, result.summary, bracket)

    return process


def _session_of(messages: list[Any]) -> Session:
    """The history as one open turn of a detached session, each part one event."""
    session = Session.create("pydantic-ai-history")
    session.append("turn/start", {"turn": 1})
    header = {"config": {"provider": "pydantic-ai", "model": "history"}}
    session.append("request/header", {"header": header, "reason": "initial"})
    state = LogState(session)
    batch = Batch(state)
    batch.turn = 1  # the turn is left open: compaction runs inside it, before the next step
    for index, message in enumerate(messages):
        if message.kind == "response":
            batch.add(response_message(message, "history", strict=False), {PART_KEY: [index, None]})
            continue
        for part_index, part in enumerate(message.parts):
            converted = message_of_part(part, "history", strict=False)
            if converted is not None:
                batch.add(converted, {PART_KEY: [index, part_index]})
    if batch.step is not None:
        session.append("step/end", {"turn": 1, "step": batch.step})
    return session


def _rebuilt(
    session: Session,
    messages: list[Any],
    checkpoint: int,
    summary: tuple[Mapping[str, Any], ...],
    bracket: list[dict[str, Any]],
) -> list[Any]:
    from pydantic_ai.messages import CompactionPart, ModelRequest

    kept: dict[int, list[int] | None] = {}
    order: list[int | None] = []
    for seq in session.surface.nodes:
        if seq == checkpoint:
            order.append(None)
            continue
        where = session.event_at(seq).data.get(PART_KEY)
        if where is None:
            continue
        index, part = where
        if index not in kept:
            kept[index] = []
            order.append(index)
        if part is not None:
            kept[index].append(part)  # type: ignore[union-attr]  # a request's list
    shown = {index for index in range(len(messages)) if index in kept}
    text = "".join(block["text"] for block in summary if block.get("type") == "text")
    metadata = {
        "agentlog": {
            "replacedMessages": [i for i in range(len(messages)) if i not in shown],
            "events": bracket,
        }
    }
    result: list[Any] = []
    for index in order:
        if index is None:
            result.append(ModelRequest(parts=[CompactionPart(content=text, metadata=metadata)]))
            continue
        message = messages[index]
        parts = kept[index]
        if message.kind == "request" and parts is not None and len(parts) < len(message.parts):
            message = dataclasses.replace(message, parts=[message.parts[i] for i in parts])
        result.append(message)
    return result
