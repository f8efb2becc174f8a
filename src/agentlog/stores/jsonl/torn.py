"""Torn tails of append-only transcripts: what a crashed JSONL writer can leave, and what not.

Implements spec/persistence.md §2.6 (crash handling) for file stores. The torn-tail rule
(DESIGN.md, Reliability): an append-only writer killed mid-write can leave only an *incomplete
final record* — a last line without its newline, or a last line that does not parse with
nothing well-formed after it. That torn tail was never acknowledged and is dropped (by
``JsonlBackend.drop_torn_tail``, under the writer lease). Anything else that is wrong — a record
that does not parse, a well-formed record out of sequence, or a value outside the lossless
domain — followed by any well-formed record, or itself well-formed, is *corruption*: the log is
refused with ``CorruptLog`` (file, line, seq, and how many well-formed records follow) and
nothing is cut; ``Store.repair`` is the explicit way to cut. Pure functions over scanned
records; the reader does the I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

from agentlog.errors import CorruptLog
from agentlog.stores.base import TornTail
from agentlog.values import js_text

__all__ = [
    "INCOMPLETE",
    "UNPARSABLE",
    "UNREPRESENTABLE",
    "Record",
    "committed_prefix",
    "corruption",
    "event_problem",
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
    """Where the record starts: a byte offset."""
    line: int
    """Its 1-based line, for messages."""


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
