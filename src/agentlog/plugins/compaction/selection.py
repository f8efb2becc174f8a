"""Which span of the surface a compaction replaces (spec/plugins.md §2.8).

Always head-anchored: from the first node (the first after a system-prompt head) up to a
balanced cut that leaves at least ``retain_tokens`` of the newest history verbatim. The cut moves
toward the head until it separates no tool call from its result; if it reaches the head,
there is nothing to compact. A previous checkpoint at the head is therefore summarised again,
merged into the new summary.
"""

from __future__ import annotations

from agentlog.errors import TokenMeterError
from agentlog.lifecycle import tool_pairing_balanced_before
from agentlog.plugins.meter import Measurement
from agentlog.session import Session

__all__ = ["select_compactable_range"]


def select_compactable_range(
    session: Session, measurement: Measurement, retain_tokens: int
) -> tuple[int, int] | None:
    """The first and last node of the span to compact, or ``None`` when nothing may go.

    Args:
        session: The session measured.
        measurement: Its current measurement (``TokenMeter.measure``).
        retain_tokens: Newest history to keep, in route-priced tokens; ``0`` keeps only the
            newest indivisible unit.

    Raises:
        TokenMeterError: when the measurement is not of the session's current surface.
    """
    nodes = measurement.nodes
    if not nodes:
        return None
    if tuple(node.seq for node in nodes) != session.surface.nodes:
        raise TokenMeterError(
            "compaction: token-meter surface does not match the current session surface"
        )
    first = 1 if session.event_at(nodes[0].seq).type == "system/message" else 0
    kept, keep_from = 0, 0
    for index in range(len(nodes) - 1, -1, -1):
        kept += nodes[index].tokens
        if kept >= retain_tokens:
            keep_from = index
            break
    while keep_from > first and not tool_pairing_balanced_before(session, nodes[keep_from].seq):
        keep_from -= 1
    if keep_from <= first:
        return None
    return nodes[first].seq, nodes[keep_from - 1].seq
