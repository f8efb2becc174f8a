"""The data the viewer page embeds: a session's log, surface and replacements, compactly.

One JSON document, shaped for the page's script rather than for people: event types are
interned into a list and each event is an array ``[type index, time, op, cites, data]`` whose
position is its seq (``op``: 0 log-only, 1 append, ``[start, end]`` replace). The page derives
turns, steps, what shadows what and the tool-call joins from it.
"""

from __future__ import annotations

from typing import Any

from agentlog.stores import Inspection
from agentlog.surface import fold_surface
from agentlog.values import thaw

__all__ = ["view_data"]


def view_data(inspection: Inspection) -> dict[str, Any]:
    """The viewer's data for one inspected session (``Store.inspection``)."""
    session = inspection.session
    types: dict[str, int] = {}
    events: list[list[Any]] = []
    for event in session.events:
        index = types.setdefault(event.type, len(types))
        op = event.surface_op
        if op is None:
            wire_op: Any = 0
        elif op == "append":
            wire_op = 1
        else:
            wire_op = [op["startSeq"], op["endSeq"]]
        cites = event.source_event_seqs
        events.append(
            [index, event.time, wire_op, None if cites is None else list(cites), event.data]
        )
    fold = fold_surface(session.events, session.projections)
    return {
        "session": {
            "id": session.id,
            "header": thaw(session.header),
            "storedVersion": inspection.stored_version,
            "storedEvents": inspection.stored_events,
            "location": inspection.location,
        },
        "types": list(types),
        "events": events,
        "surface": list(session.surface.nodes),
        "replacements": [[r.seq, list(r.shadowed_seqs)] for r in fold.replacements],
    }
