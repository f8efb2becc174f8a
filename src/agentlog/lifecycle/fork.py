"""Fork: a child session that inherits an exact prefix of its parent (spec/core.md §10.1–§10.2).

Format 4 allows a fork at any seq: the child's seed is the parent's prefix through the
boundary, a tagged ``session/end-seed {inherited: true}`` at the cut, then the ``forked``
closers of any turn the cut leaves open. Events are immutable, so the child shares the
parent's event objects instead of copying them; nothing the child does reaches the parent.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from agentlog.errors import SessionForkError
from agentlog.lifecycle.repair import open_turn_closers
from agentlog.session import Session
from agentlog.values import is_seq, js_text

__all__ = ["build_fork_seed", "check_fork_boundary", "fork_session"]


def build_fork_seed(events: Sequence[Mapping[str, Any]], boundary: int) -> list[Mapping[str, Any]]:
    """The seed of a fork child cut after ``boundary`` (inclusive), spec/core.md §10.2.

    Returns the parent's events ``0..boundary`` (shared, not copied), then
    ``{type: "session/end-seed", seq: boundary + 1, time: <boundary's time>, data: {inherited:
    true}}``, then ``open_turn_closers(..., "forked")``.
    """
    prefix = list(events[: boundary + 1])
    marker = {
        "type": "session/end-seed",
        "seq": boundary + 1,
        "time": prefix[-1]["time"],
        "data": {"inherited": True},
    }
    seed: list[Mapping[str, Any]] = [*prefix, marker]
    seed.extend(open_turn_closers(seed, "forked"))
    return seed


def check_fork_boundary(session_id: str, length: int, boundary: object) -> int:
    """Validate a fork boundary against a log of ``length`` events (spec/core.md §10.1 step 3).

    Raises:
        SessionForkError: ``INVALID_BOUNDARY`` with the spec's texts.
    """
    if not is_seq(boundary) or type(boundary) is bool:
        raise SessionForkError(
            f'fork boundary for session "{session_id}" must be a non-negative safe integer, '
            f"got {js_text(boundary)}",
            code="INVALID_BOUNDARY",
            session_id=session_id,
        )
    assert isinstance(boundary, (int, float))  # a safe integer, by is_seq
    cut = int(boundary)
    if cut >= length:
        last = str(length - 1) if length else "none"
        raise SessionForkError(
            f'fork boundary {cut} does not exist in session "{session_id}" (last seq: {last})',
            code="INVALID_BOUNDARY",
            session_id=session_id,
        )
    return cut


def fork_session(parent: Session, boundary: object = None, child_id: str | None = None) -> Session:
    """Fork ``parent`` after ``boundary`` (default: its last event) into a detached child.

    The child's header names its parent (``parentSession``), copies ``cwd`` and is seeded
    (``isSeeded: true``, ``inherited_event_count = boundary + 1``).

    Raises:
        SessionForkError: for an invalid boundary.
    """
    events = parent.events
    if boundary is None and not events:
        seed: list[Mapping[str, Any]] = []
        inherited = 0
    else:
        last = len(events) - 1
        cut = check_fork_boundary(parent.id, len(events), last if boundary is None else boundary)
        seed = build_fork_seed(events, cut)
        inherited = cut + 1
    child_id = child_id or f"{parent.id}-fork-{uuid.uuid4().hex[:12]}"
    header: dict[str, Any] = {"version": 4, "id": child_id, "createdAt": parent.clock()}
    if "cwd" in parent.header:
        header["cwd"] = parent.header["cwd"]
    header["parentSession"] = parent.id
    header["isSeeded"] = True
    return Session.from_events(
        child_id,
        seed,
        header,
        inherited_event_count=inherited,
        projections=parent.projections,
        clock=parent.clock,
    )
