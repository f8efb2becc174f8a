"""The tool-result pruner: shorten oversized tool outputs in place, model-free and lossless.

Implements spec/plugins.md §2.12. A tool result whose text exceeds ``threshold_chars`` code
points keeps its first ``head_chars`` and last ``tail_chars``, with a marker where the middle
was; non-text blocks (images) stay, in order. Each pruned result is a surface *replace* of that
one node by a ``tool/result`` identical but for its content (the rewrite guard of spec/core.md
§5.5), immediately preceded by ``compaction/prune`` with the shadow price of the original. The
original output stays in the log: ``agentlog.expand(session, replacement_seq)`` returns it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from agentlog.errors import CompactionConfigError, CompactionError
from agentlog.lifecycle import open_turn
from agentlog.plugins.sessions import require_session
from agentlog.plugins.tokens import estimate_message
from agentlog.session import Session
from agentlog.values import thaw

__all__ = [
    "MARKER",
    "PlannedPrune",
    "PruneConfig",
    "PruneResult",
    "PrunedResult",
    "plan_pruning",
    "prune_content",
    "prune_tool_results",
    "pruned",
]

MARKER: Final = "\n\n[... tool result middle pruned ...]\n\n"
"""What replaces the middle of a pruned output."""

_KEYS: Final = {
    "thresholdChars": "threshold_chars",
    "headChars": "head_chars",
    "tailChars": "tail_chars",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class PruneConfig:
    """How large a tool output may be, and what of an oversized one is kept (code points)."""

    threshold_chars: int = 8192
    head_chars: int = 4096
    tail_chars: int = 1024

    def __post_init__(self) -> None:
        if type(self.threshold_chars) is not int or self.threshold_chars < 1:
            raise CompactionConfigError(
                "ToolResultPruneConfig: thresholdChars must be a positive integer"
            )
        for key, value in (("headChars", self.head_chars), ("tailChars", self.tail_chars)):
            if type(value) is not int or value < 0:
                raise CompactionConfigError(
                    f"ToolResultPruneConfig: {key} must be a non-negative integer"
                )
        kept = self.head_chars + len(MARKER) + self.tail_chars
        if kept > self.threshold_chars:
            raise CompactionConfigError(
                f"ToolResultPruneConfig: headChars + marker + tailChars ({kept}) must be at most "
                f"thresholdChars ({self.threshold_chars})"
            )

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> PruneConfig:
        """Read dsh's ``ToolResultPruneConfig`` (camelCase keys, all optional).

        Raises:
            CompactionConfigError: for an unknown key or an invalid value.
        """
        for key in raw:
            if key not in _KEYS:
                raise CompactionConfigError(
                    f'ToolResultPruneConfig: unknown key "{key}" (allowed: thresholdChars, '
                    "headChars, tailChars)"
                )
        return cls(**{_KEYS[key]: value for key, value in raw.items()})


@dataclass(frozen=True, slots=True, kw_only=True)
class PrunedResult:
    """One tool result pruned."""

    original_seq: int
    replacement_seq: int
    call_id: str
    chars_before: int
    chars_after: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PruneResult:
    """What one pruning pass did."""

    pruned: tuple[PrunedResult, ...] = ()
    chars_removed: int = 0


def _text_length(blocks: Sequence[Any]) -> int:
    return sum(
        len(block["text"])
        for block in blocks
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def prune_content(blocks: Sequence[Any], config: PruneConfig | None = None) -> list[Any] | None:
    """``blocks`` with the middle of their text removed, or ``None`` when within budget.

    The text of all ``text`` blocks counts as one string; the span ``[head, total - tail)`` of
    it goes, the marker is inserted once (in the first block the span touches), text blocks left
    empty are dropped and every other block keeps its place.
    """
    config = config or PruneConfig()
    total = _text_length(blocks)
    if total <= config.threshold_chars:
        return None
    cut_start, cut_end = config.head_chars, total - config.tail_chars
    pruned: list[Any] = []
    position, marked = 0, False
    for block in blocks:
        if not (
            isinstance(block, Mapping)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ):
            pruned.append(block)
            continue
        text: str = block["text"]
        start, end = position, position + len(text)
        position = end
        if end <= cut_start or start >= cut_end:
            pruned.append(block)
            continue
        head = text[: max(0, cut_start - start)]
        tail = text[max(0, cut_end - start) :] if cut_end < end else ""
        middle = "" if marked else MARKER
        marked = True
        if head + middle + tail:
            pruned.append({**block, "text": head + middle + tail})
    return pruned


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedPrune:
    """One oversized tool result and what pruning it appends (the I/O-free half of a pass)."""

    seq: int
    """The tool result's node."""
    prune: dict[str, Any]
    """The ``compaction/prune`` data: the node and its shadow price."""
    replacement: dict[str, Any]
    """The replacing ``tool/result`` data: the same result with shorter content."""
    chars_before: int
    chars_after: int

    @property
    def surface_op(self) -> dict[str, Any]:
        """The replace of exactly this node (the rewrite guard of spec/core.md §5.5)."""
        return {"op": "replace", "startSeq": self.seq, "endSeq": self.seq}

    def done(self, replacement_seq: int) -> PrunedResult:
        """The outcome once the replacement is appended at ``replacement_seq``."""
        return PrunedResult(
            original_seq=self.seq,
            replacement_seq=replacement_seq,
            call_id=str(self.replacement["message"].get("toolCallId")),
            chars_before=self.chars_before,
            chars_after=self.chars_after,
        )


