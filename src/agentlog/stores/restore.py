"""From a stored log back to a session: the gates, the repair closers, every event checked.

Implements the cold read pipeline of spec/persistence.md §2.3 (``prepareCore``) for every
backend: version gate → vocabulary gate (spec/core.md §8.1) → each record checked and frozen
(in place: the records are the backend's own fresh objects) → repair closers of an interrupted
turn (spec/core.md §10.3) → ``Session.from_events`` on the restore path, which adds the
``session/end-seed`` marker. Any invalid stored event is reported as ``CorruptLog``, located.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from agentlog.errors import CorruptLog, EventRejected, NotLosslessJson, SeedRejected
from agentlog.events import Event, event_from_owned_wire, is_declared
from agentlog.formats import FORMAT_VERSION, Artifact, migrate
from agentlog.lifecycle import open_turn_closers
from agentlog.session import Session
from agentlog.stores.base import StoredLog
from agentlog.stores.recovery import (
    check_format_version,
    check_known_types,
    inherited_event_count,
)
from agentlog.surface import MessageProjection
from agentlog.values import settled_types

__all__ = ["Restored", "collector_paused", "restore_session"]


class Restored(NamedTuple):
    """A stored log rebuilt as a session."""

    session: Session
    """The session: the stored (or migrated) events, then any repair closers and the marker."""
    stored_events: int
    """How many leading events of the session are the log's own (after migration, if any)."""
    migrated_from: int | None
    """The stored format version when the log was migrated in memory, else ``None``."""


def restore_session(
    session_id: str,
    stored: StoredLog,
    *,
    repair: bool,
    projections: tuple[MessageProjection, ...],
    clock: Callable[[], int],
) -> Restored:
    """Validate a stored log (migrating an older format in memory) and build its session.

    Args:
        session_id: The session read.
        stored: What the backend read.
        repair: Close an interrupted turn with ``interrupted`` closers (in the session only;
            persisting them is the caller's business).
        projections: Message projections the log may use.
        clock: For the end-seed marker's time.

    Raises:
        FormatVersionError: for an unreadable version or an undeclared, required event type.
        MigrationRefused: for an older log its upgrade cannot carry forward.
        CorruptLog: for an invalid stored event or header, naming where it is.
    """
    version = check_format_version(stored.header.get("version"), session_id, stored.location)
    records = stored.events
    if stored.torn is not None and stored.torn.recovered:
        records = [*records, *stored.torn.recovered]
    migrated_from = None
    if version < FORMAT_VERSION:
        stored, migrated_from = _migrated(stored, records), version
        records = stored.events
    with collector_paused():
        events = _checked_events(session_id, stored, records)
        closers = open_turn_closers(events, "interrupted") if repair else []
        header = {key: value for key, value in stored.header.items() if key != "type"}
        try:
            session = Session.from_events(
                session_id,
                events + closers if closers else events,  # no copy of a log without closers
                header,
                inherited_event_count=inherited_event_count(header, events),
                restore=True,
                projections=projections,
                clock=clock,
            )
        except SeedRejected as exc:
            raise _corrupt(session_id, stored, exc.index, exc) from exc
    return Restored(session, len(events), migrated_from)


def _migrated(stored: StoredLog, records: Sequence[Mapping[str, Any]]) -> StoredLog:
    """``stored`` brought to the current format by the migration chain (in memory).

    Errors found later name seqs of the migrated log: its lines are no longer the file's.
    """
    header = {key: value for key, value in stored.header.items() if key != "type"}
    artifact = migrate(Artifact(header=header, events=records), location=stored.location)
    return StoredLog(
        header=artifact.header,
        events=artifact.events,
        location=stored.location,
        migrated_from=header["version"],
    )


def _checked_events(
    session_id: str, stored: StoredLog, records: Sequence[Mapping[str, Any]]
) -> list[Event]:
    """The vocabulary gate (spec/core.md §8.1), then every record as a checked event.

    One pass over the records, which a long log makes the expensive part: records the reader
    already made ``Event``s are taken as they are (when all of them are, with their types
    declared, the list itself is returned), and each type is looked up once. The gate's
    refusal still wins over an invalid record anywhere in the log: before a record is refused,
    the whole log goes through the gate.

    Raises:
        FormatVersionError: for an undeclared event type not marked ``ignorable``.
        CorruptLog: for an invalid record, naming where it is.
    """
    types = settled_types(records, Event) if type(records) is list else None
    if types is not None and all(type(name) is str and is_declared(name) for name in types):
        return records  # type: ignore[return-value]  # all Events of declared types (checked)
    declared: set[str] = set()
    gated = False
    events: list[Event] = []
    append = events.append
    try:
        for index, record in enumerate(records):
            event_type = record.get("type")
            if type(event_type) is str and event_type in declared:
                pass
            elif type(event_type) is str and is_declared(event_type):
                declared.add(event_type)
            elif not gated and record.get("ignorable") is not True:
                check_known_types(records, session_id, stored.location)  # names the first
                gated = True  # passed: this record is no envelope at all, refused below
            append(record if type(record) is Event else _event(session_id, stored, index, record))
    except CorruptLog:
        if not gated:
            check_known_types(records, session_id, stored.location)
        raise
    return events


def _event(
    session_id: str,
    stored: StoredLog,
    index: int,
    record: Mapping[str, Any],
) -> Event:
    """One stored record as a checked event (frozen in place: the record is the backend's)."""
    try:
        return event_from_owned_wire(record)  # type: ignore[arg-type]  # the backend's own dict
    except (EventRejected, NotLosslessJson) as exc:
        raise _corrupt(session_id, stored, index, exc) from exc


def _corrupt(session_id: str, stored: StoredLog, index: int | None, cause: Exception) -> CorruptLog:
    line: int | None = None
    if index is not None:
        where = stored.where(index)
        line = (stored.first_line or 0) + index
    elif stored.first_line is not None:  # a file: the header is its first line
        where, line = f'"{stored.location}" line 1 (the header)', 1
    else:
        where = "its header"
    if stored.migrated_from is not None:
        where += f" (of its migration from format v{stored.migrated_from})"
    return CorruptLog(
        f'stored session "{session_id}" failed validation at {where}: {cause}',
        session_id=session_id,
        path=stored.location,
        line=line,
    )


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a log loads.

    Loading creates millions of small acyclic objects, and the collector would walk the growing
    heap again and again (most of a cold open's time); none of them can form a cycle, so
    nothing is left for the collector to find when it resumes. Nor when it would walk them all
    once, as its youngest generation, at the next allocation: they are moved to the oldest
    generation instead (``gc.freeze`` then ``gc.unfreeze``, two list splices), where only a
    full collection visits them — unless the application keeps objects frozen itself, which
    this must not undo.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # Never unfreeze what the application froze (a pre-fork server's gc.freeze()).
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
