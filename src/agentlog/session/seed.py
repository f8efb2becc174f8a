"""Building a session from a seed: replay, resume, fork (spec/core.md §9).

``replay_seed()`` checks and folds each seed entry in the order of §9.1; ``mark_seed_end()``
applies the seeded/inherited rules and appends the ``session/end-seed`` marker of §9.4.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from agentlog.errors import EventRejected, NotLosslessJson, SeedRejected
from agentlog.events import (
    Event,
    RuleViolation,
    check_event,
    envelope_is_valid,
    event_from_checked_wire,
    new_event,
)
from agentlog.surface import SurfaceState
from agentlog.values import FrozenDict, snapshot

__all__ = ["SeedCut", "mark_seed_end", "replay_seed"]

_INHERITED_MARKER: FrozenDict = snapshot({"inherited": True})
_PLAIN_MARKER: FrozenDict = snapshot({})


def replay_seed(
    session_id: str,
    entries: Iterable[Any],
    state: SurfaceState,
    log: list[Event],
    *,
    restore: bool = False,
) -> None:
    """Check and fold every seed entry into ``log`` and ``state`` (spec/core.md §9.1).

    For each entry, in order: lossless-JSON snapshot (E30; after the envelope on restore),
    envelope (E31), data rules and
    shape checks (subject ``seed <type> at index <i>``), ``seq == i`` (E32), then the surface
    transition, whose errors are re-raised as ``invalid seed event at index <i>: ...`` (E33).
    ``Event`` entries are already checked and frozen; only their position and surface
    transition are checked again.

    Raises:
        SeedRejected: for the first entry that fails.
    """
    for index, entry in enumerate(entries):
        if type(entry) is Event:
            event = entry
        else:
            # Restore mirrors the reference's in-place validation (envelope first), then still
            # checks the value domain, which the reference skips there (DESIGN decision 5).
            if restore and not envelope_is_valid(entry):
                raise _envelope_rejected(session_id, index)
            try:
                frozen = snapshot(entry)
            except NotLosslessJson as exc:
                raise _rejected(
                    f"seed event at index {index} is not losslessly JSON-serializable",
                    session_id,
                    index,
                    exc,
                ) from exc
            if not envelope_is_valid(frozen):
                raise _envelope_rejected(session_id, index)
            event = event_from_checked_wire(frozen)
            try:
                check_event(event["type"], event["data"])
            except RuleViolation as violation:
                raise _rejected(
                    f"seed {event['type']} at index {index} {violation}", session_id, index
                ) from None
        if event["seq"] != index:
            raise _rejected(
                f"seed event at index {index} has seq {event['seq']} (expected {index}); "
                "seed must be contiguous from 0",
                session_id,
                index,
            )
        try:
            state.advance(event)
        except EventRejected as exc:
            raise _rejected(
                f"invalid seed event at index {index}: {exc}", session_id, index
            ) from exc
        log.append(event)


class SeedCut:
    """Where a seeded log's lifecycle starts (spec/core.md §9.4)."""

    __slots__ = ("first_lifecycle_seq", "first_live_seq", "inherited_event_count")

    def __init__(self, first_live_seq: int, first_lifecycle_seq: int, inherited: int) -> None:
        self.first_live_seq = first_live_seq
        self.first_lifecycle_seq = first_lifecycle_seq
        self.inherited_event_count = inherited


def mark_seed_end(
    session_id: str,
    log: list[Event],
    state: SurfaceState,
    *,
    seeded: bool,
    inherited: int | None,
    restore: bool,
    clock: Callable[[], int],
) -> SeedCut:
    """Apply the seeded/inherited rules and append the end-seed marker (spec/core.md §9.4).

    An unseeded seed (and any restore) gets ``session/end-seed {}`` unless it already ends with
    one. A fresh fork child (seeded, not restored) owns exactly one ``{inherited: true}`` marker
    at its cut: kept when the seed has it there, appended when the seed is exactly the
    inherited prefix.

    Raises:
        SeedRejected: with the texts of E76.
    """
    first_live = len(log)
    if seeded:
        if inherited is None:
            raise _rejected("seeded session requires an inherited event count", session_id)
    elif inherited:
        raise _rejected("unseeded session inherited event count must be 0", session_id)
    inherited = inherited or 0
    if inherited > len(log):
        raise _rejected("session inherited event count exceeds its event log", session_id)
    if seeded and not restore:
        if not (inherited < len(log) and _is_inherited_marker(log[inherited])):
            if len(log) != inherited:
                raise _rejected(
                    "seeded session constructor seed must equal its inherited prefix or mark its "
                    "inherited cut",
                    session_id,
                )
            _append_marker(log, state, _INHERITED_MARKER, clock)
        if any(_is_inherited_marker(event) for event in log[inherited + 1 :]):
            raise _rejected(
                "session inherited event count must identify the final inherited marker",
                session_id,
            )
        return SeedCut(first_live, inherited, inherited)
    if not log or log[-1]["type"] != "session/end-seed":
        _append_marker(log, state, _PLAIN_MARKER, clock)
    return SeedCut(first_live, first_live, inherited)


def _is_inherited_marker(event: Event) -> bool:
    data = event["data"]
    return (
        event["type"] == "session/end-seed"
        and isinstance(data, dict)
        and len(data) == 1
        and data.get("inherited") is True
    )


def _append_marker(
    log: list[Event], state: SurfaceState, data: FrozenDict, clock: Callable[[], int]
) -> None:
    marker = new_event("session/end-seed", len(log), clock(), data)
    state.advance(marker)
    log.append(marker)


def _envelope_rejected(session_id: str, index: int) -> SeedRejected:
    return _rejected(
        f"seed event at index {index} has an invalid event envelope", session_id, index
    )


def _rejected(
    message: str,
    session_id: str,
    index: int | None = None,
    cause: NotLosslessJson | None = None,
) -> SeedRejected:
    if cause is None:
        return SeedRejected(message, session_id=session_id, index=index)
    # The catalogue text says neither where nor why: name the JSON path and the reason.
    return SeedRejected(
        f"{message}: {cause.detail}", spec_text=message, session_id=session_id, index=index
    )
