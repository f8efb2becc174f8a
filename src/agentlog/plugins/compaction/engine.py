"""The compaction entry points: manual, automatic (pressure, context overflow), explicit span.

Implements spec/plugins.md §2.7 and §2.11 on top of the transaction (``transaction``):

* ``compact(session, summarizer)`` — manual compaction between turns (``compactNow``): keep
  only the newest indivisible unit, a standalone bracket, durable before it returns; ``None``
  (and nothing written) when there is nothing to compact.
* ``compact_if_needed(session, summarizer, context_window=...)`` — what an agent loop calls
  before each step (``trigger="pressure"``: compact when the measured request reaches the
  threshold, pruning tool results first when allowed, retrying while still above) or after the
  provider refused a request as too long (``"context-overflow"``: prune and compact down to the
  newest unit, no threshold).
* ``compact_region(session, start, end, summarizer)`` — an explicit span inside the open turn.

Each takes a ``Session`` or an ``agentlog.aio`` session (``plugins.sessions``); ``agentlog.aio``
exports them under the same names.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Literal

from agentlog.errors import CompactionConfigError, CompactionError
from agentlog.plugins.aio import prune_tool_results
from agentlog.plugins.compaction.config import CompactionConfig, CompactionPolicy
from agentlog.plugins.compaction.selection import select_compactable_range
from agentlog.plugins.compaction.summary import Summarizer
from agentlog.plugins.compaction.transaction import (
    CompactionResult,
    active_compaction,
    run_compaction,
)
from agentlog.plugins.meter import TokenMeter
from agentlog.plugins.pruner import PruneConfig
from agentlog.plugins.sessions import AsyncSessionLike, as_async
from agentlog.session import Session

__all__ = ["DEFAULT_METER", "compact", "compact_if_needed", "compact_region", "routed_target"]

DEFAULT_METER = TokenMeter()
"""The meter the entry points share unless given another."""

Trigger = Literal["pressure", "context-overflow"]


def routed_target(session: Session) -> tuple[str, str] | None:
    """Provider and model of the request header in force, when it names both."""
    header = session.request_header()
    config = header.get("config") if isinstance(header, Mapping) else None
    if not isinstance(config, Mapping):
        return None
    provider, model = config.get("provider"), config.get("model")
    if isinstance(provider, str) and provider and isinstance(model, str) and model:
        return provider, model
    return None


def _summary_target(policy: CompactionPolicy, session: Session) -> tuple[str, str] | None:
    """The configured summarization pair, else the routed request's (spec/plugins.md §2.10)."""
    if policy.summarization_provider:
        return policy.summarization_provider, policy.summarization_model
    return routed_target(session)


async def compact(
    session: Session | AsyncSessionLike,
    summarizer: Summarizer,
    *,
    config: CompactionConfig | None = None,
    source_command_id: str | None = None,
    cancel: asyncio.Event | None = None,
    meter: TokenMeter | None = None,
) -> CompactionResult | None:
    """Compact everything but the newest indivisible unit, between turns (``compactNow``).

    Args:
        session: An idle session (no open turn); a ``Session`` or an ``agentlog.aio`` one.
        summarizer: Writes the summary (``ModelSummarizer``, ``ExtractiveSummarizer``, ...).
        config: Policy (summary cap, summarization target); dsh's defaults when ``None``.
        source_command_id: The command that asked for it, recorded on every event.
        cancel: Set to cancel the compaction (``CompactionError`` code ``cancelled``).
        meter: The token meter (a shared default otherwise).

    Returns:
        What was written, or ``None`` when there is nothing to compact (nothing written).

    Raises:
        CompactionError: ``busy``, ``changed``, ``summary``, ``commit``, ``persistence`` or
            ``cancelled`` (spec/plugins.md §2.11); the log records the failed attempt.
    """
    meter = meter or DEFAULT_METER
    config = config or CompactionConfig()
    log = as_async(session).sync
    target = routed_target(log)
    policy = config.policy_for(*target) if target else config.policy
    span = select_compactable_range(log, meter.measure(log), retain_tokens=0)
    if span is None:
        return None
    return await run_compaction(
        session,
        *span,
        summarizer,
        manual=True,
        meter=meter,
        max_tokens=policy.max_tokens,
        target=_summary_target(policy, log),
        source_command_id=source_command_id,
        cancel=cancel,
    )


