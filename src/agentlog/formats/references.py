"""Same-log seq references, and renumbering a log when a step drops or inserts events.

Implements the reference remapping of spec/persistence.md §5.4 (v1→v2, reused by later steps):
an event may name other events of its log by seq in the envelope's ``sourceEventSeqs`` and the
endpoints of a replace ``surfaceOp``, and in these payload fields: ``command/done.sourceEventSeq``,
a compaction's ``shadowedRange`` and ``shadowedSeqs``, ``session/title(-llm-request)
.messageSeqs`` and ``developer/message.headerSeq``. When a step renumbers, every one of them is
mapped through the same table; naming an event the step consumed is a refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from agentlog.formats.artifact import Refusal

__all__ = ["Renumbering"]

_RANGE_KEYS: Final = (("start", "end"), ("startSeq", "endSeq"))


class Renumbering:
    """Old seqs to new ones, filled in as a step emits its output.

    ``keep(old, new)`` records where an old event went; ``drop(old, why)`` records that it is
    gone (referring to it then is a refusal naming ``why``). A reference to a seq the table
    does not hold (a forward or out-of-log reference, which validation refuses later) is
    shifted by the step's net growth so it stays invalid.
    """

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._new: dict[int, int] = {}
        self._dropped: dict[int, str] = {}
        self._old_end = 0
        self._new_end = 0

    def keep(self, old: int, new: int) -> None:
        """Old event ``old`` is new event ``new``."""
        self._new[old] = new
        self._old_end = max(self._old_end, old + 1)
        self._new_end = max(self._new_end, new + 1)

    def drop(self, old: int, why: str) -> None:
        """Old event ``old`` has no counterpart (``why`` says what became of it)."""
        self._dropped[old] = why
        self._old_end = max(self._old_end, old + 1)

    def inserted(self, new: int) -> None:
        """New event ``new`` has no old counterpart."""
        self._new_end = max(self._new_end, new + 1)

    def seq(self, old: Any, referrer: int) -> Any:
        """Where old seq ``old`` went; non-integers are left for validation to refuse.

        Raises:
            Refusal: when ``old`` names a dropped event.
        """
        if type(old) is not int:
            return old
        new = self._new.get(old)
        if new is not None:
            return new
        why = self._dropped.get(old)
        if why is not None:
            raise Refusal(
                f'session "{self._session_id}" event at seq {referrer} refers to seq {old}, '
                f"which {why}"
            )
        return old + (self._new_end - self._old_end) if old >= self._old_end else old

    def event(self, event: Mapping[str, Any], new_seq: int) -> Mapping[str, Any]:
        """``event`` at ``new_seq`` with every reference mapped; the same object if unchanged."""
        old_seq = event.get("seq")
        referrer = old_seq if type(old_seq) is int else new_seq

        def mapped(old: Any) -> Any:
            return self.seq(old, referrer)

        changes: dict[str, Any] = {}
        if old_seq != new_seq:
            changes["seq"] = new_seq
        sources = event.get("sourceEventSeqs")
        if isinstance(sources, list):
            remapped = [mapped(seq) for seq in sources]
            if remapped != sources:
                changes["sourceEventSeqs"] = remapped
        surface_op = event.get("surfaceOp")
        if isinstance(surface_op, Mapping) and surface_op.get("op") == "replace":
            op = _map_range(surface_op, mapped)
            if op is not surface_op:
                changes["surfaceOp"] = op
        data = event.get("data")
        if isinstance(data, Mapping):
            new_data = _map_payload(event.get("type"), data, mapped)
            if new_data is not data:
                changes["data"] = new_data
        return {**event, **changes} if changes else event


def _map_range(value: Mapping[str, Any], mapped: Callable[[Any], Any]) -> Mapping[str, Any]:
    for start, end in _RANGE_KEYS:
        if start in value or end in value:
            changes = {key: mapped(value[key]) for key in (start, end) if key in value}
            if any(changes[key] != value[key] for key in changes):
                return {**value, **changes}
    return value


def _map_list(value: Any, mapped: Callable[[Any], Any]) -> Any:
    if not isinstance(value, list):
        return value
    remapped = [mapped(item) for item in value]
    return remapped if remapped != value else value


def _map_payload(
    event_type: Any, data: Mapping[str, Any], mapped: Callable[[Any], Any]
) -> Mapping[str, Any]:
    changes: dict[str, Any] = {}
    if event_type == "command/done" and "sourceEventSeq" in data:
        changes["sourceEventSeq"] = mapped(data["sourceEventSeq"])
    elif isinstance(event_type, str) and event_type.startswith("compaction/"):
        shadowed_range = data.get("shadowedRange")
        if isinstance(shadowed_range, Mapping):
            changes["shadowedRange"] = _map_range(shadowed_range, mapped)
        if "shadowedSeqs" in data:
            changes["shadowedSeqs"] = _map_list(data["shadowedSeqs"], mapped)
    elif event_type in ("session/title", "session/title-llm-request") and "messageSeqs" in data:
        changes["messageSeqs"] = _map_list(data["messageSeqs"], mapped)
    elif event_type == "developer/message" and "headerSeq" in data:
        changes["headerSeq"] = mapped(data["headerSeq"])
    changes = {key: value for key, value in changes.items() if value != data[key]}
    return {**data, **changes} if changes else data
