"""Lifecycle: crash repair, fork, and structural checks of whole logs.

Implements spec/core.md §9.4, §10 and §11.
"""

from agentlog.lifecycle.fork import (
    build_fork_seed,
    check_fork_boundary,
    fork_child,
    fork_session,
)
from agentlog.lifecycle.invariants import (
    InvariantTrace,
    Trace,
    check_invariants,
    has_invariants,
    install_invariants,
    install_trace,
    trace_of_end,
)
from agentlog.lifecycle.pairing import (
    pairing_counters,
    tool_pairing_balanced_after,
    tool_pairing_balanced_before,
)
from agentlog.lifecycle.repair import (
    TOOL_NOT_STARTED,
    TOOL_OUTCOME_UNKNOWN,
    CloserCause,
    ToolCallRecovery,
    open_turn,
    open_turn_closers,
)
from agentlog.lifecycle.validity import check_provider_history, history_problems

__all__ = [
    "TOOL_NOT_STARTED",
    "TOOL_OUTCOME_UNKNOWN",
    "CloserCause",
    "InvariantTrace",
    "Trace",
    "ToolCallRecovery",
    "build_fork_seed",
    "check_fork_boundary",
    "check_invariants",
    "check_provider_history",
    "fork_child",
    "fork_session",
    "has_invariants",
    "history_problems",
    "install_invariants",
    "install_trace",
    "open_turn",
    "open_turn_closers",
    "pairing_counters",
    "tool_pairing_balanced_after",
    "tool_pairing_balanced_before",
    "trace_of_end",
]
