"""Events: the envelope, the type catalog, per-type data rules and the message model.

Implements spec/core.md §2 (data model), §4 step 7 and §9.1–§9.2 (data rules and shape checks)
and §8.2 (the catalog).
"""

from agentlog.events.catalog import (
    DECLARED,
    KNOWN_EVENT_TYPES,
    MESSAGE_PROJECTION_EVENT_TYPES,
    PROJECTION_TYPES,
    SURFACE_EVENT_TYPES,
    Badge,
    EventTypeDeclaration,
    declaration,
    declare_event_type,
    declared_event_types,
    is_declared,
    render_event_catalog,
)
from agentlog.events.envelope import (
    ENVELOPE_KEYS,
    Event,
    SurfaceOp,
    build_event,
    envelope_is_valid,
    event_from_checked_wire,
    event_from_owned_wire,
    event_or_record,
    new_event,
    settle_owned_wire,
)
from agentlog.events.rules import (
    RULE_TYPES,
    RuleViolation,
    check_event,
    check_event_data,
    event_message,
)
from agentlog.events.stream import (
    StreamRecorder,
    StreamRecordType,
    expand_stream,
    record_stream,
    validate_stream,
)

__all__ = [
    "DECLARED",
    "ENVELOPE_KEYS",
    "KNOWN_EVENT_TYPES",
    "MESSAGE_PROJECTION_EVENT_TYPES",
    "PROJECTION_TYPES",
    "RULE_TYPES",
    "SURFACE_EVENT_TYPES",
    "Badge",
    "Event",
    "EventTypeDeclaration",
    "RuleViolation",
    "StreamRecordType",
    "StreamRecorder",
    "SurfaceOp",
    "build_event",
    "check_event",
    "check_event_data",
    "declaration",
    "declare_event_type",
    "declared_event_types",
    "envelope_is_valid",
    "event_from_checked_wire",
    "event_from_owned_wire",
    "event_message",
    "event_or_record",
    "expand_stream",
    "is_declared",
    "new_event",
    "record_stream",
    "render_event_catalog",
    "settle_owned_wire",
    "validate_stream",
]
