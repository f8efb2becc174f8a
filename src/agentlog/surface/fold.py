"""Replay a complete log through the surface rules: ``fold_surface()``.

Implements spec/core.md §5.8 ``foldSurface``: the pure, from-scratch counterpart of the
incremental surface a ``Session`` keeps. It applies the same transition rules (so it raises the
same errors) and also returns what the incremental state does not retain: one replacement
record per replace, and every projected message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentlog.errors import EventRejected
from agentlog.events import SURFACE_EVENT_TYPES, RuleViolation, check_event_data
from agentlog.surface.projections import MessageProjection, projection_registry
from agentlog.surface.state import SurfaceState
from agentlog.values import JsonValue

__all__ = ["FoldResult", "Replacement", "fold_surface"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Replacement:
    """One replace: the replacing event and the nodes it shadowed."""

    seq: int
    """Seq of the replacing event."""
    start: int
    """``startSeq`` of its replace op."""
    end: int
    """``endSeq`` of its replace op."""
    shadowed_seqs: tuple[int, ...]
    """The surface nodes it removed, in surface order."""

    def to_wire(self) -> dict[str, Any]:
        """The record in the reference's wire shape ``{seq, start, end, shadowedSeqs}``."""
        return {
            "seq": self.seq,
            "start": self.start,
            "end": self.end,
            "shadowedSeqs": list(self.shadowed_seqs),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class FoldResult:
    """The surface of a log replayed from scratch."""

    nodes: tuple[int, ...]
    """The surface nodes after the last event, in order."""
    replacements: tuple[Replacement, ...]
    """Every replace, in log order."""
    projected_messages: tuple[tuple[int, JsonValue], ...]
    """``(node seq, message)`` for every message a projection rewrote, latest copy."""
    replace_generation: int
    """Number of replaces."""
    content_generation: int
    """Number of replaces plus projections."""


def fold_surface(
    events: Iterable[Mapping[str, Any]],
    projections: Iterable[MessageProjection] = (),
    *,
    base_seq: int = 0,
) -> FoldResult:
    """Replay ``events`` (``Event``s or wire dicts) through the data and surface rules.

    Args:
        events: A contiguous log, or a window of one whose first seq is ``base_seq``.
        projections: Message projections the log may use (e.g. ``agentlog.IMAGE_OFFLOAD``).
        base_seq: Seq of the first event; a replace reaching before it is "not found".

    Returns:
        The final nodes, the replacement records and the projected messages.

    Raises:
        EventRejected: the first event the rules refuse, with the catalogue text.
    """
    log: Sequence[Mapping[str, Any]] = events if isinstance(events, Sequence) else list(events)

    def lookup(seq: int) -> Mapping[str, Any] | None:
        index = seq - base_seq
        return log[index] if 0 <= index < len(log) else None

    state = SurfaceState(lookup, projection_registry(projections), base_seq)
    replacements: list[Replacement] = []
    for index, event in enumerate(log):
        if not isinstance(event, Mapping) or "type" not in event or "seq" not in event:
            raise EventRejected(
                f"event at index {index} has an invalid event envelope", seq=base_seq + index
            )
        try:
            if event["type"] in SURFACE_EVENT_TYPES:
                check_event_data(event["type"], event.get("data"))
        except RuleViolation as violation:
            raise EventRejected(
                f"{event['type']} at seq {event.get('seq')} {violation}",
                event_type=event["type"],
                seq=event.get("seq"),
            ) from None
        plan = state.advance(event)
        if plan is not None and plan[0] == "replace":
            op = event["surfaceOp"]
            replacements.append(
                Replacement(
                    seq=event["seq"],
                    start=int(op["startSeq"]),
                    end=int(op["endSeq"]),
                    shadowed_seqs=tuple(plan[3]),
                )
            )
    return FoldResult(
        nodes=tuple(state.nodes),
        replacements=tuple(replacements),
        projected_messages=tuple(state.projected.items()),
        replace_generation=state.replace_generation,
        content_generation=state.content_generation,
    )
