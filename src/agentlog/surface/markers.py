"""Surface markers of one event: its ``surfaceOp`` and its provenance (``sourceEventSeqs``).

Implements the event-local rules of spec/core.md §5.1–§5.3 for format 4: marker eligibility
(E7–E9), the shape of ``surfaceOp`` (E10, E11), the earlier-endpoint rule (E18) and the
``sourceEventSeqs`` rules 1–5 with the assistant ban (E12–E17). Rules that need the current
surface (range lookup, coverage, guards) live in ``agentlog.surface.state``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentlog.errors import EventRejected
from agentlog.events import SURFACE_EVENT_TYPES, is_declared
from agentlog.values import is_seq

__all__ = ["APPEND", "ReplaceRange", "check_markers"]

APPEND: Final = "append"
_MISSING: Final = object()

ReplaceRange = tuple[int, int]
"""The ``(startSeq, endSeq)`` of a replace op, as ints."""


def _reject(message: str, event: Mapping[str, Any]) -> EventRejected:
    return EventRejected(message, event_type=event.get("type"), seq=event.get("seq"))


def check_markers(event: Mapping[str, Any]) -> str | ReplaceRange | None:
    """Validate the surface markers of ``event`` and return its parsed op.

    Returns ``"append"``, a ``(startSeq, endSeq)`` replace range, or ``None`` for an event that
    never touches the surface (log-only, or an undeclared type marked ``ignorable``, whose
    markers are opaque and kept as they are).

    Raises:
        EventRejected: with the exact catalogue text (E7–E18).
    """
    event_type = event["type"]
    surface_op = event.get("surfaceOp", _MISSING)
    sources = event.get("sourceEventSeqs", _MISSING)
    if surface_op == APPEND and sources is _MISSING and event_type in SURFACE_EVENT_TYPES:
        return APPEND  # the common case, decided without further checks
    if event_type not in SURFACE_EVENT_TYPES:
        if event.get("ignorable") is True and not is_declared(event_type):
            return None
        if surface_op is not _MISSING:
            raise _reject(
                f'session event "{event_type}" is not surface-eligible and cannot carry surfaceOp',
                event,
            )
        if sources is not _MISSING:
            raise _reject(
                f'session event "{event_type}" is not surface-eligible and cannot carry '
                "sourceEventSeqs",
                event,
            )
        return None
    seq = event["seq"]
    op: str | ReplaceRange
    if surface_op is _MISSING:
        raise _reject(
            f'session event "{event_type}" is surface-eligible and requires a surfaceOp marker',
            event,
        )
    if surface_op == APPEND:
        op = APPEND  # the constant itself: callers compare with ``is``
    elif isinstance(surface_op, dict):
        op = _replace_range(surface_op, event)
        if not (op[0] < seq and op[1] < seq):
            raise _reject(
                f"surface replace at seq {seq}: startSeq and endSeq must reference earlier events",
                event,
            )
    else:
        raise _reject(f'session event "{event_type}" carries an invalid surfaceOp', event)
    if sources is not _MISSING:
        _check_sources(sources, event)
    return op


def _replace_range(surface_op: dict[str, Any], event: Mapping[str, Any]) -> ReplaceRange:
    """spec/core.md §5.1 [F4]: exactly ``{op: "replace", startSeq, endSeq}`` with seqs."""
    start: Any = surface_op.get("startSeq")
    end: Any = surface_op.get("endSeq")
    if len(surface_op) == 3 and surface_op.get("op") == "replace" and is_seq(start) and is_seq(end):
        return int(start), int(end)
    raise _reject(f'session event "{event["type"]}" carries an invalid replace surfaceOp', event)


def _check_sources(sources: Any, event: Mapping[str, Any]) -> None:
    """spec/core.md §5.3 rules 1–5 and the [F2+] assistant ban (E12–E17), in that order."""
    event_type = event["type"]
    seq = event["seq"]
    if event_type == "assistant/message":
        raise _reject(
            "assistant/message embeds its source stream and cannot carry sourceEventSeqs", event
        )
    if not isinstance(sources, list):
        raise _reject(f"sourceEventSeqs on event at seq {seq} must be an array when present", event)
    if not sources:
        raise _reject("sourceEventSeqs must not be empty", event)
    for source in sources:
        if not is_seq(source):
            raise _reject(
                f'session event "{event_type}" sourceEventSeqs must densely contain '
                "non-negative safe integers",
                event,
            )
    if len(set(sources)) != len(sources):
        raise _reject("sourceEventSeqs must not contain duplicates", event)
    for source in sources:
        if source >= seq:
            raise _reject(
                f"sourceEventSeqs must reference earlier events: {_num(source)} >= current seq "
                f"{seq}",
                event,
            )


def _num(value: Any) -> Any:
    """Print an integral float the way JS does (``3``, not ``3.0``)."""
    return int(value) if isinstance(value, float) else value
