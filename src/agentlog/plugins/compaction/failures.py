"""What a compaction that fails records in the log, and what its caller is told.

Implements the failure half of spec/plugins.md §2.9: a failed bracket is closed by one
``compaction/end`` carrying the error chain (``close_with_error``), so the lock is released and
the attempt is on record; the caller gets a ``CompactionError`` whose ``code`` classifies the
failure (``classified``) — or, when the events landed in the session but the store could not
make them durable, ``persistence`` (``not_durable``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from agentlog.errors import CompactionError
from agentlog.plugins.sessions import AsyncSessionLike

__all__ = [
    "SurfaceChanged",
    "classified",
    "close_with_error",
    "error_chain",
    "flush_quietly",
    "not_durable",
]


class SurfaceChanged(Exception):  # an outcome of the race, not a bug
    """The surface moved under a running compaction."""


def not_durable(exc: BaseException, *, manual: bool) -> CompactionError:
    """A compaction event landed in the session, but the store could not make it durable."""
    if manual:
        return CompactionError("manual compaction durability checkpoint failed", code="persistence")
    return CompactionError(f"compaction is not durable: {exc}", code="persistence")


async def close_with_error(
    writer: AsyncSessionLike, ids: Mapping[str, Any], owner: Any, exc: BaseException
) -> bool:
    """Append the failed bracket's ``compaction/end``; ``False`` when even that fails."""
    try:
        await writer.append("compaction/end", {**ids, "turn": owner, "error": error_chain(exc)})
    except Exception:  # the orphan start is left on purpose: a detectable, live lock
        return False
    return True


async def flush_quietly(writer: AsyncSessionLike) -> None:
    """Try to make a failed bracket's close durable; a failure here is not the news."""
    try:
        await writer.flush()
    except Exception:  # reported through the original failure, which is what matters
        return


def error_chain(exc: BaseException) -> str:
    """The error and its causes, one after another (dsh's ``errorChain``)."""
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled"
    parts, seen = [], set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts.append(str(current) or type(current).__name__)
        if current.__cause__ is not None:
            current = current.__cause__
        else:
            current = None if current.__suppress_context__ else current.__context__
    return "; caused by: ".join(parts)


def classified(exc: BaseException, *, stage: str, manual: bool) -> CompactionError:
    """The failure as the caller sees it (§2.9 post): manual ones by code, automatic raw."""
    if isinstance(exc, CompactionError) and exc.code in ("cancelled", "busy", "invalid"):
        return exc
    if not manual:
        code = (
            "commit"
            if stage == "commit"
            else ("changed" if isinstance(exc, SurfaceChanged) else "summary")
        )
        return CompactionError(str(exc) or type(exc).__name__, code=code)
    if stage == "commit":
        return CompactionError("manual compaction did not commit cleanly", code="commit")
    if isinstance(exc, SurfaceChanged):
        return CompactionError(
            "the compacted history changed during manual compaction", code="changed"
        )
    return CompactionError("manual compaction could not produce a smaller summary", code="summary")
