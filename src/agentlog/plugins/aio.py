"""The plugin entry points for ``agentlog.aio`` sessions: the same names, awaited.

Implements STYLE.md §8 for the plugins: each twin here is a line-for-line parallel of its
synchronous original and shares its I/O-free half (``plan_pruning``, ``offload_targets``,
``requested_offload``, the expansion walk). A twin's appends are one group commit
(``async with session.batch()``): no other task's append comes between them, and the durable
write runs in a worker thread, off the event loop. ``expand`` only reads, so it stays
synchronous, as ``AsyncSession`` reads do. The compaction entry points (``compact``,
``compact_if_needed``, ``compact_region``) are coroutines already and take either kind of
session; ``agentlog.aio`` exports them with these.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from agentlog.events import Event
from agentlog.plugins.expand import expand as _expand
from agentlog.plugins.image_offload import offload_targets, requested_offload
from agentlog.plugins.pruner import (
    PruneConfig,
    PrunedResult,
    PruneResult,
    plan_pruning,
    pruned,
)
from agentlog.plugins.sessions import AsyncSessionLike

__all__ = ["expand", "offload_for_failure", "offload_images", "prune_tool_results"]


async def prune_tool_results(
    session: AsyncSessionLike, config: PruneConfig | None = None
) -> PruneResult:
    """Prune every oversized tool result on ``session``'s surface (see the sync original).

    Raises:
        CompactionError: ``invalid`` when no turn is open (nothing is written).
    """
    config = config or PruneConfig()
    done: list[PrunedResult] = []
    async with session.batch():
        for planned in plan_pruning(session.sync, config):
            await session.append("compaction/prune", planned.prune)
            replacement = await session.append(
                "tool/result",
                planned.replacement,
                surface_op=planned.surface_op,
                source_event_seqs=[planned.seq],
            )
            done.append(planned.done(replacement.seq))
    return pruned(done)


async def offload_images(
    session: AsyncSessionLike, count: int, *, within: Collection[int] | None = None
) -> Event | None:
    """Offload the ``count`` oldest images still sent, as one ``image/offload`` event.

    Returns:
        The appended event, or ``None`` when no image is left to offload.
    """
    async with session.batch():  # the targets are still the oldest when the event lands
        targets = offload_targets(session.sync, count, within=within)
        return await session.append("image/offload", {"targets": targets}) if targets else None


async def offload_for_failure(
    session: AsyncSessionLike, failure: Mapping[str, Any]
) -> Event | None:
    """Record the offload an ``IMAGE_OFFLOAD_REQUIRED`` failure asks for (else ``None``)."""
    wanted = requested_offload(failure)
    return None if wanted is None else await offload_images(session, wanted)


def expand(session: AsyncSessionLike, seq: int) -> list[Event]:
    """The original events the replacement at ``seq`` shadowed, in surface order.

    Raises:
        IndexError: when ``seq`` is not in the log.
    """
    return _expand(session.sync, seq)
