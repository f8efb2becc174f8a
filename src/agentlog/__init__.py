"""agentlog: the durable, lossless session log for Python LLM agents.

An agent session is an append-only event log; the message history the model sees is derived
from it through the surface. See ``README.md`` and ``docs/`` for a tour.
"""

from agentlog.errors import (
    AgentlogError,
    EventRejected,
    InvalidHistory,
    InvariantError,
    NotLosslessJson,
    SeedRejected,
    SessionForkError,
    ToolPairingError,
)
from agentlog.events import (
    KNOWN_EVENT_TYPES,
    MESSAGE_PROJECTION_EVENT_TYPES,
    SURFACE_EVENT_TYPES,
    Event,
    declare_event_type,
    messages,
)
from agentlog.lifecycle import (
    TOOL_NOT_STARTED,
    TOOL_OUTCOME_UNKNOWN,
    ToolCallRecovery,
    build_fork_seed,
    check_invariants,
    check_provider_history,
    history_problems,
    install_invariants,
    open_turn_closers,
    tool_pairing_balanced_after,
    tool_pairing_balanced_before,
)
from agentlog.session import (
    FORMAT_VERSION,
    EventLog,
    Session,
    Surface,
    canonical_header,
    fold_request_header,
    header_equals,
)
from agentlog.surface import (
    IMAGE_OFFLOAD,
    FoldResult,
    MessageProjection,
    ProjectionContext,
    ProjectionError,
    Replacement,
    derive_event_message,
    fold_surface,
)
from agentlog.values import thaw

__all__ = [
    "FORMAT_VERSION",
    "IMAGE_OFFLOAD",
    "KNOWN_EVENT_TYPES",
    "MESSAGE_PROJECTION_EVENT_TYPES",
    "SURFACE_EVENT_TYPES",
    "TOOL_NOT_STARTED",
    "TOOL_OUTCOME_UNKNOWN",
    "AgentlogError",
    "Event",
    "EventLog",
    "EventRejected",
    "FoldResult",
    "InvalidHistory",
    "InvariantError",
    "MessageProjection",
    "NotLosslessJson",
    "ProjectionContext",
    "ProjectionError",
    "Replacement",
    "SeedRejected",
    "Session",
    "SessionForkError",
    "Surface",
    "ToolCallRecovery",
    "ToolPairingError",
    "build_fork_seed",
    "canonical_header",
    "check_invariants",
    "check_provider_history",
    "declare_event_type",
    "derive_event_message",
    "fold_request_header",
    "fold_surface",
    "header_equals",
    "history_problems",
    "install_invariants",
    "messages",
    "open_turn_closers",
    "thaw",
    "tool_pairing_balanced_after",
    "tool_pairing_balanced_before",
]
