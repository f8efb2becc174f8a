"""The surface of a trusted stored log, folded from its ``surfaceOp`` markers alone.

Implements spec/core.md §5.4 for the adapters' cold reads (``Store.read_raw``: plain wire dicts
of events agentlog validated when it appended them): an ``append`` marker adds its event as a
node, a ``replace`` swaps the span of nodes from ``startSeq`` to ``endSeq`` for its own event.
Nothing else is checked; a marker an append would have refused makes the fold give up, and the
caller opens the session in full, which judges the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentlog.values import is_seq

__all__ = ["surface_of_markers"]


def surface_of_markers(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The events of the surface nodes in order, or ``None`` for a marker a valid log cannot hold.

    Example:
        >>> events = [
        ...     {"seq": 0, "surfaceOp": "append"},
        ...     {"seq": 1},
        ...     {"seq": 2, "surfaceOp": "append"},
        ...     {"seq": 3, "surfaceOp": {"op": "replace", "startSeq": 0, "endSeq": 2}},
        ... ]
        >>> [event["seq"] for event in surface_of_markers(events)]
        [3]
    """
    seqs: list[int] = []
    nodes: list[dict[str, Any]] = []
    for event in events:
        op = event.get("surfaceOp")
        if op is None:
            continue
        if op == "append":
            seqs.append(event["seq"])
            nodes.append(event)
            continue
        if not isinstance(op, dict) or op.keys() != {"op", "startSeq", "endSeq"}:
            return None
        start, end = op["startSeq"], op["endSeq"]
        if op["op"] != "replace" or not (is_seq(start) and is_seq(end)):
            return None
        try:
            i, j = seqs.index(start), seqs.index(end)
        except ValueError:
            return None
        if i > j:
            return None
        seqs[i : j + 1] = [event["seq"]]
        nodes[i : j + 1] = [event]
    return nodes
