"""Running a step's tool calls: a capped pool, durable calls, results in model order.

Implements ``executeToolCalls`` of spec/plugins.md §4.6 with the tool checkpoint of
spec/persistence.md §6.1: calls start in model order in a rolling pool of at most
``max_parallel_tool_calls``, an *exclusive* tool's call being a barrier that runs alone; each
started call appends ``tool/call`` first, and no tool body runs before its ``tool/call`` is
durable (the calls started together share one durable write). Results are committed strictly in
model order — a call that finishes early waits for the ones before it — as ``tool/result``
citing its ``tool/call`` (``sourceEventSeqs``). A tool that raises, an unknown tool and
arguments that are not a JSON object all become error results the model sees. A tool returning a
``ToolResult`` may queue ``additional_contexts`` for the next step (the ``next-step`` inbox,
once its result is committed) and end the turn after this step (``concludes_turn``).

On cancellation (§4.6, §4.7): nothing more starts; running calls are cancelled (an ``async``
tool sees ``CancelledError``; a synchronous tool's thread cannot be stopped, so its eventual
return is discarded) and get an error result saying their outcome is unknown; finished calls
keep their results; every call that never started gets a synthetic ``tool/call`` and an
``ABORTED_BEFORE_DISPATCH`` result, so the transcript stays provider-valid.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentlog.events import messages, payloads
from agentlog.loop.frames import ToolFinished, ToolStarted
from agentlog.loop.runtime import Runtime
from agentlog.loop.tools import ToolArgumentsError, ToolResult, parse_arguments, render_output
from agentlog.values import JsonValue

__all__ = ["ABORTED_BEFORE_DISPATCH", "ABORTED_WHILE_RUNNING", "execute_tool_calls"]

ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"
"""The error code of a call the agent was cancelled before it started."""
ABORTED_WHILE_RUNNING = "ABORTED_WHILE_RUNNING"
"""The error code of a call the agent was cancelled while it ran (its outcome is unknown)."""

_BEFORE_DISPATCH_TEXT = "Error: tool call aborted before dispatch"
_WHILE_RUNNING_TEXT = (
    "Error: tool call aborted while it was running; its outcome is unknown. Do not retry blindly."
)


@dataclass(slots=True)
class _Outcome:
    content: list[dict[str, Any]]
    error: dict[str, str] | None = None
    contexts: tuple[JsonValue, ...] = ()
    concludes: bool = False


async def execute_tool_calls(
    rt: Runtime, turn: int, step: int, calls: Sequence[Mapping[str, Any]]
) -> bool:
    """Run ``calls`` (the answer's tool-call blocks) and commit their results in model order.

    Returns:
        Whether a result concludes the turn (``ToolResult.concludes_turn``).

    Raises:
        asyncio.CancelledError: the agent was cancelled; every call has a result first.
    """
    count = len(calls)
    exclusive = [_exclusive(rt, call) for call in calls]
    call_seqs: list[int | None] = [None] * count
    outcomes: list[_Outcome | None] = [None] * count
    running: dict[int, asyncio.Task[_Outcome]] = {}
    finished = _Finished()
    next_start = next_commit = 0
    concludes = False
    try:
        while next_commit < count:
            started: list[int] = []
            while next_start < count and len(running) + len(started) < rt.max_parallel_tool_calls:
                busy = running.keys() | started
                if busy and (exclusive[next_start] or any(exclusive[i] for i in busy)):
                    break  # an exclusive call is a barrier: it runs alone
                call = calls[next_start]
                event = rt.append(
                    "tool/call",
                    payloads.tool_call(
                        turn, step, call["id"], call["name"], str(call.get("arguments", ""))
                    ),
                )
                call_seqs[next_start] = event.seq
                started.append(next_start)
                next_start += 1
            if started:
                await rt.checkpoints.durable()  # a tool body runs only after its call is durable
                for index in started:
                    running[index] = asyncio.ensure_future(_signalled(rt, calls[index], finished))
            while next_commit < count and (outcome := outcomes[next_commit]) is not None:
                _commit(rt, turn, step, calls[next_commit], call_seqs[next_commit], outcome)
                concludes = concludes or outcome.concludes
                next_commit += 1
            if next_commit >= count:
                break
            await finished.wait(running.values())
            for index, task in list(running.items()):
                if task.done():
                    outcomes[index] = task.result()
                    del running[index]
    except asyncio.CancelledError:
        await _abort(rt, turn, step, calls, call_seqs, outcomes, running, next_commit)
        raise
    return concludes


class _Finished:
    """Wakes the step when one of its running calls finishes (``asyncio.wait`` for the first).

    The call's own task signals as its coroutine ends, so the step resumes one event-loop pass
    sooner than through a done callback, once per tool call; a cancel of the waiting step
    leaves the calls running, as ``wait`` does (the abort path cancels them itself).
    """

    __slots__ = ("_waiter",)

    def __init__(self) -> None:
        self._waiter: asyncio.Future[None] | None = None

    def signal(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, tasks: Iterable[asyncio.Task[_Outcome]]) -> None:
        """Return once one of ``tasks`` is done.

        At once if one already is: a call that ended while the step awaited something else
        (its calls' checkpoint) signalled nobody.
        """
        if any(task.done() for task in tasks):
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None


async def _signalled(rt: Runtime, call: Mapping[str, Any], finished: _Finished) -> _Outcome:
    try:
        return await _run(rt, call)
    finally:
        finished.signal()  # the task is done by the time the step resumes (same loop pass)


def _exclusive(rt: Runtime, call: Mapping[str, Any]) -> bool:
    known = rt.tools.get(call["name"])
    return known is not None and known.exclusive


async def _abort(
    rt: Runtime,
    turn: int,
    step: int,
    calls: Sequence[Mapping[str, Any]],
    call_seqs: list[int | None],
    outcomes: list[_Outcome | None],
    running: dict[int, asyncio.Task[_Outcome]],
    next_commit: int,
) -> None:
    """Give every call of the step a result after a cancel (spec/plugins.md §4.6 abort path)."""
    for task in running.values():
        task.cancel()
    if running:
        await asyncio.wait(running.values())
    for index, task in running.items():
        if task.cancelled():
            outcomes[index] = _error(_WHILE_RUNNING_TEXT, "AbortError", ABORTED_WHILE_RUNNING)
        else:
            outcomes[index] = task.result()
    for index in range(next_commit, len(calls)):
        call = calls[index]
        if call_seqs[index] is None:
            event = rt.append(
                "tool/call",
                payloads.tool_call(
                    turn, step, call["id"], call["name"], str(call.get("arguments", ""))
                ),
            )
            call_seqs[index] = event.seq
        if outcomes[index] is None:
            outcomes[index] = _error(_BEFORE_DISPATCH_TEXT, "AbortError", ABORTED_BEFORE_DISPATCH)
        _commit(rt, turn, step, call, call_seqs[index], outcomes[index])


def _error(text: str, name: str, code: str) -> _Outcome:
    return _Outcome(content=[{"type": "text", "text": text}], error={"name": name, "code": code})


async def _run(rt: Runtime, call: Mapping[str, Any]) -> _Outcome:
    """Run one call; every failure but cancellation becomes an error result."""
    name = call["name"]
    arguments = parse_arguments(str(call.get("arguments", "")))
    if rt.listeners:
        rt.emit(ToolStarted(call_id=call["id"], name=name, arguments=arguments))
    tool = rt.tools.get(name)
    if tool is None:
        known = ", ".join(sorted(rt.tools)) or "none"
        return _error(
            f"Error: unknown tool {name!r} (available: {known})", "UnknownToolError", "UNKNOWN_TOOL"
        )
    try:
        output = await tool.run(arguments)
        if isinstance(output, ToolResult):
            return _Outcome(
                content=render_output(output.output),
                contexts=tuple(output.context_messages()),
                concludes=output.concludes_turn,
            )
        return _Outcome(content=render_output(output))
    except ToolArgumentsError as exc:
        return _error(f"Error: {exc}", "ToolArgumentsError", "INVALID_ARGUMENTS")
    except Exception as exc:  # the model sees the failure and may recover
        return _error(f"Error: {type(exc).__name__}: {exc}", type(exc).__name__, "TOOL_ERROR")


def _commit(
    rt: Runtime,
    turn: int,
    step: int,
    call: Mapping[str, Any],
    call_seq: int | None,
    outcome: _Outcome | None,
) -> None:
    """Append the ``tool/result`` of ``call``, citing its ``tool/call``; queue its contexts."""
    assert outcome is not None
    assert call_seq is not None
    call_id = call["id"]
    data = messages.tool_result(
        call_id,
        outcome.content,
        turn=turn,
        step=step,
        is_error=True if outcome.error is not None else None,
        error=outcome.error,
    )
    event = rt.append("tool/result", data, surface_op="append", source_event_seqs=[call_seq])
    for context in outcome.contexts:
        rt.queue("next-step", context)
    if rt.listeners:
        rt.emit(
            ToolFinished(
                call_id=call_id,
                name=call["name"],
                is_error=outcome.error is not None,
                content=tuple(outcome.content),
                seq=event.seq,
            )
        )
