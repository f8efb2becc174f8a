"""The invariant companion: turn, step and tool-call structure checked at the append site.

Implements spec/core.md §11. ``InvariantTrace`` is the pure state machine: ``check()``
validates a candidate without changing anything, ``apply()`` advances after commit.
``install_invariants(session)`` replays the session's whole log (seed and end-seed marker
included) and then vetoes every append that breaks the structure, before it is committed:

* turns open and close in order, numbered from 1; steps likewise within each turn;
* step-bound events (``assistant/message``, ``tool/call``, appended ``tool/result``, ...) name
  the open turn and step;
* an appended ``tool/result`` answers a ``tool/call`` logged in the same step (a synthetic
  not-started repair result excepted);
* ``request/header`` and ``request/context`` are turn-enclosed.

``user/message``, ``session/end-seed`` and plugin types are unconstrained.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Protocol

from agentlog.errors import InvariantError
from agentlog.lifecycle.repair import TOOL_NOT_STARTED
from agentlog.session import Session
from agentlog.values import js_text

__all__ = ["InvariantTrace", "Trace", "check_invariants", "install_invariants", "install_trace"]

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


def _field(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, dict) else None


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
            self._fail(f"seq must strictly increase: saw {seq} after {self.last_seq}", event)
        event_type = event["type"]
        data = event["data"]
        open_turn, open_step = self.open_turn, self.open_step
        if event_type == "turn/start":
            turn = _field(data, "turn")
            if open_turn is not None:
                self._fail(
                    f"turn/start {_js(turn)} while turn {_js(open_turn)} is still open", event
                )
            if turn != self.next_turn:
                self._fail(f"turn/start expected turn {self.next_turn}, got {_js(turn)}", event)
        elif event_type == "turn/end":
            turn = _field(data, "turn")
            if open_turn is None or turn != open_turn:
                self._fail(f"turn/end {_js(turn)} does not match open turn {_js(open_turn)}", event)
            if open_step is not None:
                self._fail(f"turn/end {_js(turn)} while step {_js(open_step)} is still open", event)
        elif event_type == "step/start":
            turn, step = _field(data, "turn"), _field(data, "step")
            if open_turn is None or turn != open_turn:
                self._fail(
                    f"step/start in turn {_js(turn)} but open turn is {_js(open_turn)}", event
                )
            if open_step is not None:
                self._fail(
                    f"step/start {_js(step)} while step {_js(open_step)} is still open", event
                )
            if step != self.next_step:
                self._fail(
                    f"step/start expected step {self.next_step} in turn {_js(turn)}, "
                    f"got {_js(step)}",
                    event,
                )
        elif event_type in _STEP_BOUND or (
            event_type == "tool/result" and event.get("surfaceOp") == "append"
        ):
            self._check_open_step(event)
            if event_type == "tool/result":
                self._check_answer(event)
        elif event_type == "tool/result":
            if open_turn is None:
                self._fail("tool/result surface replacement appended outside any open turn", event)
        elif event_type in _TURN_BOUND and open_turn is None:
            self._fail(
                f"{event_type} appended outside any open turn (core execution events must be "
                "turn-enclosed)",
                event,
            )

    def apply(self, event: Mapping[str, Any]) -> None:
        """Advance the trace past ``event`` (which ``check()`` accepted)."""
        self.last_seq = event["seq"]
        event_type = event["type"]
        data = event["data"]
        if event_type == "turn/start":
            self.open_turn = _field(data, "turn")
            self.next_step = 1
        elif event_type == "turn/end":
            self.open_turn = None
            self.next_turn += 1
            self.pending.clear()
        elif event_type == "step/start":
            self.open_step = _field(data, "step")
        elif event_type == "step/end":
            self.open_step = None
            self.next_step += 1
            self.pending.clear()
        elif event_type == "tool/call":
            self.pending.add(_field(data, "callId"))
        elif event_type == "tool/result" and event.get("surfaceOp") == "append":
            self.pending.discard(_call_id(data))

    def _check_open_step(self, event: Mapping[str, Any]) -> None:
        data = event["data"]
        turn, step = _field(data, "turn"), _field(data, "step")
        if (
            self.open_turn is None
            or self.open_step is None
            or (turn, step)
            != (
                self.open_turn,
                self.open_step,
            )
        ):
            self._fail(
                f"{event['type']} names turn {_js(turn)}/step {_js(step)} but open is turn "
                f"{_js(self.open_turn)}/step {_js(self.open_step)}",
                event,
            )

    def _check_answer(self, event: Mapping[str, Any]) -> None:
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
        self._fail(f"tool/result for {_js(call_id)} with no prior tool/call in this step", event)

    @staticmethod
    def _fail(message: str, event: Mapping[str, Any]) -> None:
        raise InvariantError(message, event_type=event.get("type"), seq=event.get("seq"))


def _call_id(data: Any) -> Any:
    return _field(_field(_field(data, "message"), "source"), "callId")


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


def install_invariants(session: Session) -> Callable[[], None]:
    """Check ``session``'s log now and every future append against spec/core.md §11.

    The whole existing log is replayed first (a bad seed raises here). Then a pre-commit
    validator vetoes a breaking candidate (the append raises ``InvariantError`` and nothing
    changes) and a post-commit observer advances the trace, so a veto by another validator
    leaves the trace untouched.

    Returns:
        A function that uninstalls the companion.

    Raises:
        InvariantError: when the existing log already breaks the rules.
    """
    return install_trace(session, InvariantTrace())


class Trace(Protocol):
    """A fold over a log that can veto an event before it is applied (a companion's state)."""

    def check(self, event: Mapping[str, Any]) -> None:
        """Raise ``InvariantError`` when ``event`` may not come next."""

    def apply(self, event: Mapping[str, Any]) -> None:
        """Advance past ``event`` (already checked)."""


def install_trace(session: Session, trace: Trace) -> Callable[[], None]:
    """Run ``trace`` over ``session``'s log now and at every future append; the uninstaller.

    The existing log is replayed first (a bad log raises here). Then a pre-commit validator
    vetoes a breaking candidate and a post-commit observer applies the committed event, so a
    veto by another validator leaves the trace untouched.
    """
    for event in session.events:
        trace.check(event)
        trace.apply(event)
    staged: list[Mapping[str, Any]] = []

    def validate(_session: Session, candidate: Mapping[str, Any]) -> None:
        trace.check(candidate)
        staged[:] = [candidate]

    def commit(_session: Session, event: Mapping[str, Any]) -> None:
        if not staged or staged[0] is not event:
            _logger.error(
                'session "%s": session/event reached publication without matching pre-commit '
                "validation",
                session.id,
            )
            return
        staged.clear()
        trace.apply(event)

    remove_validator = session.add_validator(validate)
    remove_observer = session.add_observer(commit)

    def uninstall() -> None:
        remove_validator()
        remove_observer()

    return uninstall
