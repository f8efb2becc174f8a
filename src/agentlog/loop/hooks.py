"""Hooks an agent runs at its step boundaries: before a step, and when a turn would stop.

Implements the two waterfalls of spec/plugins.md §4.3 an application may join:

* ``agent/pre-step`` — after the step's input is claimed from the inbox and before anything of
  the step is logged. Each hook sees the messages the step would enter with (as the hooks
  before it left them) and returns ``None`` (enter as is), ``Enter(...)`` (enter with other
  messages, or start a new request series) or ``Reject()``: the turn then ends ``blocked``
  without the step (§8 scenario 51: ``turn/start``, the claim, ``turn/end {blocked}``); the
  claimed messages are consumed, input queued later stays pending (§4.10).
* ``agent/turn-stopping`` — when a step would end the turn and no steering waits. Hooks run
  one after another until one returns ``Continue(message)``: the message is queued for the
  next step (as ``steer`` would) and the turn takes another step instead of stopping. A hook
  may also call ``agent.steer()`` / ``inject()`` itself; the turn re-checks the inbox after
  the hooks (§4.10).

A hook is a plain or ``async`` callable; an exception it raises fails the turn (``turn/end
{error}``), a cancel aborts it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from agentlog.values import JsonValue

__all__ = [
    "Continue",
    "Enter",
    "PreStep",
    "PreStepHook",
    "Reject",
    "TurnStopping",
    "TurnStoppingHook",
    "run_pre_step_hooks",
    "run_turn_stopping_hooks",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class PreStep:
    """What a pre-step hook is asked about: the step about to start and its input."""

    turn: int
    step: int
    messages: tuple[JsonValue, ...]
    """The user messages the step will append after ``step/start`` (frozen, in order)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Enter:
    """Enter the step, optionally with other messages or as a new request series."""

    messages: tuple[Any, ...] | None = None
    """The step's user messages instead (text, content blocks or user messages); ``None``
    keeps the claimed ones."""
    starts_request_series: bool = False
    """Whether the step's first request begins a new series (``request/header`` reason
    ``series``, or ``change`` with ``startsSeries``; spec/plugins.md §4.4)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reject:
    """Do not run the step: the turn ends ``blocked``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStopping:
    """What a turn-stopping hook is asked about: the turn and how it would end."""

    turn: int
    step: int
    """The step that ended the turn."""
    reason: Literal["completed", "max-tokens"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Continue:
    """Do not stop yet: queue ``message`` for another step of the turn."""

    message: Any
    """Text, content blocks or a user message (as ``Agent.steer`` takes)."""


PreStepHook: TypeAlias = Callable[
    [PreStep], "Enter | Reject | Awaitable[Enter | Reject | None] | None"
]
"""A pre-step hook: plain or ``async``, returning ``None``, ``Enter`` or ``Reject``."""
TurnStoppingHook: TypeAlias = Callable[
    [TurnStopping], "Continue | Awaitable[Continue | None] | None"
]
"""A turn-stopping hook: plain or ``async``, returning ``None`` or ``Continue``."""


async def _call(hook: Callable[[Any], Any], argument: Any) -> Any:
    result = hook(argument)
    if inspect.isawaitable(result):
        result = await result
    return result


async def run_pre_step_hooks(
    hooks: Sequence[PreStepHook],
    turn: int,
    step: int,
    messages: Sequence[JsonValue],
    freeze: Callable[[Any], JsonValue],
) -> Enter | Reject:
    """The pre-step waterfall: each hook sees the previous one's messages; a reject wins.

    Args:
        hooks: The hooks, in the order they run.
        turn: The turn.
        step: The step about to start.
        messages: The claimed user messages (frozen).
        freeze: Makes a user message of what a hook returned (``inbox.user_message``).

    Raises:
        TypeError: a hook returned something else than ``None``, ``Enter`` or ``Reject``.
    """
    entered = Enter(messages=tuple(messages))
    series = False
    for hook in hooks:
        decision = await _call(hook, PreStep(turn=turn, step=step, messages=entered.messages or ()))
        if decision is None:
            continue
        if isinstance(decision, Reject):
            return decision
        if not isinstance(decision, Enter):
            raise TypeError(f"a pre-step hook returns None, Enter or Reject, got {decision!r}")
        series = series or decision.starts_request_series
        if decision.messages is not None:
            entered = Enter(messages=tuple(freeze(message) for message in decision.messages))
    return Enter(messages=entered.messages, starts_request_series=series)


async def run_turn_stopping_hooks(
    hooks: Sequence[TurnStoppingHook], stopping: TurnStopping
) -> Continue | None:
    """The turn-stopping hooks, one after another, until one continues the turn.

    Raises:
        TypeError: a hook returned something else than ``None`` or ``Continue``.
    """
    for hook in hooks:
        decision = await _call(hook, stopping)
        if decision is None:
            continue
        if not isinstance(decision, Continue):
            raise TypeError(f"a turn-stopping hook returns None or Continue, got {decision!r}")
        return decision
    return None
