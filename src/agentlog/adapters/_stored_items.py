"""The items of a stored session, read straight from its store (``AgentlogSession``'s cold read).

Implements, for the ``openai_agents`` adapter, the trust DESIGN.md allows a reader of what
agentlog itself wrote: a session's events were validated when they were appended, so the items
a reader needs can come from the store's trusted read (``Store.read_raw``: plain JSON, only the
payloads of the message types decoded) instead of a resumed ``Session`` (every event parsed,
checked and frozen, the surface folded, the items copied out again). The surface is folded
from the ``surfaceOp`` markers alone (``surface_of_markers``), and each node gives its items
as ``ItemLog`` reads them (``node_items``).

It reads only the message events (and the last seq of every type), and gives up — returns
``None``, and the caller opens the session, which validates the whole log or refuses it —
whenever what is stored is more than such a log: a header of another format version, a torn
tail or a turn left open (a crash whose repair closers only the resume adds), a message
projection, an undeclared event type (even an ignorable one), a marker that is not one an
append would have accepted, a message or kept items not of the shapes agentlog writes.
Damage in a payload it decodes is refused as by any read (``CorruptLog``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentlog.adapters._item_log import ELIDED_KEY, ITEMS_KEY, node_items, restore_elided
from agentlog.adapters._marker_surface import surface_of_markers
from agentlog.adapters._responses import CALL_OUTPUT_TYPES
from agentlog.errors import SessionNotFound
from agentlog.events import PROJECTION_TYPES, SURFACE_EVENT_TYPES, is_declared
from agentlog.formats import FORMAT_VERSION
from agentlog.stores import Store
from agentlog.stores.restore import collector_paused
from agentlog.surface import derive_event_message

__all__ = ["stored_items"]


def stored_items(store: Store, session_id: str) -> list[Any] | None:
    """Every item of the stored session ``session_id``, fresh and plain, oldest first.

    The same list a session opened from the same log would give (``ItemLog.items(None)``);
    ``[]`` for a session that is not stored; ``None`` when the log needs the full open (see the
    module docstring).

    Raises:
        CorruptLog: when a payload it reads is damaged.
    """
    with collector_paused():  # acyclic plain JSON: nothing for the collector to find
        return _items(store, session_id)


def _items(store: Store, session_id: str) -> list[Any] | None:
    try:
        raw = store.read_raw(session_id, SURFACE_EVENT_TYPES)
    except SessionNotFound:
        return []
    header = raw.header
    if raw.torn or not isinstance(header, Mapping) or header.get("version") != FORMAT_VERSION:
        return None
    last = raw.last_seqs
    if any(event_type in PROJECTION_TYPES or not is_declared(event_type) for event_type in last):
        return None  # a projection rewrites messages; an undeclared type may be refused
    if last.get("turn/start", -1) > last.get("turn/end", -1):
        return None  # a turn left open: the resume adds its repair closers
    nodes = surface_of_markers(raw.events)
    if nodes is None:
        return None
    try:
        return _node_items(nodes)
    except (AttributeError, IndexError, KeyError, TypeError):
        return None  # not the shapes agentlog writes: the full open judges the log


def _node_items(nodes: Sequence[dict[str, Any]]) -> list[Any]:
    """The items of the surface nodes, in order: ``node_items`` of each, the common case inline.

    A node that keeps its items as a plain list (what every ``add_items`` writes) has them
    restored in place and its calls' types noted right here; any other node (agentlog's own, a
    compaction checkpoint) goes through ``node_items``.
    """
    call_types: dict[Any, str] = {}
    items: list[Any] = []
    extend = items.extend
    for event in nodes:
        data = event["data"]
        kept = data.get(ITEMS_KEY)
        if type(kept) is not list:
            extend(node_items(event, derive_event_message, call_types, owned=True))
            continue
        elided = data.get(ELIDED_KEY)
        if elided:
            message = derive_event_message(event)
            restore_elided(kept, elided, message["content"] if message else ())
        for item in kept:
            if type(item) is dict:
                call_type = item.get("type")
                if call_type in CALL_OUTPUT_TYPES:
                    call_types[item.get("call_id")] = call_type
        extend(kept)
    return items
