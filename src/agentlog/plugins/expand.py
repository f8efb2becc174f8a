"""``expand``: what a replacement shadowed, down to the original events.

A compaction summary or a pruned tool result replaces surface nodes; the replaced events stay
in the log (that is the point of the surface). ``expand(session, seq)`` follows a replacement
back to the events it hid, through any earlier replacements among them, so a user can always
see what a summary stands for.
"""

from __future__ import annotations

from agentlog.events import Event
from agentlog.session import Session
from agentlog.surface import fold_surface

__all__ = ["expand"]


def expand(session: Session, seq: int) -> list[Event]:
    """The original events the replacement at ``seq`` shadowed, in surface order.

    A shadowed node that was itself a replacement is expanded in turn, so every event returned
    is one that replaced nothing. An event that replaced nothing expands to ``[]``.

    Raises:
        IndexError: when ``seq`` is not in the log.
    """
    session.event_at(seq)
    shadowed = {
        record.seq: record.shadowed_seqs
        for record in fold_surface(session.events, session.projections).replacements
    }
    originals: list[Event] = []
    pending = list(reversed(shadowed.get(seq, ())))
    while pending:
        node = pending.pop()
        if node in shadowed:
            pending.extend(reversed(shadowed[node]))
        else:
            originals.append(session.event_at(node))
    return originals
