"""Reading a stored log back: the torn-tail rule and the gates every backend shares.

Implements spec/persistence.md §2.6 (crash handling), §2.8 (refusal texts) and spec/core.md
§8.1 (unknown event types). Pure functions over scanned records; the backends do the I/O.

The torn-tail rule (DESIGN.md, Reliability): an append-only writer killed mid-write can leave
only an *incomplete final record* — a last line without its newline, or a last line that does not
parse with nothing well-formed after it. That torn tail was never acknowledged and is dropped.
Anything else that is wrong — a record that does not parse, a well-formed record out of sequence,
or a value outside the lossless domain — followed by any well-formed record, or itself
well-formed, is *corruption*: the log is refused with ``CorruptLog`` (file, line, seq, and how
many well-formed records follow) and nothing is cut; ``Store.repair`` is the explicit way to cut.
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
    "INCOMPLETE",
    "UNPARSABLE",
    "UNREPRESENTABLE",
    "Record",
    "check_format_version",
    "check_known_types",
    "committed_prefix",
    "event_problem",
    "inherited_event_count",
    "well_formed",
]

_logger = logging.getLogger("agentlog.stores")

UNREPRESENTABLE: Final = "a value outside the lossless JSON domain"
"""The problem of a well-formed record agentlog cannot hold: committed data, never torn."""
UNPARSABLE: Final = "unparsable line"
"""The problem of a line that is not JSON text (how every problem of such a line starts)."""
INCOMPLETE: Final = "incomplete final line (torn write)"
"""The problem of a final fragment without its newline."""


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
    """Split scanned records into the committed events and the torn tail (§2.6, DESIGN.md).

    ``records`` may be the suffix of a log whose first ``first_seq`` events were already read.
    Only a record that is not well-formed, with no well-formed record after it, starts a torn
    tail; any other bad record is corruption.

    Raises:
        CorruptLog: naming the record's line and seq and how many well-formed records follow.
    """
    events: list[Mapping[str, Any]] = []
    for index, record in enumerate(records):
        problem = record.problem or event_problem(record.event, first_seq + index)
        if problem is None:
            assert record.event is not None
            events.append(record.event)
            continue
        following = sum(1 for later in records[index + 1 :] if well_formed(later))
        if following or well_formed(record):
            raise corruption(
                problem,
                session_id=session_id,
                location=location,
                line=record.line,
                seq=first_seq + index,
                following=following,
                unit=unit,
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


def well_formed(record: Record) -> bool:
    """Whether a scanned record is a whole JSON record (so a writer finished writing it)."""
    return record.event is not None or not (record.problem or "").startswith(
        (UNPARSABLE, INCOMPLETE)
    )


def corruption(
    problem: str,
    *,
    session_id: str,
    location: str | None,
    line: int | None,
    seq: int,
    following: int,
    unit: str = "line",
    what: str = "corrupt session log",
    offset: int | None = None,
) -> CorruptLog:
    """The error for damaged committed data, located, with what a cut there would remove.

    The text names the file and line, the seq a repair would cut at, and how many well-formed
    (so once acknowledged) records follow the damage.
    """
    where = f'"{location}"' if location else ""
    if line is not None:
        where = f"{where} {unit} {line}".strip()
    return CorruptLog(
        f"{what} {where}: {problem} (seq {seq}; {following} well-formed record(s) follow)",
        session_id=session_id,
        path=location,
        line=line,
        seq=seq,
        following=following,
        offset=offset,
    )


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
        event_type = event.get("type")
        if type(event_type) is not str:
            continue  # not an envelope at all: restore refuses it, naming where it is
        if not is_declared(event_type) and event.get("ignorable") is not True:
            seq = event.get("seq")
            suffix = f' (raw log: "{location}")' if location else ""
            raise FormatVersionError(
                f'session "{session_id}" contains event type "{event_type}" (seq {seq}) '
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
