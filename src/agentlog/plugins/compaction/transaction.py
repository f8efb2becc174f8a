"""The compaction transaction: lock, summarize, check, replace — or close with the error.

Implements spec/plugins.md §2.9. A prelude, in one group commit, validates the span (on the
surface, in order, balanced at both ends: a split is refused, never widened), checks the durable
lock and the turn owner, and appends ``compaction/start`` — the lock, taken before the summary
is awaited. Then: price the span and build the summary request; await the summarizer; keep its
text and frame the checkpoint, which must be smaller than what it replaces; and, in a second
group commit, check that the surface did not move meanwhile and commit ``compaction/summary``,
the replacement ``user/message`` (citing the start, the summary and every shadowed node) and
``compaction/end``. Any failure before the close appends one ``compaction/end`` carrying the
error instead, so the lock is released and the attempt is on record; the surface is unchanged.

The session is a ``Session`` or an ``agentlog.aio`` session (``plugins.sessions``): the group
commits are what keep another task's append out of the prelude and the commit.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentlog.errors import CompactionError
from agentlog.events import Event
from agentlog.lifecycle import (
    open_turn,
    tool_pairing_balanced_after,
    tool_pairing_balanced_before,
)
from agentlog.plugins.compaction.failures import (
    SurfaceChanged,
    classified,
    close_with_error,
    flush_quietly,
    not_durable,
)
from agentlog.plugins.compaction.invariants import CHECKPOINT_KIND
from agentlog.plugins.compaction.summary import (
    INSTRUCTION,
    Summarizer,
    SummaryRequest,
    frame_summary,
    summary_text_blocks,
)
from agentlog.plugins.meter import NodePrice, TokenMeter
from agentlog.plugins.sessions import AsyncSessionLike, as_async
from agentlog.plugins.tokens import estimate_message
from agentlog.session import Session

__all__ = ["CompactionResult", "Stability", "active_compaction", "run_compaction"]

Stability = Literal["whole-surface", "selected-span"]
"""What may not change while the summary is written: any surface node, or the span's."""

INSTRUCTION_SOURCE = {"kind": "compact-basic"}
"""The source of the instruction message (dsh's ``dsh-compaction-basic`` plugin, format 4)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionResult:
    """What a successful compaction wrote (spec/plugins.md §2.2, ``CompactionResult``)."""

    compaction_id: str
    source_command_id: str | None
    start_seq: int
    """Seq of ``compaction/start``."""
    summary_seq: int
    """Seq of ``compaction/summary``."""
    replacement_seq: int
    """Seq of the checkpoint ``user/message`` that replaced the span."""
    end_seq: int
    """Seq of ``compaction/end``."""
    summary: tuple[Mapping[str, Any], ...]
    """The summary's text blocks (unframed)."""
    shadowed_seqs: tuple[int, ...]
    """The surface nodes the checkpoint replaced, in order."""
    shadowed_token_count: int
    """Their heuristic price (the shadow price recorded on ``compaction/summary``)."""

    @property
    def shadowed_range(self) -> tuple[int, int]:
        """First and last shadowed node."""
        return self.shadowed_seqs[0], self.shadowed_seqs[-1]


def active_compaction(session: Session) -> int | None:
    """The seq of a ``compaction/start`` still holding the lock, if any.

    A start with no later ``compaction/end`` is live unless a later ``session/end-seed`` shows
    that the writer holding it is gone (a crash: the resumed session may compact again).
    """
    for event in reversed(session.events):
        if event.type in ("compaction/end", "session/end-seed"):
            return None
        if event.type == "compaction/start":
            return event.seq
    return None


def span_nodes(session: Session, start: int, end: int, *, prefix: str) -> tuple[int, ...]:
    """The surface nodes from ``start`` to ``end``, checked replaceable (§2.9 step 2).

    Raises:
        CompactionError: ``invalid`` — a seq not on the surface, a reversed or unbalanced span.
    """
    nodes = session.surface.nodes
    for name, seq in (("start", start), ("end", end)):
        if seq not in nodes:
            raise CompactionError(
                f"{prefix}: {name} seq {seq} not found in surface", code="invalid"
            )
    first, last = nodes.index(start), nodes.index(end)
    if first > last:
        raise CompactionError(
            f"{prefix}: start seq {start} (position {first}) is after end seq {end} "
            f"(position {last}) on the surface",
            code="invalid",
        )
    if not tool_pairing_balanced_before(session, start):
        raise CompactionError(
            f"{prefix}: start seq {start} is not a balanced boundary (would split a step's "
            "tool-call/result pair)",
            code="invalid",
        )
    if not tool_pairing_balanced_after(session, end):
        raise CompactionError(
            f"{prefix}: end seq {end} is not a balanced boundary (would split a step, or the "
            "step is still open)",
            code="invalid",
        )
    return nodes[first : last + 1]