async def compact_region(
    session: Session | AsyncSessionLike,
    start: int,
    end: int,
    summarizer: Summarizer,
    *,
    config: CompactionConfig | None = None,
    meter: TokenMeter | None = None,
) -> CompactionResult:
    """Compact the surface span ``start..end`` (inclusive, by position) in the open turn.

    Raises:
        CompactionError: ``invalid`` for a seq not on the surface, a reversed span or one that
            would split a step's tool call from its result (refused, never widened); ``busy``
            without an open turn or with the lock held; otherwise as the failure was.
    """
    config = config or CompactionConfig()
    log = as_async(session).sync
    target = routed_target(log)
    policy = config.policy_for(*target) if target else config.policy
    return await run_compaction(
        session,
        start,
        end,
        summarizer,
        manual=False,
        meter=meter or DEFAULT_METER,
        max_tokens=policy.max_tokens,
        target=_summary_target(policy, log),
    )


async def compact_if_needed(
    session: Session | AsyncSessionLike,
    summarizer: Summarizer,
    *,
    context_window: int | None = None,
    trigger: Trigger = "pressure",
    config: CompactionConfig | None = None,
    prune: PruneConfig | None = None,
    meter: TokenMeter | None = None,
) -> CompactionResult | None:
    """Compact the open turn's session if its next request is too large (``compactIfNeeded``).

    Args:
        session: A session with an open turn (called before a step, or after an overflow).
        summarizer: Writes the summaries.
        context_window: The routed model's context window in tokens (``pressure`` needs it).
        trigger: ``"pressure"`` (threshold check first) or ``"context-overflow"`` (no check,
            compact down to the newest unit).
        config: The policy; dsh's defaults when ``None``.
        prune: Prune oversized tool results first (and stop if that sufficed); ``None`` skips.
        meter: The token meter.

    Returns:
        The last compaction written, or ``None`` when none was needed or possible (pruning
        alone may still have changed the surface: compare ``replace_generation``).

    Raises:
        CompactionConfigError: no context window for the routed model, or budgets that do
            not fit it (``target_key`` names the route).
        CompactionError: ``busy`` when the lock is held; the transaction's failures; or
            ``summary`` when it stays above the threshold after every allowed attempt.
    """
    meter = meter or DEFAULT_METER
    config = config or CompactionConfig()
    writer = as_async(session)
    log = writer.sync
    target = routed_target(log)
    if target is None:
        return None
    key = "/".join(target)
    policy = config.policy_for(*target)
    if trigger == "context-overflow":
        if prune is not None:
            await prune_tool_results(writer, prune)
        span = select_compactable_range(log, meter.measure(log), retain_tokens=0)
        if span is None:
            return None
        return await run_compaction(
            writer, *span, summarizer, manual=False, meter=meter,
            max_tokens=policy.max_tokens, target=_summary_target(policy, log),
        )  # fmt: skip
    measurement = meter.measure(log)
    if context_window is None:
        raise CompactionConfigError(
            f"compaction-basic: no context capacity for {key}; configure contextWindow on that "
            "adapter model",
            target_key=key,
        )
    if active_compaction(log) is not None:
        raise CompactionError(
            "compaction: compaction already in progress; the session compaction lock is "
            "already active",
            code="busy",
        )
    spec = policy.spec(context_window, key)
    if measurement.total_tokens < spec.threshold_tokens:
        return None
    if prune is not None:
        await prune_tool_results(writer, prune)
        measurement = meter.measure(log)
        if measurement.total_tokens < spec.threshold_tokens:
            return None
    result: CompactionResult | None = None
    attempts = policy.compaction_retries + 1
    for _attempt in range(attempts):
        span = select_compactable_range(log, measurement, spec.retain_tokens)
        if span is None:
            return result
        result = await run_compaction(
            writer, *span, summarizer, manual=False, meter=meter,
            max_tokens=policy.max_tokens, target=_summary_target(policy, log),
        )  # fmt: skip
        measurement = meter.measure(log)
        if measurement.total_tokens < spec.threshold_tokens:
            return result
    raise CompactionError(
        f"compaction still above threshold after {attempts} compaction attempts "
        f"({measurement.total_tokens} estimated tokens >= threshold {spec.threshold_tokens})",
        code="summary",
    )
