"""Pre-commit validators, post-commit observers, traces and session-created hooks.

Implements spec/core.md §4 steps 9b–9d. Validators may veto a candidate event; observers are
told about committed events and can never change an append's result: their exceptions — and the
failures of awaitables they return, run on the current event loop — are logged as warnings with
the texts of spec/core.md §4 step 9d. While either runs, the session is *publishing*, and a
reentrant append is refused (E5).

A *trace* is the cheap form of a validator and observer pair for a companion's state machine
(spec/core.md §11): ``check`` vetoes a candidate before the validators, ``apply`` advances right
after commit. The session calls both directly, so a companion costs a method call per append.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from agentlog.events import Event

if TYPE_CHECKING:
    from agentlog.session.session import Session

__all__ = ["Hooks", "Observer", "Trace", "Validator", "announce", "on_session_created"]

_logger = logging.getLogger("agentlog.session")

Validator = Callable[["Session", Event], None]
"""Pre-commit check of a candidate event; raising vetoes the append."""
Observer = Callable[["Session", Event], object]
"""Post-commit notification; exceptions (and failed awaitables) are logged, never raised."""


class Trace(Protocol):
    """A fold over a log that can veto an event before it is applied (a companion's state)."""

    def check(self, event: Mapping[str, Any]) -> None:
        """Raise an ``EventRejected`` when ``event`` may not come next; change nothing."""

    def apply(self, event: Mapping[str, Any]) -> None:
        """Advance past ``event`` (already checked and committed); never raises."""


class Hooks:
    """The validators, traces and observers of one session, and whether it is publishing."""

    __slots__ = ("observers", "publishing", "traces", "validators")

    def __init__(self) -> None:
        self.validators: list[Validator] = []
        self.observers: list[Observer] = []
        self.traces: list[Trace] = []
        self.publishing = False

    def add_validator(self, validator: Validator) -> Callable[[], None]:
        """Register a validator; returns its remover."""
        self.validators.append(validator)
        return lambda: self.validators.remove(validator)

    def add_observer(self, observer: Observer) -> Callable[[], None]:
        """Register an observer; returns its remover."""
        self.observers.append(observer)
        return lambda: self.observers.remove(observer)

    def add_trace(self, trace: Trace) -> Callable[[], None]:
        """Register a trace; returns its remover."""
        self.traces.append(trace)
        return lambda: self.traces.remove(trace)

    def validate(self, session: Session, candidate: Event) -> None:
        """Run every validator on ``candidate`` (spec/core.md §4 step 9b); the first raise wins."""
        self.publishing = True
        try:
            for validator in tuple(self.validators):
                validator(session, candidate)
        finally:
            self.publishing = False

    def publish(self, session: Session, event: Event, observers: tuple[Observer, ...]) -> None:
        """Tell ``observers`` (taken before commit) about ``event``; contain every failure."""
        self.publishing = True
        try:
            for observer in observers:
                try:
                    result = observer(session, event)
                except Exception as exc:
                    _logger.warning(
                        'session "%s": session/event listener threw: %s', session.id, _describe(exc)
                    )
                else:
                    if inspect.isawaitable(result):
                        _watch(session.id, result)
        finally:
            self.publishing = False


_PENDING: set[asyncio.Future[Any]] = set()
"""Observer futures in flight, kept referenced until they settle."""


def _watch(session_id: str, awaitable: Any) -> None:
    try:
        future = asyncio.ensure_future(awaitable)
    except RuntimeError:
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        _logger.warning(
            'session "%s": session/event listener returned an awaitable outside a running '
            "event loop; it was not run",
            session_id,
        )
        return
    _PENDING.add(future)

    def settled(done: asyncio.Future[Any]) -> None:
        _PENDING.discard(done)
        error = None if done.cancelled() else done.exception()
        if error is not None:
            _logger.warning(
                'session "%s": session/event listener rejected: %s', session_id, _describe(error)
            )

    future.add_done_callback(settled)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


_CREATED_HOOKS: list[Callable[[Session], object]] = []


def on_session_created(hook: Callable[[Session], object]) -> Callable[[], None]:
    """Call ``hook(session)`` for every session built from now on (create, seeds, forks).

    A hook may install validators and observers, or refuse the session by raising (the
    constructor then raises too). The project's test suite uses it to run every session under
    the invariant companion.

    Returns:
        A function that removes the hook.
    """
    _CREATED_HOOKS.append(hook)
    return lambda: _CREATED_HOOKS.remove(hook)


def announce(session: Session) -> Session:
    """Run the session-created hooks on a newly built ``session`` and return it."""
    for hook in tuple(_CREATED_HOOKS):
        hook(session)
    return session
