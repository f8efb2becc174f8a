"""Reading a stored log back: the torn-tail rule and the gates every backend shares.

Implements spec/persistence.md §2.6 (crash handling), §2.8 (refusal texts) and spec/core.md
§8.1 (unknown event types). Pure functions over scanned records; the backends do the I/O.

The torn-tail rule: an append-only writer can only leave damage at the end of the log. So the
first bad record (unparsable, not an event, or out of sequence) starts the *torn tail* and is
dropped with everything after it — unless a well-formed ``turn/end`` follows it, which proves
that committed data was damaged: then the log is corrupt and refused, never silently cut.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

from agentlog.errors import CorruptLog, FormatVersionError
from agentlog.events import is_declared
from agentlog.formats import FORMAT_VERSION
from agentlog.stores.base import TornTail
from agentlog.values import js_text

__all__ = [
    "FORMAT_VERSION",
    "UNREPRESENTABLE",
    "Record",
    "check_format_version",
    "check_known_types",
    "committed_prefix",
    "event_problem",
    "inherited_event_count",
]

_logger = logging.getLogger("agentlog.stores")

UNREPRESENTABLE: Final = "a value outside the lossless JSON domain"
"""The problem of a well-formed record agentlog cannot hold: committed data, never torn."""


class Record(NamedTuple):
    """One scanned record of a stored log: a parsed event, or why it could not be one."""

    event: Mapping[str, Any] | None
    """The parsed wire event, or ``None`` when the record is unreadable."""
    problem: str | None
    """Why the record is unreadable (``None`` when it parsed)."""
    position: int
    """Where the record starts: a byte offset (files) or a seq (SQL)."""
    line: int
    """Its 1-based line (files) or its seq (SQL), for messages."""


def committed_prefix(
    records: Sequence[Record],
    *,
    location: str | None,
    session_id: str,
    unit: str = "line",
    first_seq: int = 0,
) -> tuple[list[Mapping[str, Any]], TornTail | None]:
    """Split scanned records into the committed events and the torn tail (§2.6).

    ``records`` may be the suffix of a log whose first ``first_seq`` events were already read.

    Raises:
        CorruptLog: when a bad record is followed by a well-formed ``turn/end``.
    """
    events: list[Mapping[str, Any]] = []
    for index, record in enumerate(records):
        problem = record.problem or event_problem(record.event, first_seq + index)
        if problem is None:
            assert record.event is not None
            events.append(record.event)
            continue
        if problem.startswith(UNREPRESENTABLE):
            # Well-formed JSON is a whole record, so committed: refuse rather than drop it.
            where = f'"{location}" {unit} {record.line}' if location else f"{unit} {record.line}"
            raise CorruptLog(
                f"corrupt session log {where}: {problem}",
                session_id=session_id,
                path=location,
                line=record.line,
            )
        for later in records[index + 1 :]:
            if later.event is not None and later.event.get("type") == "turn/end":
                where = (
                    f'"{location}" {unit} {record.line}' if location else f"{unit} {record.line}"
                )
                raise CorruptLog(
                    f"corrupt session log {where}: {problem}, but a later turn/end at "
                    f"{unit} {later.line} shows it was committed",
                    session_id=session_id,
                    path=location,
                    line=record.line,
                )
        dropped = len(records) - index
        _logger.warning(
            'session "%s": dropping a torn tail of %d record(s) from %s %d%s (%s)',
            session_id,
            dropped,
            unit,
            record.line,
            f' of "{location}"' if location else "",
            problem,
        )
        return events, TornTail(position=record.position, reason=f"{unit} {record.line}: {problem}")
    return events, None


def event_problem(event: Mapping[str, Any] | None, index: int) -> str | None:
    """Why a parsed record cannot be event ``index`` of a log (its seq is out of line), or None.

    Only the seq decides (spec/persistence.md §3.5): a record in sequence is committed data,
    so a bad envelope or payload in it is refused when the session is built, never dropped as a
    torn tail — a torn write leaves an unparsable line, not a well-formed wrong one.
    """
    seq = event.get("seq") if isinstance(event, Mapping) else None
    if type(seq) not in (int, float) or seq != index:
        return f"seq gap (expected {index}, got {js_text(seq)})"
    return None


def check_format_version(version: object, session_id: str, location: str | None) -> int:
    """Refuse a header version this build cannot read (spec/persistence.md §2.8, §5.2).

    Every older version down to 0 is readable: the migration chain (``agentlog.formats``)
    starts there.

    Args:
        version: The stored ``version``.
        session_id: For the message.
        location: The raw log, appended to the message when known.

    Raises:
        FormatVersionError: direction-aware text naming the raw log.
    """
    suffix = f' (raw log: "{location}")' if location else ""
    if type(version) is not int:
        raise FormatVersionError(
            f'session "{session_id}" has an invalid log format version {version!r}{suffix}',
            session_id=session_id,
            path=location,
            version=version,
        )
    if version > FORMAT_VERSION:
        raise FormatVersionError(
            f'session "{session_id}" uses log format v{version}, but this build reads up to '
            f"v{FORMAT_VERSION}: the log was written by a newer harness — upgrade agentlog to "
            f"open it{suffix}",
            session_id=session_id,
            path=location,
            version=version,
        )
    if version < 0:
        raise FormatVersionError(
            f'session "{session_id}" uses log format v{version}, older than the supported '
            f"v{FORMAT_VERSION}, and this build ships no upgrade path for it{suffix}",
            session_id=session_id,
            path=location,
            version=version,
        )
    return version


def check_known_types(
    events: Sequence[Mapping[str, Any]], session_id: str, location: str | None
) -> None:
    """Refuse a log holding an undeclared type not marked ``ignorable`` (spec/core.md §8.1).

    Raises:
        FormatVersionError: with the spec's text.
    """
    for event in events:
        event_type = event["type"]
        if not is_declared(event_type) and event.get("ignorable") is not True:
            suffix = f' (raw log: "{location}")' if location else ""
            raise FormatVersionError(
                f'session "{session_id}" contains event type "{event_type}" (seq {event["seq"]}) '
                "unknown to this harness and not marked ignorable; refusing to interpret the log "
                f"— it was likely written by a newer harness{suffix}",
                session_id=session_id,
                path=location,
            )


def inherited_event_count(header: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> int:
    """The fork cut of a stored seeded session: the seq of its last ``{inherited: true}`` marker.

    An unseeded session inherits nothing (spec/persistence.md §5.4, v1→v2: the cut is derived
    from the last tagged ``session/end-seed``).
    """
    if header.get("isSeeded") is not True:
        return 0
    for event in reversed(events):
        data = event.get("data")
        if (
            event.get("type") == "session/end-seed"
            and isinstance(data, dict)
            and data.get("inherited") is True
        ):
            return int(event["seq"])
    return 0
