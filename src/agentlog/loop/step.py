"""One step: a model call (with its retries and recoveries), its settlement, then its tools.

Implements ``step()`` of spec/plugins.md §4.3 with §4.5 (every attempt settled by exactly one
durable event: ``assistant/message`` — with its ``stream`` and ``usage``, ``interrupted: true``
for a cancelled answer with visible text — or ``assistant/attempt`` for a failed, retried or
cancelled attempt; a failed stream whose settling event is refused raises
``SettlementRejected``, the spec's "Assistant stream failed and its durable settlement was
rejected"), §4.7 (cancellation mid-stream), §4.8 (failures end the turn with an
``LlmFailure``; a stream that ends without a finish is ``TRANSPORT``, never a short answer;
an answer with nothing in it is ``EMPTY_RESPONSE``), §4.9 (retries: ``llm/retry`` before the
wait, ``llm/retry-started`` after) and the recovery paths of §2.7 (context overflow → compact
and retry the step, at most ``maxOverflowRetries`` times in a row) and §3
(``IMAGE_OFFLOAD_REQUIRED`` → offload and retry), neither of which spends the retry budget.

Checkpoints: the request's events are durable before the provider is called.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping
from typing import Any, Literal

from agentlog.errors import (
    AgentlogError,
    CompactionConfigError,
    CompactionError,
    ProviderError,
    SettlementRejected,
)
from agentlog.events import Event, messages, payloads
from agentlog.loop.attempt import Attempt
from agentlog.loop.dispatch import execute_tool_calls
from agentlog.loop.frames import (
    AttemptEnded,
    AttemptStarted,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from agentlog.loop.model import ModelRequest
from agentlog.loop.retry import retry_plan
from agentlog.loop.runtime import Runtime
from agentlog.plugins import PruneConfig, compact_if_needed, offload_for_failure
from agentlog.plugins.compaction import CompactionConfig

__all__ = ["LlmFailed", "StepOutcome", "error_chain", "run_step"]

_logger = logging.getLogger("agentlog.loop")

StepOutcome = Literal["completed", "max-tokens"] | None
"""How a step ends its turn: ``completed``, ``max-tokens``, or ``None`` (the turn goes on)."""


class LlmFailed(Exception):
    """A model call failed for good: the turn ends ``error`` with ``failure``."""

    def __init__(self, failure: Mapping[str, Any]) -> None:
        super().__init__(failure.get("message"))
        self.failure = dict(failure)


def error_chain(exc: BaseException) -> str:
    """The error and its causes, one after another (dsh's ``errorChain``)."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts.append(str(current) or type(current).__name__)
        current = current.__cause__ or (
            None if current.__suppress_context__ else current.__context__
        )
    return "; caused by: ".join(parts)


async def run_step(rt: Runtime, turn: int, step: int, *, starts_series: bool) -> StepOutcome:
    """Call the model until an answer settles, then run the tools it asked for.

    Raises:
        LlmFailed: the call failed and no retry or recovery applies.
        asyncio.CancelledError: the agent was cancelled (the attempt is settled first).
    """
    first = True
    while True:
        rt.log_request(turn, step, starts_series=starts_series and first)
        first = False
        request = rt.request()
        await rt.checkpoints.durable()  # the request's events before the request
        attempt = await _stream(rt, turn, step, request)
        failure = _failure(attempt)
        if failure is not None:
            records = attempt.records()
            data = payloads.assistant_attempt(turn, step, records)
            failed = ProviderError(failure["message"], failure=failure, code=failure["code"])
            _settle(rt, attempt.id, "assistant/attempt", data, failed=failed)
            if await _recover(rt, turn, step, failure):
                continue
            raise LlmFailed(failure)
        break
    blocks, replay = attempt.content()
    message = messages.assistant(
        blocks, provider=rt.provider.name, model=request.model, turn=turn, step=step,
        stream=attempt.records(), usage=attempt.usage,
    )  # fmt: skip
    if replay is not None:
        message["message"]["source"]["replayState"] = replay
    _settle(rt, attempt.id, "assistant/message", message)
    rt.overflow_retries = 0
    if attempt.finish_kind == "max-tokens":
        return "max-tokens"
    calls = [block for block in blocks if block.get("type") == "tool-call"]
    if not calls:
        return "completed"
    if await execute_tool_calls(rt, turn, step, calls):
        return "completed"  # a result concludes the turn (spec/plugins.md §4.3)
    return None


async def _stream(rt: Runtime, turn: int, step: int, request: ModelRequest) -> Attempt:
    """Stream one attempt; on cancellation settle it (spec/plugins.md §4.7) and re-raise."""
    rt.attempts += 1
    attempt = Attempt(f"{rt.session.id}:{rt.attempts}")
    if rt.listeners:
        rt.emit(AttemptStarted(attempt_id=attempt.id, turn=turn, step=step))
    clock = rt.clock
    stream = rt.provider.stream(request)
    try:
        try:
            async for chunk in stream:
                attempt.add(chunk, clock())
                if rt.listeners:
                    _chunk_frame(rt, attempt.id, chunk)
                if attempt.finish is not None:
                    break  # nothing follows a finish
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
    except asyncio.CancelledError as exc:
        _settle_cancelled(rt, turn, step, attempt, exc)
        raise
    except ProviderError as exc:
        attempt.error = dict(exc.failure or {"message": str(exc), "code": exc.code})
    except Exception as exc:  # any other adapter failure is UNKNOWN (§4.8)
        attempt.error = {"message": error_chain(exc), "code": "UNKNOWN"}
    return attempt


def _settle(
    rt: Runtime,
    attempt_id: str,
    event_type: str,
    data: dict[str, Any],
    *,
    failed: BaseException | None = None,
) -> Event:
    """Append the event that settles an attempt (§4.5); tell listeners how it ended.

    Raises:
        SettlementRejected: the stream had failed with ``failed`` and the append was refused.
    """
    surface_op = "append" if event_type == "assistant/message" else None
    try:
        event = rt.append(event_type, data, surface_op=surface_op)
    except Exception as exc:
        _ended(rt, attempt_id, "abandoned")
        if failed is not None:
            raise SettlementRejected.of(failed, exc) from exc
        raise
    except BaseException:
        _ended(rt, attempt_id, "abandoned")
        raise
    _ended(rt, attempt_id, "committed", event.type, event.seq)
    return event


def _failure(attempt: Attempt) -> dict[str, Any] | None:
    """Why the attempt failed, or ``None`` for an answer (spec/plugins.md §4.8, §5.3)."""
    failure = attempt.failure
    if failure is not None:
        return failure
    if attempt.finish is None:
        return {"message": "the model stream ended without a finish", "code": "TRANSPORT"}
    if attempt.finish_kind == "max-tokens":
        return None
    blocks = attempt.blocks()
    if not attempt.visible() and not any(
        block.get("type") not in ("text", "reasoning") for block in blocks
    ):
        return {"message": "the model returned an empty response", "code": "EMPTY_RESPONSE"}
    return None


def _settle_cancelled(
    rt: Runtime, turn: int, step: int, attempt: Attempt, cancel: asyncio.CancelledError
) -> None:
    """Settle an attempt the agent cancelled mid-stream (spec/plugins.md §4.7, §4.5).

    Visible text or reasoning is kept as ``assistant/message {interrupted: true}`` holding only
    those blocks (no tool calls); otherwise the attempt is an ``assistant/attempt``.
    """
    records = attempt.records()
    if attempt.visible():
        data = messages.assistant(
            attempt.interrupted_blocks(), provider=rt.provider.name, model=rt.model,
            turn=turn, step=step, stream=records, usage=attempt.usage,
        )  # fmt: skip
        data["interrupted"] = True
        _settle(rt, attempt.id, "assistant/message", data, failed=cancel)
    else:
        data = payloads.assistant_attempt(turn, step, records)
        _settle(rt, attempt.id, "assistant/attempt", data, failed=cancel)


async def _recover(rt: Runtime, turn: int, step: int, failure: Mapping[str, Any]) -> bool:
    """Whether the step retries after ``failure`` (recovery or policy); waits as needed."""
    code = failure.get("code")
    since = rt.session.seq
    try:
        if code == "CONTEXT_WINDOW_EXCEEDED" and await _compact_overflow(rt):
            return True
        if code == "IMAGE_OFFLOAD_REQUIRED":
            try:
                if offload_for_failure(rt.session, failure) is not None:
                    return True
            except AgentlogError as exc:  # e.g. a session created without the projection
                _logger.warning("image offload failed: %s", exc)
    finally:
        rt.announce(since)
    plan = retry_plan(rt.provider.retry_policy, failure, rt.step_retries, rand=rt.rand)
    if plan is None:
        return False
    policy = rt.provider.retry_policy
    assert policy is not None  # a plan needs a policy
    retry_id = str(uuid.uuid4())
    rt.append(
        "llm/retry",
        payloads.llm_retry(
            retry_id=retry_id, turn=turn, step=step, provider=rt.provider.name,
            mode=policy.mode, policy_key=policy.key, retry=plan.retry,
            max_retries=plan.max_retries, delay_ms=plan.delay_ms, failure=failure,
        ),
    )  # fmt: skip
    await asyncio.sleep(plan.delay_ms / 1000)
    rt.append(
        "llm/retry-started",
        payloads.llm_retry_started(retry_id=retry_id, turn=turn, step=step, retry=plan.retry),
    )
    rt.step_retries = plan.retry
    return True


async def _compact_overflow(rt: Runtime) -> bool:
    """Compact after a context-overflow refusal (spec/plugins.md §2.7); whether to retry."""
    config = rt.compaction
    if rt.summarizer is None or config is None or not config.auto:
        return False
    if rt.overflow_retries >= _max_overflow_retries(rt, config):
        return False
    session = rt.session
    before = session.surface.replace_generation
    try:
        result = await compact_if_needed(
            session, rt.summarizer, trigger="context-overflow", config=config,
            prune=PruneConfig(), context_window=rt.context_window(),
        )  # fmt: skip
    except (CompactionError, CompactionConfigError) as exc:
        _logger.warning("context-overflow compaction failed: %s", exc)
        result = None
    if result is None and session.surface.replace_generation == before:
        return False
    rt.overflow_retries += 1
    return True


def _max_overflow_retries(rt: Runtime, config: CompactionConfig) -> int:
    return config.policy_for(rt.provider.name, rt.model).max_overflow_retries


def _chunk_frame(rt: Runtime, attempt_id: str, chunk: Mapping[str, Any]) -> None:
    kind = chunk.get("type")
    index = chunk.get("index", 0)
    if kind == "text-delta":
        rt.emit(TextDelta(attempt_id=attempt_id, index=index, text=chunk.get("text", "")))
    elif kind == "reasoning-delta":
        rt.emit(ReasoningDelta(attempt_id=attempt_id, index=index, text=chunk.get("text", "")))
    elif kind == "tool-call-delta":
        rt.emit(
            ToolCallDelta(
                attempt_id=attempt_id, index=index, call_id=chunk.get("id", ""),
                name=chunk.get("name"), arguments_delta=chunk.get("argumentsDelta", ""),
            )
        )  # fmt: skip


def _ended(
    rt: Runtime,
    attempt_id: str,
    outcome: Literal["committed", "abandoned"],
    event_type: str | None = None,
    seq: int | None = None,
) -> None:
    if rt.listeners:
        rt.emit(
            AttemptEnded(attempt_id=attempt_id, outcome=outcome, event_type=event_type, seq=seq)
        )
