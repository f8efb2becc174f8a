"""The session: append pipeline, seeds, hooks, derived history and request folds.

Implements spec/core.md §3, §4, §6, §7 and §9.
"""

from agentlog.session.header import FORMAT_VERSION, build_header, new_header, stored_header
from agentlog.session.hooks import Observer, Trace, Validator, on_session_created
from agentlog.session.ids import MAX_ID_BYTES, check_session_id, session_id_problem
from agentlog.session.log import EventLog
from agentlog.session.request import canonical_header, fold_request_header, header_equals
from agentlog.session.session import Clock, Session, wall_clock
from agentlog.session.sink import Sink
from agentlog.session.view import Surface

__all__ = [
    "FORMAT_VERSION",
    "MAX_ID_BYTES",
    "Clock",
    "EventLog",
    "Observer",
    "Session",
    "Sink",
    "Surface",
    "Trace",
    "Validator",
    "build_header",
    "check_session_id",
    "canonical_header",
    "fold_request_header",
    "header_equals",
    "new_header",
    "on_session_created",
    "session_id_problem",
    "stored_header",
    "wall_clock",
]
