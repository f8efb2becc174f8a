"""The invariant companion: turn, step and tool-call structure checked at the append site.

Implements spec/core.md §11. ``InvariantTrace`` is the pure state machine: ``check()``
validates a candidate without changing anything, ``apply()`` advances after commit. Both are
O(1) per event (a dispatch on the type, a few field reads, one set operation), because stores
run the companion on every append by default.

* turns open and close in order, numbered from 1; steps likewise within each turn;
* step-bound events (``assistant/message``, ``tool/call``, appended ``tool/result``, ...) name
  the open turn and step;
* an appended ``tool/result`` answers a ``tool/call`` logged in the same step (a synthetic
  not-started repair result excepted);
* ``request/header`` and ``request/context`` are turn-enclosed.

``user/message``, ``session/end-seed`` and plugin types are unconstrained.

``install_invariants(session)`` replays the session's whole log (seed and end-seed marker
included; a log that breaks the rules raises) and then vetoes every append that breaks them.
With ``loaded=True`` — what a store does for the sessions it creates, resumes and forks — the
log's own history is not judged: the companion follows only the trace the log's end leaves (the
state after its last ``turn/end``, or its open last turn replayed), and a log whose end it
cannot follow is left unchecked, with a warning. Installing twice is a no-op.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from agentlog.errors import InvariantError
from agentlog.lifecycle.repair import TOOL_NOT_STARTED
from agentlog.session import Session, Trace
from agentlog.values import dumps, js_text

__all__ = [
    "InvariantTrace",
    "Trace",
    "check_invariants",
    "has_invariants",
    "install_invariants",
    "install_trace",
    "trace_of_end",
]

_logger = logging.getLogger("agentlog.invariants")

_STEP_BOUND: Final = frozenset(
    {
        "step/end",
        "assistant/message",
        "assistant/attempt",
        "tool/call",
        "system/message",
        "developer/message",
    }
)
_TURN_BOUND: Final = frozenset({"request/header", "request/context"})

_INSTALLED: weakref.WeakKeyDictionary[Session, InvariantTrace] = weakref.WeakKeyDictionary()
"""The sessions running the companion, and its trace (``has_invariants``)."""


def _field(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, dict) else None


def _fail(message: str, event: Mapping[str, Any]) -> None:
    raise InvariantError(message, event_type=event.get("type"), seq=event.get("seq"))


class InvariantTrace:
    """The structural state of one log: open turn and step, next numbers, pending calls."""

    __slots__ = ("last_seq", "next_step", "next_turn", "open_step", "open_turn", "pending")

    def __init__(self) -> None:
        self.last_seq = -1
        self.open_turn: Any = None
        self.open_step: Any = None
        self.next_turn = 1
        self.next_step = 1
        self.pending: set[Any] = set()

    def check(self, event: Mapping[str, Any]) -> None:
        """Raise ``InvariantError`` if ``event`` may not come next; change nothing.

        Raises:
            InvariantError: with the exact text of spec/core.md §11.
        """
        seq = event["seq"]
        if seq <= self.last_seq:
            _fail(f"seq must strictly increase: saw {seq} after {self.last_seq}", event)
        event_type = event["type"]
        kind = _KINDS.get(event_type)
        if kind is None:
            return
        # The accepting case of each rule, decided here in line: this runs at every append, and
        # the rule's own call (with its helpers) costs more than the check. Any other case goes
        # to the rule, which accepts it as well or raises with the spec's text.
        data = event["data"]
        if isinstance(data, dict):
            open_turn, open_step = self.open_turn, self.open_step
            in_turn = open_turn is not None and data.get("turn") == open_turn
            if kind == "step":
                if in_turn and open_step is not None and data.get("step") == open_step:
                    return
            elif kind == "turn/start":
                if open_turn is None and data.get("turn") == self.next_turn:
                    return
            elif kind == "turn/end":
                if in_turn and open_step is None:
                    return
            elif kind == "step/start":
                if in_turn and open_step is None and data.get("step") == self.next_step:
                    return
            elif kind == "tool/result":
                if event.get("surfaceOp") != "append":
                    if open_turn is not None:
                        return
                elif (
                    in_turn
                    and open_step is not None
                    and data.get("step") == open_step
                    and _call_id(data) in self.pending
                ):
                    return
            elif open_turn is not None:  # kind "turn": turn-enclosed
                return
        _CHECKS[event_type](self, event)

    def apply(self, event: Mapping[str, Any]) -> None:
        """Advance the trace past ``event`` (which ``check()`` accepted)."""
        self.last_seq = event["seq"]
        event_type = event["type"]
        if event_type not in _MOVES:
            return
        data = event["data"]  # its fields read in line, as in ``check``
        if not isinstance(data, dict):
            data = _NO_FIELDS
        if event_type == "step/end":
            self.open_step = None
            self.next_step += 1
            self.pending.clear()
        elif event_type == "tool/call":
            self.pending.add(data.get("callId"))
        elif event_type == "tool/result":
            if event.get("surfaceOp") == "append":
                self.pending.discard(_call_id(data))
        elif event_type == "step/start":
            self.open_step = data.get("step")
        elif event_type == "turn/start":
            self.open_turn = data.get("turn")
            self.next_step = 1
        else:  # turn/end
            self.open_turn = None
            self.next_turn += 1
            self.pending.clear()

    # --- checks, one per constrained type ---------------------------------------------

    def _check_turn_start(self, event: Mapping[str, Any]) -> None:
        turn = _field(event["data"], "turn")
        if self.open_turn is not None:
            _fail(f"turn/start {_js(turn)} while turn {_js(self.open_turn)} is still open", event)
        if turn != self.next_turn:
            _fail(f"turn/start expected turn {self.next_turn}, got {_js(turn)}", event)

    def _check_turn_end(self, event: Mapping[str, Any]) -> None:
        turn, open_turn = _field(event["data"], "turn"), self.open_turn
        if open_turn is None or turn != open_turn:
            _fail(f"turn/end {_js(turn)} does not match open turn {_js(open_turn)}", event)
        if self.open_step is not None:
            _fail(f"turn/end {_js(turn)} while step {_js(self.open_step)} is still open", event)

    def _check_step_start(self, event: Mapping[str, Any]) -> None:
        open_turn = self.open_turn
        turn, step = _turn_and_step(event["data"])
        if open_turn is None or turn != open_turn:
            _fail(f"step/start in turn {_js(turn)} but open turn is {_js(open_turn)}", event)
        if self.open_step is not None:
            _fail(f"step/start {_js(step)} while step {_js(self.open_step)} is still open", event)
        if step != self.next_step:
            _fail(
                f"step/start expected step {self.next_step} in turn {_js(turn)}, got {_js(step)}",
                event,
            )

    def _check_step_bound(self, event: Mapping[str, Any]) -> None:
        turn, step = _turn_and_step(event["data"])
        open_turn, open_step = self.open_turn, self.open_step
        if open_turn is None or open_step is None or turn != open_turn or step != open_step:
            _fail(
                f"{event['type']} names turn {_js(turn)}/step {_js(step)} but open is turn "
                f"{_js(open_turn)}/step {_js(open_step)}",
                event,
            )

    def _check_tool_result(self, event: Mapping[str, Any]) -> None:
        if event.get("surfaceOp") != "append":  # a replacement (the pruner's rewrite)
            if self.open_turn is None:
                _fail("tool/result surface replacement appended outside any open turn", event)
            return
        self._check_step_bound(event)
        data = event["data"]
        call_id = _call_id(data)
        if call_id in self.pending:
            return
        message = _field(data, "message")
        if (
            _field(message, "isError") is True
            and _field(_field(data, "error"), "code") == TOOL_NOT_STARTED
        ):
            return
        _fail(f"tool/result for {_js(call_id)} with no prior tool/call in this step", event)

    def _check_turn_bound(self, event: Mapping[str, Any]) -> None:
        if self.open_turn is None:
            _fail(
                f"{event['type']} appended outside any open turn (core execution events must be "
                "turn-enclosed)",
                event,
            )


_Step = Callable[[InvariantTrace, Mapping[str, Any]], None]

_CHECKS: Final[dict[str, _Step]] = {
    "turn/start": InvariantTrace._check_turn_start,
    "turn/end": InvariantTrace._check_turn_end,
    "step/start": InvariantTrace._check_step_start,
    "tool/result": InvariantTrace._check_tool_result,
    **dict.fromkeys(_STEP_BOUND, InvariantTrace._check_step_bound),
    **dict.fromkeys(_TURN_BOUND, InvariantTrace._check_turn_bound),
}
"""The rule of each constrained event type; every other type is unconstrained."""

_KINDS: Final[dict[str, str]] = {
    **dict.fromkeys(_STEP_BOUND, "step"),
    **dict.fromkeys(_TURN_BOUND, "turn"),
    **{event_type: event_type for event_type in ("turn/start", "turn/end", "step/start")},
    "tool/result": "tool/result",
}
"""The rule of each constrained event type, by name (``check``'s in-line dispatch)."""

_MOVES: Final = frozenset(
    {"turn/start", "turn/end", "step/start", "step/end", "tool/call", "tool/result"}
)
"""The event types whose events move the trace (``apply``)."""

_NO_FIELDS: Final[dict[str, Any]] = {}
"""The data ``apply`` reads fields from when an event's data is not an object (all absent)."""


def _turn_and_step(data: Any) -> tuple[Any, Any]:
    if isinstance(data, dict):
        return data.get("turn"), data.get("step")
    return None, None


def _call_id(data: Any) -> Any:
    """``data.message.source.callId``, or ``None`` where the path breaks (one lookup chain)."""
    try:
        return data["message"]["source"]["callId"]
    except (KeyError, TypeError, IndexError):
        return None


def _js(value: Any) -> str:
    return js_text(value)


def check_invariants(events: Iterable[Mapping[str, Any]]) -> None:
    """Check a whole log against the invariant companion's rules (spec/core.md §11).

    Raises:
        InvariantError: for the first event that breaks them.
    """
    trace = InvariantTrace()
    for event in events:
        trace.check(event)
        trace.apply(event)


def _nothing() -> None:
    return None


def install_invariants(session: Session, *, loaded: bool = False) -> Callable[[], None]:
    """Check every future append to ``session`` against spec/core.md §11.

    A pre-commit check vetoes a breaking candidate (the append raises ``InvariantError`` and
    nothing changes); the trace advances only once an append commits, so a veto by a validator
    leaves it untouched. Installing on a session that already runs the companion is a no-op
    (and returns a remover that does nothing); ``has_invariants`` tells whether one runs.

    Args:
        session: The session to guard.
        loaded: The log is a stored one (stores pass ``True``): its own history is not judged;
            the companion follows the trace the log's end leaves, and a log whose end it cannot
            follow is left unchecked, with a warning on the ``agentlog.invariants`` logger.

    Returns:
        A function that uninstalls the companion.

    Raises:
        InvariantError: when the existing log already breaks the rules (unless ``loaded``).
    """
    if session in _INSTALLED:
        return _nothing
    if loaded:
        try:
            trace = trace_of_end(session.events)
        except InvariantError as problem:
            _logger.warning(
                'session "%s": structure checks are off: its log cannot be followed at seq %s '
                "(%s); later appends are not checked (spec/core.md §11)",
                session.id,
                problem.seq,
                problem,
            )
            return _nothing
        remove = session.add_trace(trace)
    else:
        trace = InvariantTrace()
        remove = install_trace(session, trace)
    _INSTALLED[session] = trace

    def uninstall() -> None:
        if _INSTALLED.get(session) is trace:
            del _INSTALLED[session]
            remove()

    return uninstall


def has_invariants(session: Session) -> bool:
    """Whether ``session`` runs the invariant companion (``install_invariants``)."""
    return session in _INSTALLED


def trace_of_end(events: Sequence[Mapping[str, Any]]) -> InvariantTrace:
    """The trace a log's end leaves, read from its last turn only.

    After a closed last turn (``turn/end N``) the trace is idle and expects turn ``N + 1``;
    an open last turn (``turn/start N`` and what follows) is replayed through the checks; a log
    with no turn expects turn 1. What came before is not judged (a stored log's own anomalies
    are history), so the cost does not grow with the log.

    Raises:
        InvariantError: when the end cannot be followed: a turn number that is not a positive
            integer, or an open last turn that breaks the rules.
    """
    trace = InvariantTrace()
    trace.last_seq = events[-1]["seq"] if events else -1
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        event_type = event["type"]
        if event_type != "turn/end" and event_type != "turn/start":
            continue
        turn = _field(event["data"], "turn")
        if type(turn) is not int or turn < 1:
            shown = dumps(turn).decode()
            _fail(f"{event_type} has turn {shown}, not a positive integer", event)
        if event_type == "turn/end":
            trace.next_turn = turn + 1
            return trace
        trace.next_turn = turn
        trace.last_seq = event["seq"] - 1
        for tail_event in events[index:]:
            trace.check(tail_event)
            trace.apply(tail_event)
        return trace
    return trace


def install_trace(session: Session, trace: Trace) -> Callable[[], None]:
    """Run ``trace`` over ``session``'s log now and at every future append; the uninstaller.

    The existing log is replayed first (a bad log raises here, and nothing is installed). Then
    the session checks each candidate with it before commit and applies each committed event
    (``Session.add_trace``), so a veto by a validator leaves the trace untouched.
    """
    for event in session.events:
        trace.check(event)
        trace.apply(event)
    return session.add_trace(trace)
