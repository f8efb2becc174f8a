"""Fork: a child session that inherits an exact prefix of its parent (spec/core.md §10.1–§10.2).

Format 4 allows a fork at any seq: the child's seed is the parent's prefix through the
boundary, a tagged ``session/end-seed {inherited: true}`` at the cut, then the ``forked``
closers of any turn the cut leaves open. Events are immutable, so the child shares the
parent's event objects instead of copying them; nothing the child does reaches the parent.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentlog.errors import SessionForkError
from agentlog.lifecycle.repair import open_turn_closers
from agentlog.session import Clock, Session, new_header, stored_header
from agentlog.surface import MessageProjection
from agentlog.values import is_seq, js_text

__all__ = ["build_fork_seed", "check_fork_boundary", "fork_child", "fork_session"]


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


def fork_child(
    source_id: str,
    events: Sequence[Mapping[str, Any]],
    source_header: Mapping[str, Any],
    *,
    boundary: object = None,
    child_id: str | None = None,
    created_at: int,
    projections: Iterable[MessageProjection] = (),
    clock: Clock | None = None,
    stored: bool = False,
) -> Session:
    """The detached fork child of a log: ``events`` (the source's) cut after ``boundary``.

    The one fork of agentlog: ``Session.fork`` / ``fork_session`` and ``Store.fork`` both build
    their child here. The child inherits events ``0..boundary`` (default: all; none of an empty
    log), with the seed of ``build_fork_seed``; its header (``new_header``) names the source
    (``parentSession``), copies its ``cwd`` and is seeded; ``stored``: in the form a store
    writes (``stored_header``: ``delegationDepth`` 0). The child id defaults to a fresh UUID.

    Raises:
        SessionForkError: ``INVALID_BOUNDARY`` for a boundary outside the log.
    """
    seed: list[Mapping[str, Any]] = []
    inherited = 0
    if boundary is not None or events:
        last = len(events) - 1
        cut = check_fork_boundary(source_id, len(events), last if boundary is None else boundary)
        seed = build_fork_seed(events, cut)
        inherited = cut + 1
    child_id = str(uuid.uuid4()) if child_id is None else child_id
    header = new_header(child_id, created_at, cwd=source_header.get("cwd"), parent=source_id)
    if stored:
        header = stored_header(header)
    return Session.from_events(
        child_id,
        seed,
        header,
        inherited_event_count=inherited,
        projections=projections,
        clock=clock,
    )


def fork_session(parent: Session, boundary: object = None, child_id: str | None = None) -> Session:
    """Fork ``parent`` after ``boundary`` (default: its last event) into a detached child.

    The child is ``fork_child``'s: its header names its parent (``parentSession``), copies
    ``cwd`` and is seeded (``isSeeded: true``, ``inherited_event_count = boundary + 1``).

    Raises:
        SessionForkError: for an invalid boundary.
    """
    return fork_child(
        parent.id,
        parent.events,
        parent.header,
        boundary=boundary,
        child_id=child_id,
        created_at=parent.clock(),
        projections=parent.projections,
        clock=parent.clock,
    )