async def run_compaction(
    session: Session | AsyncSessionLike,
    start: int,
    end: int,
    summarizer: Summarizer,
    *,
    manual: bool,
    meter: TokenMeter,
    max_tokens: int,
    target: tuple[str, str] | None,
    source_command_id: str | None = None,
    cancel: asyncio.Event | None = None,
) -> CompactionResult:
    """Replace the surface span ``start..end`` with a summary checkpoint, or change nothing.

    ``manual`` selects the standalone flavour (no open turn allowed, ``turn: null``, only the
    span must stay put, failures classified by ``code``, durable before returning); otherwise
    the bracket belongs to the open turn and the whole surface must stay put.

    Raises:
        CompactionError: ``busy`` (the lock is held, or the turn owner is wrong), ``invalid``
            (the span), ``changed``, ``summary``, ``commit``, ``persistence`` or ``cancelled``.
        asyncio.CancelledError: when the task is cancelled (after the bracket was closed).
    """
    prefix = "manual compaction" if manual else "compactRegion"
    if cancel is not None and cancel.is_set():
        raise CompactionError("manual compaction was cancelled", code="cancelled")
    writer = as_async(session)
    log = writer.sync
    compaction_id = str(uuid.uuid4())
    ids = {"compactionId": compaction_id}
    if source_command_id is not None:
        ids["sourceCommandId"] = source_command_id
    span, owner, start_event = await _lock(writer, start, end, ids, manual=manual, prefix=prefix)
    stage = "summary"
    end_event: Event | None = None
    try:
        surface, prepared = _prices(meter, log, span)
        request = _request(log, span, target, max_tokens)
        summary = await summarizer(request)
        text = summary_text_blocks(summary.output)
        checkpoint = {
            "id": str(uuid.uuid4()),
            "role": "user",
            "content": frame_summary(text),
            "source": {"kind": CHECKPOINT_KIND, **ids},
        }
        framed = estimate_message(checkpoint)
        replaced = sum(node.tokens for node in prepared)
        if framed >= replaced:
            raise CompactionError(
                f"summary is not smaller than the shadowed content ({framed} estimated framed "
                f"tokens >= {replaced})",
                code="summary",
            )
        if cancel is not None and cancel.is_set():
            raise CompactionError("manual compaction was cancelled", code="cancelled")
        shadowed = list(span)
        summary_data: dict[str, Any] = {
            **ids,
            "summary": text,
            "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
            "shadowedSeqs": shadowed,
            "shadowedTokenCount": sum(node.heuristic_tokens for node in prepared),
            "provider": summary.provider,
            "model": summary.model,
        }
        if summary.max_tokens is not None:
            summary_data["maxTokens"] = summary.max_tokens
        if summary.usage is not None:
            summary_data["usage"] = summary.usage
        summary_data["rawOutput"] = list(summary.output)
        if summary.llm_stream_call:
            summary_data["llmStreamCall"] = True
        summary_data.update(summary.extra)
        async with writer.batch():
            _check_stable(log, meter, span, surface, prepared, manual=manual, prefix=prefix)
            stage = "commit"
            summary_event = await writer.append("compaction/summary", summary_data)
            replacement = await writer.append(
                "user/message",
                checkpoint,
                surface_op={"op": "replace", "startSeq": shadowed[0], "endSeq": shadowed[-1]},
                source_event_seqs=[start_event.seq, summary_event.seq, *shadowed],
            )
            end_event = await writer.append("compaction/end", {**ids, "turn": owner})
    except BaseException as exc:
        if end_event is not None and not isinstance(exc, asyncio.CancelledError):
            raise not_durable(exc, manual=manual) from exc  # it landed: the write failed
        closed = await close_with_error(writer, ids, owner, exc)
        if manual and closed:
            await flush_quietly(writer)
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise classified(exc, stage=stage if closed else "commit", manual=manual) from exc
    if manual:
        try:
            await writer.flush()
        except Exception as exc:
            raise not_durable(exc, manual=manual) from exc
    return CompactionResult(
        compaction_id=compaction_id,
        source_command_id=source_command_id,
        start_seq=start_event.seq,
        summary_seq=summary_event.seq,
        replacement_seq=replacement.seq,
        end_seq=end_event.seq,
        summary=tuple(text),
        shadowed_seqs=tuple(shadowed),
        shadowed_token_count=summary_data["shadowedTokenCount"],
    )


