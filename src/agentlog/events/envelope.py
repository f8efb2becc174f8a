"""The event envelope: ``type, seq, time, data, surfaceOp?, sourceEventSeqs?, ignorable?``.

Implements spec/core.md §2.1. An ``Event`` *is* its frozen wire object — a read-only mapping
with exactly the envelope keys, in camelCase as on disk — plus snake_case attributes for Python
code. Stores serialise it as it is, and ``to_wire()`` gives a plain mutable copy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final, Literal

from agentlog.errors import EventRejected
from agentlog.events.rules import RULE_TYPES, RuleViolation, check_event
from agentlog.values import (
    MAX_SAFE_INTEGER,
    FrozenDict,
    JsonValue,
    freeze_owned,
    is_safe_integer,
    is_seq,
    new_event_record,
    retype,
    settle_event_record,
    snapshot,
    thaw,
    untrack,
)

__all__ = [
    "ENVELOPE_KEYS",
    "Event",
    "build_event",
    "SurfaceOp",
    "envelope_is_valid",
    "event_from_checked_wire",
    "event_from_owned_wire",
    "event_or_record",
    "new_event",
    "settle_owned_wire",
]

SurfaceOp = Literal["append"] | dict[str, Any]
"""``"append"`` or a replace op ``{"op": "replace", "startSeq": s, "endSeq": e}``."""

ENVELOPE_KEYS: Final = frozenset(
    {"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"}
)
"""The only keys an event may have (spec/core.md §2.1)."""

_dict_new = dict.__new__
_dict_init = dict.__init__


class Event(FrozenDict):
    """One immutable entry of a session log: its wire object, readable as attributes too.

    Events come from ``Session.append``, seeds, stores and ``Event.from_wire``; they are never
    built field by field, so that every ``Event`` holds validated, frozen data.

    Example:
        >>> ev = Event.from_wire({"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}})
        >>> ev.type, ev.seq, ev.data["turn"], ev.surface_op
        ('turn/start', 0, 1, None)
    """

    __slots__ = ()

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError(
            "events are built by Session.append, Session.from_events or Event.from_wire"
        )

    @property
    def type(self) -> str:
        """The event type, e.g. ``"user/message"``."""
        return self["type"]  # type: ignore[no-any-return]  # a str by the envelope check

    @property
    def seq(self) -> int:
        """Position in the log, dense from 0."""
        return self["seq"]  # type: ignore[no-any-return]  # an int by the envelope check

    @property
    def time(self) -> int:
        """Epoch milliseconds at append."""
        return self["time"]  # type: ignore[no-any-return]  # an int by the envelope check

    @property
    def data(self) -> JsonValue:
        """The frozen payload; its shape depends on ``type`` (spec/core.md §2.4)."""
        return self["data"]

    @property
    def surface_op(self) -> JsonValue:
        """``"append"``, a frozen replace op, or ``None`` for a log-only event."""
        return self.get("surfaceOp")

    @property
    def source_event_seqs(self) -> JsonValue:
        """The seqs this event cites (its provenance), or ``None``."""
        return self.get("sourceEventSeqs")

    @property
    def ignorable(self) -> bool:
        """Whether a reader that does not know ``type`` may skip this event."""
        return self.get("ignorable") is True

    def to_wire(self) -> dict[str, Any]:
        """Return the event as a plain, mutable wire dict (camelCase keys)."""
        return thaw(self)  # type: ignore[no-any-return]  # thaw of a dict is a dict

    def __repr__(self) -> str:
        return f"Event({dict.__repr__(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Event.from_wire, (self.to_wire(),))

    @classmethod
    def from_wire(cls, wire: object) -> Event:
        """Build an event from its wire form, with every event-local check.

        Checks the lossless-JSON domain, the envelope (spec/core.md §2.1) and the per-type data
        rules and shapes (§4 step 7, §9.2, subject ``session event at seq <n>``). Rules that
        need the rest of the log (surface markers, contiguity) are checked where the event
        joins one.

        Raises:
            agentlog.NotLosslessJson: when ``wire`` is not lossless JSON.
            agentlog.EventRejected: for an invalid envelope or payload.
        """
        frozen = snapshot(wire)
        _check_wire(frozen)
        return event_from_checked_wire(frozen)


def event_from_owned_wire(wire: dict[str, Any]) -> Event:
    """``Event.from_wire`` for a wire dict nobody else holds (a record a store just parsed).

    Same checks, but the dict is frozen and becomes the event in place when it can, so loading
    a log does not copy every record (``agentlog.values.freeze_owned``).

    Raises:
        agentlog.NotLosslessJson: when ``wire`` is not lossless JSON.
        agentlog.EventRejected: for an invalid envelope or payload.
    """
    if type(wire) is Event:
        return wire
    settled = settle_owned_wire(wire)  # the accelerator: every check in one call
    if type(settled) is Event:
        return settled
    frozen = freeze_owned(wire)
    _check_wire(frozen)
    if type(frozen["seq"]) is not int or type(frozen["time"]) is not int:
        return event_from_checked_wire(frozen)  # normalizes integral floats (a copy)
    event: Event = retype(frozen, Event)  # type: ignore[assignment]  # an Event by retype()
    return event


def settle_owned_wire(wire: dict[str, Any]) -> Mapping[str, Any] | None:
    """A freshly parsed record settled into its ``Event`` by the C accelerator, if it can be.

    One C call checks the envelope, freezes the record in place and applies the message rules
    to plainly valid data (``agentlog.values.settle_event_record``); the Python rules finish
    what it leaves. Returns the ``Event``; the frozen record when a rule fails (for
    ``event_from_owned_wire`` to name it); ``None`` when the record needs the general path (no
    accelerator, range-encoded citations, a bad envelope). Never raises for the record's
    content.
    """
    settled = settle_event_record(wire, Event, RULE_TYPES)
    if settled is None or type(settled) is Event:
        return settled
    try:
        check_event(settled["type"], settled["data"])
    except RuleViolation:
        return settled
    return retype(settled, Event)


def event_or_record(wire: dict[str, Any]) -> Mapping[str, Any]:
    """The event a freshly parsed record makes, if it passes every event-local check, else it.

    What a store's reader calls on each record while it is fresh (in the processor's caches),
    so that loading a log does not walk every record again: with the C accelerator, a record
    whose envelope, values and per-type rules are valid becomes its ``Event`` in place. Any
    other record is returned as it is (perhaps partly frozen) and never raises here:
    ``event_from_owned_wire`` diagnoses it where the log is rebuilt, with its location.
    """
    settled = settle_owned_wire(wire)
    return wire if settled is None else settled


def _check_wire(frozen: Any) -> None:
    """The event-local checks: the envelope (spec/core.md §2.1), then the per-type rules.

    Raises:
        agentlog.EventRejected: for an invalid envelope or payload.
    """
    if not envelope_is_valid(frozen):
        raise EventRejected(
            "session event has an invalid event envelope",
            event_type=frozen.get("type") if isinstance(frozen, dict) else None,
        )
    _check_rules(frozen)


def _check_rules(frozen: Any) -> None:
    """The per-type rules of an event whose envelope is valid.

    Raises:
        agentlog.EventRejected: naming the seq.
    """
    try:
        check_event(frozen["type"], frozen["data"])
    except RuleViolation as violation:
        seq = int(frozen["seq"])  # an integral float (1.0) is named as the seq it stands for
        raise EventRejected(
            f"session event at seq {seq} {violation}", event_type=frozen["type"], seq=seq
        ) from None


def envelope_is_valid(wire: object) -> bool:
    """Check the envelope rules of spec/core.md §9.1 step 2 on a frozen or plain wire value.

    The wire must be an object with only envelope keys, a string ``type``, a seq (non-negative
    safe integer), a safe-integer ``time``, a ``data`` key, and ``ignorable`` absent or ``true``.
    """
    if not isinstance(wire, dict) or not ENVELOPE_KEYS.issuperset(wire):
        return False
    seq = wire.get("seq")
    time = wire.get("time")
    return (
        type(wire.get("type")) is str
        and (0 <= seq <= MAX_SAFE_INTEGER if type(seq) is int else is_seq(seq))
        and (
            -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER
            if type(time) is int
            else is_safe_integer(time)
        )
        and "data" in wire
        and wire.get("ignorable", True) is True
    )


def event_from_checked_wire(wire: dict[str, Any]) -> Event:
    """Wrap a frozen wire object that passed ``envelope_is_valid`` as an ``Event`` (no copy).

    Integral float ``seq``/``time`` (JSON written elsewhere, e.g. ``1.0``) become ``int`` so that
    seqs index the log.
    """
    event: Event = _dict_new(Event)
    _dict_init(event, wire)
    if type(wire["seq"]) is not int or type(wire["time"]) is not int:
        dict.__setitem__(event, "seq", int(wire["seq"]))
        dict.__setitem__(event, "time", int(wire["time"]))
    return untrack(event)  # type: ignore[no-any-return]  # the same Event


def new_event(
    type: str,
    seq: int,
    time: int,
    data: JsonValue,
    source_event_seqs: JsonValue = None,
    surface_op: JsonValue = None,
    ignorable: bool = False,
) -> Event:
    """Assemble an appended event from validated, frozen parts.

    Key order follows the reference writer: ``type, seq, time, data, sourceEventSeqs?,
    surfaceOp?`` (plus ``ignorable: true`` last, an agentlog extension).
    """
    wire: dict[str, Any] = {"type": type, "seq": seq, "time": time, "data": data}
    if source_event_seqs is not None:
        wire["sourceEventSeqs"] = source_event_seqs
    if surface_op is not None:
        wire["surfaceOp"] = surface_op
    if ignorable:
        wire["ignorable"] = True
    event: Event = _dict_new(Event)
    _dict_init(event, wire)
    return untrack(event)  # type: ignore[no-any-return]  # the same Event


build_event: Callable[[str, int, int, JsonValue, JsonValue, JsonValue, bool], Event] = (
    new_event if new_event_record is None else partial(new_event_record, Event)
)
"""``new_event`` with every argument given, by position: ``Session.append``'s construction.

With the C accelerator, one call builds the ``Event`` directly (no intermediate dict, no
Python frame); without it, this is ``new_event``.
"""