def plan_pruning(session: Session, config: PruneConfig) -> list[PlannedPrune]:
    """Every oversized tool result on ``session``'s surface, and its pruned replacement.

    Raises:
        CompactionError: ``invalid`` when no turn is open (a replacement is turn-enclosed).
    """
    if open_turn(session.events) is None:
        raise CompactionError(
            "tool-result pruning needs an open turn: a replacement tool/result is turn-enclosed",
            code="invalid",
        )
    planned: list[PlannedPrune] = []
    for seq in session.surface.nodes:
        event = session.event_at(seq)
        if event.type != "tool/result":
            continue
        message = session.derive_event_message(event)
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        shorter = prune_content(content, config)
        if shorter is None:
            continue
        data = thaw(event.data)
        data["message"] = {**thaw(message), "content": thaw(shorter)}
        planned.append(
            PlannedPrune(
                seq=seq,
                prune={
                    "shadowedRange": {"start": seq, "end": seq},
                    "shadowedSeqs": [seq],
                    "shadowedTokenCount": estimate_message(message),
                },
                replacement=data,
                chars_before=_text_length(content),
                chars_after=_text_length(shorter),
            )
        )
    return planned


def pruned(done: Sequence[PrunedResult]) -> PruneResult:
    """The outcome of a pass that pruned ``done``."""
    removed = sum(result.chars_before - result.chars_after for result in done)
    return PruneResult(pruned=tuple(done), chars_removed=removed)


def prune_tool_results(session: Session, config: PruneConfig | None = None) -> PruneResult:
    """Prune every oversized tool result on ``session``'s surface (``pruneSession``).

    Each pruned result is ``compaction/prune`` followed by its replacement; the pass reaches the
    store as one group commit (``Session.batch``). A second pass is a no-op. Results pruned
    before a failing one stay pruned. For an ``agentlog.aio`` session, await
    ``agentlog.aio.prune_tool_results`` (its twin).

    Args:
        session: A session with an open turn (a replacement result is turn-enclosed).
        config: The budgets; dsh's defaults when ``None``.

    Raises:
        CompactionError: ``invalid`` when no turn is open (nothing is written).
        TypeError: for an ``agentlog.aio`` session.
    """
    require_session(session, "prune_tool_results")
    config = config or PruneConfig()
    done: list[PrunedResult] = []
    with session.batch():
        for planned in plan_pruning(session, config):
            session.append("compaction/prune", planned.prune)
            replacement = session.append(
                "tool/result",
                planned.replacement,
                surface_op=planned.surface_op,
                source_event_seqs=[planned.seq],
            )
            done.append(planned.done(replacement.seq))
    return pruned(done)
