"""The session: append pipeline, seeds, hooks, derived history and request folds.

Implements spec/core.md §3, §4, §6, §7 and §9.
"""

from agentlog.session.header import FORMAT_VERSION, build_header
from agentlog.session.log import EventLog
from agentlog.session.request import canonical_header, fold_request_header, header_equals
from agentlog.session.session import (
    Clock,
    Observer,
    Session,
    Surface,
    Validator,
    on_session_created,
    wall_clock,
)

__all__ = [
    "FORMAT_VERSION",
    "Clock",
    "EventLog",
    "Observer",
    "Session",
    "Surface",
    "Validator",
    "build_header",
    "canonical_header",
    "fold_request_header",
    "header_equals",
    "on_session_created",
    "wall_clock",
]
