"""One turn of the agent loop, in the spec's exact event order, closed whatever happens.

Implements ``turn()`` of spec/plugins.md §4.3: ``turn/start``; then per step the inbox claim
(all steering, plus the turn's prompt on step 1), the pre-step hooks (``agentlog.loop.hooks``; a
reject ends the turn ``blocked`` without the step), automatic compaction before the step (§2.7;
a failure only warns), ``step/start``, the system prompt (§4.11: surface node 0, a changed
prompt replacing only that node), the claimed ``user/message``s, a runtime-context snapshot when
it changed (``agentlog.loop.context``, §4.10), the step itself (``step``),
``step/end``; the turn goes on while a step asks for it or steering waits (the turn-stopping
hooks, run when it would stop, may queue more); ``turn/end`` with ``blocked``, ``completed``,
``max-tokens`` (sticky once a step hit it), ``aborted`` (§4.7, with the cancel cause) or
``error`` (§4.8, with the ``LlmFailure``). Durability (spec/persistence.md §6.1): a step's end
is made durable with the next request's checkpoint (the policy's pre-step flush and its request
flush are one write when nothing leaves the process between them), before an automatic
compaction (whose summarizer may call a model), and at the turn's end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from agentlog.errors import CompactionConfigError, CompactionError
from agentlog.events import payloads
from agentlog.loop.frames import TurnFailed
from agentlog.loop.hooks import (
    Enter,
    Reject,
    TurnStopping,
    run_pre_step_hooks,
    run_turn_stopping_hooks,
)
from agentlog.loop.inbox import Inbox, Target, user_message
from agentlog.loop.runtime import Runtime
from agentlog.loop.step import LlmFailed, StepOutcome, error_chain, run_step
from agentlog.loop.system import SystemPrompt
from agentlog.plugins import PruneConfig, compact_if_needed
from agentlog.values import JsonValue

__all__ = ["last_turn", "run_turn"]

_logger = logging.getLogger("agentlog.loop")


async def run_turn(
    rt: Runtime,
    inbox: Inbox,
    turn: int,
    prompt: SystemPrompt,
    cause: Callable[[], Mapping[str, Any] | None],
) -> None:
    """Run turn ``turn`` to its ``turn/end`` (see the module docstring).

    Args:
        rt: The agent's runtime.
        inbox: Its pending input.
        turn: The turn number (the last one logged, plus one).
        prompt: Its system prompt.
        cause: Why the agent was cancelled, asked when the turn is aborted.

    Raises:
        AgentlogError: the log refused an event (the turn may be left open).
    """
    rt.append("turn/start", payloads.turn_start(turn))
    target: Target = "next-turn"
    ends: StepOutcome = None
    max_tokens = False
    blocked = False
    step = 0
    reason: payloads.TurnEnd
    try:
        while True:
            claimed = inbox.claim(target)
            decision = await _decide(rt, turn, step + 1, claimed)
            if decision is None:
                blocked = True  # a hook rejected the step: the turn ends without it
                break
            claimed = list(decision.messages or ())
            if ends is not None and not claimed:
                break
            if step == 0 and not claimed:
                ends = "completed"  # the input was withdrawn: a turn with no step
                break
            await _pre_step(rt)
            step += 1
            rt.step_retries = 0
            rt.append("step/start", payloads.step_start(turn, step))
            prompt.settle(rt, turn, step, new_series=rt.new_series(decision.starts_request_series))
            for message in claimed:
                rt.append("user/message", message, surface_op="append")
            await _runtime_context(rt)
            try:
                ends = await run_step(rt, turn, step, starts_series=decision.starts_request_series)
            finally:
                rt.append("step/end", payloads.step_end(turn, step))
            max_tokens = max_tokens or ends == "max-tokens"
            if ends is not None and not inbox.pending("next-step"):
                await _stopping(rt, turn, step, "max-tokens" if max_tokens else "completed")
            if ends is not None and not inbox.pending("next-step"):
                break
            # The step's results and its end join the next request's checkpoint (§6.1 flushes
            # at pre-step; nothing leaves the process in between, so nothing is lost that a
            # separate write would keep), or the turn's end if no request follows.
            target = "next-step"
        kind: payloads.TurnEndKind = (
            "blocked" if blocked else "max-tokens" if max_tokens else "completed"
        )
        reason = payloads.turn_end(turn, kind)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()  # the cancel is handled here: the turn closes normally
        reason = payloads.turn_end(turn, "aborted", cause=cause() or {"kind": "disposed"})
    except Exception as exc:
        failure = exc.failure if isinstance(exc, LlmFailed) else None
        failure = failure or {"message": error_chain(exc), "code": "UNKNOWN"}
        if not isinstance(exc, LlmFailed):
            _logger.warning("agent turn %d failed: %s", turn, failure["message"], exc_info=exc)
        if rt.listeners:
            rt.emit(TurnFailed(turn=turn, step=step or None, error=failure))
        reason = payloads.turn_end(turn, "error", error=failure)
    rt.step_retries = 0
    rt.append("turn/end", reason)
    await rt.checkpoints.durable()


async def _decide(rt: Runtime, turn: int, step: int, claimed: list[JsonValue]) -> Enter | None:
    """The pre-step hooks' decision on the step's input; ``None`` when one rejected it."""
    if not rt.pre_step_hooks:
        return Enter(messages=tuple(claimed))
    decision = await run_pre_step_hooks(rt.pre_step_hooks, turn, step, claimed, user_message)
    return None if isinstance(decision, Reject) else decision


async def _stopping(
    rt: Runtime, turn: int, step: int, reason: Literal["completed", "max-tokens"]
) -> None:
    """The turn-stopping hooks; a ``Continue`` queues its message for another step."""
    if not rt.turn_stopping_hooks:
        return
    stopping = TurnStopping(turn=turn, step=step, reason=reason)
    decision = await run_turn_stopping_hooks(rt.turn_stopping_hooks, stopping)
    if decision is not None:
        rt.queue("next-step", user_message(decision.message))


async def _runtime_context(rt: Runtime) -> None:
    """Append a runtime-context snapshot, last of the step's user messages, if it changed."""
    contexts = rt.contexts
    if contexts is None:
        return
    message = await contexts.message(rt.session)
    if message is not None:
        contexts.committed(rt.append("user/message", message, surface_op="append"))


async def _pre_step(rt: Runtime) -> None:
    """Automatic compaction before a step (spec/plugins.md §2.7); failures only warn."""
    config = rt.compaction
    if rt.summarizer is None or config is None or not config.auto:
        return
    window = rt.context_window()
    if window is None:
        return
    # The summarizer may call the model: what the turn has so far is durable first (§6.1).
    await rt.checkpoints.durable()
    rt.checkpoints.hold()  # compaction's events join the turn's group commit
    since = rt.session.seq
    try:
        await compact_if_needed(
            rt.session, rt.summarizer, context_window=window, config=config, prune=PruneConfig()
        )
    except (CompactionError, CompactionConfigError) as exc:
        _logger.warning("step compaction failed: %s; continuing the turn", exc)
    finally:
        rt.announce(since)


def last_turn(events: Sequence[Mapping[str, Any]]) -> int:
    """The number of the last ``turn/start`` in the log (0 when none): turns continue from it."""
    for event in reversed(events):
        if event["type"] == "turn/start":
            turn = event["data"].get("turn")
            return turn if type(turn) is int else 0
    return 0
