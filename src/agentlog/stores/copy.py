"""``copy_session``: copy a stored session between any two stores, resumably, then verify it.

The copy is the session's stored log exactly — header, every event with its seq and time, no
repair closers and no end-seed marker (the target's readers add those in their views, as the
source's do) — converted to format 4 when the source holds an older format. Events are written
in durable batches, so an interrupted copy leaves a valid prefix, and copying again appends only
what is missing. A target holding a *different* log under the same id is refused. When the
target holds the whole log, it is read back and compared event by event with the source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentlog.errors import SessionAlreadyExists, StoreError
from agentlog.session import check_session_id
from agentlog.stores.store import Store
from agentlog.values import json_equal

__all__ = ["BATCH_EVENTS", "CopyResult", "copy_session"]

BATCH_EVENTS = 1000
"""Events per durable write of a copy (the unit an interrupted copy resumes from)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyResult:
    """What one ``copy_session`` did."""

    session_id: str
    events: int
    """Stored events of the session."""
    copied: int
    """Events written by this call (0 when the target already held them all)."""


def copy_session(
    source: Store,
    target: Store,
    session_id: str,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> CopyResult:
    """Copy ``session_id`` from ``source`` to ``target`` and verify the copy.

    Args:
        source: Where the session is (only read; a read-only store is enough).
        target: Where it goes; the session must be absent there, or a prefix of it.
        session_id: The session.
        progress: Called with (events in the target, events in all) after each batch.

    Raises:
        SessionNotFound, CorruptLog, FormatVersionError: when the source cannot be read.
        SessionAlreadyExists: when the target holds a different log under that id.
        SessionLocked: when the target session is open for writing elsewhere.
        StoreError: when the copy read back differs from the source.
    """
    session_id = check_session_id(session_id)
    inspection = source.inspection(session_id)
    view = inspection.session
    wire = [event.to_wire() for event in view.events[: inspection.stored_events]]
    header: dict[str, Any] = dict(view.header)
    done = _common_prefix(target, session_id, wire)
    copied = 0
    if done < len(wire):
        # The target's own lease and backend: this is the store-internal write path that
        # publishes header and events verbatim (as migrate-on-continue does), not an append.
        lease = target._lease(session_id)
        try:
            while done < len(wire):
                batch = wire[done : done + BATCH_EVENTS]
                target._backend.append(lease, header, batch, next_seq=done)
                done += len(batch)
                copied += len(batch)
                if progress is not None:
                    progress(done, len(wire))
        finally:
            lease.release()
    elif progress is not None:
        progress(done, len(wire))
    copy = target.read_from(session_id, 0)
    for seq, (original, written) in enumerate(zip(wire, copy, strict=False)):
        if not json_equal(original, written.to_wire()):
            raise StoreError(
                f'the copy of session "{session_id}" in {target.url!r} differs from the source '
                f"at seq {seq}",
                session_id=session_id,
            )
    if len(copy) != len(wire):
        raise StoreError(
            f'the copy of session "{session_id}" in {target.url!r} holds {len(copy)} events, '
            f"the source {len(wire)}",
            session_id=session_id,
        )
    return CopyResult(session_id=session_id, events=len(wire), copied=copied)


def _common_prefix(target: Store, session_id: str, wire: list[dict[str, Any]]) -> int:
    """How many leading events the target already holds (0 when it has no such session)."""
    if not target._backend.exists(session_id):
        return 0
    held = target.read_from(session_id, 0)
    if len(held) > len(wire) or any(
        not json_equal(mine.to_wire(), theirs) for mine, theirs in zip(held, wire, strict=False)
    ):
        raise SessionAlreadyExists(
            f'session "{session_id}" already exists in {target.url!r} with a different log',
            session_id=session_id,
        )
    return len(held)