async def _lock(
    writer: AsyncSessionLike,
    start: int,
    end: int,
    ids: Mapping[str, Any],
    *,
    manual: bool,
    prefix: str,
) -> tuple[tuple[int, ...], Any, Event]:
    """The prelude, one group commit: check span, lock and owner; append ``compaction/start``.

    Returns the span's nodes, the bracket's owner and the start event. A refusal writes
    nothing; when the start landed but its write failed, the bracket is closed with the error.
    """
    log = writer.sync
    landed: Event | None = None
    owner: Any = None
    try:
        async with writer.batch():
            span = span_nodes(log, start, end, prefix=prefix)
            if active_compaction(log) is not None:
                raise CompactionError(
                    "compaction: compaction already in progress; the session compaction lock "
                    "is already active",
                    code="busy",
                )
            turn = open_turn(log.events)
            if manual and turn is not None:
                raise CompactionError(
                    "manual compaction: the session already has an open turn", code="busy"
                )
            if not manual and turn is None:
                raise CompactionError(
                    "compactRegion: no open turn — automatic compaction events must be enclosed "
                    "in a turn",
                    code="busy",
                )
            owner = None if manual else turn
            landed = await writer.append("compaction/start", {**ids, "turn": owner})
    except Exception as exc:
        if landed is None:
            raise
        if await close_with_error(writer, ids, owner, exc) and manual:
            await flush_quietly(writer)
        raise not_durable(exc, manual=manual) from exc
    return span, owner, landed


def _prices(
    meter: TokenMeter, session: Session, span: Sequence[int]
) -> tuple[tuple[NodePrice, ...], list[NodePrice]]:
    """The priced surface and the span's prices; the span must still be as selected."""
    surface = meter.measure(session).nodes
    measured = {node.seq: node for node in surface}
    if any(seq not in measured for seq in span):
        raise SurfaceChanged("compaction: selected surface changed before summarization began")
    return surface, [measured[seq] for seq in span]


def _request(
    session: Session, span: Sequence[int], target: tuple[str, str] | None, max_tokens: int
) -> SummaryRequest:
    """The summary request: the span's messages (the system prompt first), the instruction."""
    messages: list[Any] = []
    nodes = session.surface.nodes
    if nodes and nodes[0] not in span and session.event_at(nodes[0]).type == "system/message":
        head = session.derive_event_message(session.event_at(nodes[0]))
        if head is not None:
            messages.append(head)
    for seq in span:
        message = session.derive_event_message(session.event_at(seq))
        if message is not None:
            messages.append(message)
    messages.append(
        {
            "id": str(uuid.uuid4()),
            "role": "user",
            "content": [{"type": "text", "text": INSTRUCTION}],
            "source": INSTRUCTION_SOURCE,
        }
    )
    header = session.request_header()
    tools = header.get("tools", ()) if isinstance(header, Mapping) else ()
    provider, model = target if target is not None else (None, None)
    return SummaryRequest(
        session_id=session.id,
        messages=messages,
        tools=tools,
        provider=provider,
        model=model,
        max_tokens=max_tokens,
    )


def _check_stable(
    session: Session,
    meter: TokenMeter,
    span: Sequence[int],
    surface: tuple[NodePrice, ...],
    prepared: list[NodePrice],
    *,
    manual: bool,
    prefix: str,
) -> None:
    """Nothing the checkpoint replaces (automatic: nothing visible at all) moved (§2.9 step 9).

    Log-only appends meanwhile are fine; a surface append or replace is not, except, for a
    manual compaction, nodes appended after the span.
    """
    measured = meter.measure(session).nodes
    if not manual:
        if measured != surface:
            raise SurfaceChanged("compaction: session surface changed during summarization")
        return
    try:
        current = span_nodes(session, span[0], span[-1], prefix=prefix)
    except CompactionError:
        raise SurfaceChanged(
            "compaction: the selected span is no longer a valid replacement target"
        ) from None
    if list(current) != list(span):
        raise SurfaceChanged("compaction: the selected span changed during summarization")
    prices = {node.seq: node for node in measured}
    if [prices[seq] for seq in span] != prepared:
        raise SurfaceChanged("compaction: the selected span was rewritten during summarization")
