"""An ADK session read straight from its store: ``get_session`` of a session not open here.

Implements, for the ADK adapter, the trust DESIGN.md allows a reader of what agentlog itself
wrote: every event of an ADK session was validated when ``append_event`` wrote it, so reading
it needs no resumed ``Session`` (every event parsed, checked and frozen, the surface folded).
``read`` takes the store's trusted read (``Store.read_raw``) of the events that can carry an
ADK event — the message types, ``adk/event`` and ``adk/session`` — as fresh plain JSON,
which becomes the returned ADK events without another copy. The view is the one
``_adk_log`` gives of an opened session: the carriers in log order less those a compaction's
replace shadowed (the surface folded from the ``surfaceOp`` markers alone, spec/core.md §5.4),
the session-scoped state (``_adk_log.session_state``), and the revision and update time of the
last carrier.

It gives up — returns ``None``, and the caller opens the session, which validates the whole log
or refuses it — for a header of another format version, a torn tail, or a marker a valid log
cannot hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson
from google.adk.events.event import Event as AdkEvent
from google.adk.sessions.base_session_service import GetSessionConfig

from agentlog.adapters._adk_build import build
from agentlog.adapters._adk_log import EVENT, SESSION_RECORD, scoped_delta
from agentlog.adapters._marker_surface import surface_of_markers
from agentlog.events import SURFACE_EVENT_TYPES
from agentlog.formats import FORMAT_VERSION
from agentlog.stores import Store

__all__ = ["CARRIER_TYPES", "ColdView", "adk_events", "filtered", "read"]

CARRIER_TYPES: Final = SURFACE_EVENT_TYPES | {EVENT, SESSION_RECORD}
"""The event types that can carry an ADK event or the session record."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ColdView:
    """What ``get_session`` needs of a stored ADK session."""

    carriers: list[dict[str, Any]]
    """The visible carrier events (wire dicts, the caller's), in log order."""
    by_seq: Mapping[int, dict[str, Any]]
    """Every event read, by seq (the blocks a stripped carrier refers to)."""
    state: dict[str, Any]
    """The session-scoped state (plain values, the caller's)."""
    revision: int
    """Seq of the last carrier or of the session record (the stale-writer marker)."""
    updated: float
    """ADK timestamp of that event."""


def read(store: Store, key: str) -> ColdView | None:
    """The view of the stored session ``key``, or ``None`` when it needs the full open.

    Raises:
        SessionNotFound: when no session has that id.
        CorruptLog: when a payload it reads is damaged.
    """
    raw = store.read_raw(key, CARRIER_TYPES)
    header = raw.header
    if raw.torn or not isinstance(header, Mapping) or header.get("version") != FORMAT_VERSION:
        return None
    events = raw.events
    nodes = surface_of_markers(events)
    if nodes is None:
        return None
    visible = {node["seq"] for node in nodes}
    carriers: list[dict[str, Any]] = []
    revision, updated = -1, 0.0
    snapshot_at = -1  # index in ``events`` of the last state snapshot
    deltas: list[int] = []  # indexes of the carriers that set state (after that snapshot)
    for index, event in enumerate(events):
        data = event["data"]
        payload = data.get("adk") if type(data) is dict else None
        if type(payload) is dict:
            revision, updated = event["seq"], payload["timestamp"]
            actions = payload.get("actions")
            if actions and type(actions) is dict and actions.get("state_delta"):
                deltas.append(index)
            if "adkState" in data:  # a compaction's replace: the state at that point (its own
                snapshot_at, deltas = index, []  # delta included)
            # a surface event off the surface was shadowed (``visible_carriers``' rule)
            if event["seq"] in visible or event["type"] not in SURFACE_EVENT_TYPES:
                carriers.append(event)
        elif event["type"] == SESSION_RECORD:
            revision, updated = event["seq"], data["createTime"]
            snapshot_at, deltas = index, []
    return ColdView(
        carriers=carriers,
        by_seq=_BySeq(events),
        state=_state(events, snapshot_at, deltas),
        revision=revision,
        updated=updated,
    )


def _state(events: Sequence[dict[str, Any]], snapshot_at: int, deltas: list[int]) -> dict[str, Any]:
    """The session-scoped state: the last snapshot, then the deltas of the carriers after it.

    ``deltas``: the indexes of those carriers (found by ``read``'s pass, so no second one).
    """
    state: dict[str, Any] = {}
    if snapshot_at >= 0:
        data = events[snapshot_at]["data"]
        state = data["adkState"] if "adkState" in data else scoped_delta(data["state"], "")
    for index in deltas:
        state.update(scoped_delta(events[index]["data"]["adk"]["actions"]["state_delta"], ""))
    return state


class _BySeq(Mapping[int, dict[str, Any]]):
    """The events read, by seq; the index is built at the first lookup (most reads need none)."""

    def __init__(self, events: Sequence[dict[str, Any]]) -> None:
        self._events = events
        self._index: dict[int, dict[str, Any]] | None = None

    def _built(self) -> dict[int, dict[str, Any]]:
        if self._index is None:
            self._index = {event["seq"]: event for event in self._events}
        return self._index

    def __getitem__(self, seq: int) -> dict[str, Any]:
        return self._built()[seq]

    def __iter__(self) -> Any:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._events)


def filtered(carriers: list[Any], config: GetSessionConfig | None) -> list[Any]:
    """The carriers (wire dicts or events) ``GetSessionConfig`` keeps.

    From ``after_timestamp`` on (inclusive), then the last ``num_recent_events``.
    """
    if config is not None and config.after_timestamp is not None:
        after = config.after_timestamp
        carriers = [c for c in carriers if c["data"]["adk"]["timestamp"] >= after]
    if config is not None and config.num_recent_events is not None:
        count = config.num_recent_events
        carriers = carriers[-count:] if count else []
    return carriers


def adk_events(view: ColdView, config: GetSessionConfig | None) -> list[AdkEvent]:
    """The ADK events of ``view`` that ``config`` keeps, their stripped fields restored.

    What ``_adk_codec.decode`` does for each carrier, in one loop and in place: the carriers
    are the read's own plain JSON, so each stripped field is put back where it was and the
    dump becomes the event (``_adk_build.build``), with no copy and no lookup closure.
    """
    by_seq = view.by_seq
    events: list[AdkEvent] = []
    append, loads = events.append, orjson.loads
    for carrier in filtered(view.carriers, config):
        data = carrier["data"]
        payload = data["adk"]
        manifest = data.get("adkStripped")
        if manifest:
            parts = payload["content"]["parts"]
            for index, field, offset, block_index in manifest:
                source = carrier if offset == 0 else by_seq[carrier["seq"] + offset]
                message = source["data"]
                if source["type"] != "user/message":
                    message = message["message"]
                block = message["content"][block_index]
                if field == "text":
                    parts[index]["text"] = block["text"]
                elif field == "args":
                    parts[index]["function_call"]["args"] = loads(block["arguments"])
                else:
                    parts[index]["function_response"]["response"] = loads(block["text"])
        append(build(payload))
    return events
