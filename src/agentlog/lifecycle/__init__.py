"""Lifecycle: crash repair, fork, and structural checks of whole logs.

Implements spec/core.md §9.4, §10 and §11.
"""

from agentlog.lifecycle.fork import build_fork_seed, check_fork_boundary, fork_session
from agentlog.lifecycle.repair import (
    TOOL_NOT_STARTED,
    TOOL_OUTCOME_UNKNOWN,
    CloserCause,
    ToolCallRecovery,
    open_turn_closers,
)

__all__ = [
    "TOOL_NOT_STARTED",
    "TOOL_OUTCOME_UNKNOWN",
    "CloserCause",
    "ToolCallRecovery",
    "build_fork_seed",
    "check_fork_boundary",
    "fork_session",
    "open_turn_closers",
]
