"""The row codec of SQL stores: an event as one row, and a row back as an event.

An event row is ``(session_id, seq, type, time, data, source_event_seqs, surface_op,
ignorable)`` (the surface RFC's nullable ``surface_op`` / ``source_event_seqs`` columns, spec
persistence.md §4). ``data`` is JSON text, or whatever the backend's ``pack`` made of the JSON
bytes (compressed bytes); a row that cannot be an event is a ``BadRow``, reported as
``CorruptLog`` with where it is and how many rows follow (``corrupt``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from sys import intern
from typing import Any, Final

import orjson
import zstandard

from agentlog.errors import CorruptLog
from agentlog.events import event_or_record
from agentlog.formats import FORMAT_VERSION
from agentlog.stores.base import StoredLog
from agentlog.values import dumps, loads, share_strings

_orjson_dumps = orjson.dumps
_EncodeError = orjson.JSONEncodeError

__all__ = [
    "EVENT_COLUMNS",
    "BadRow",
    "check_type_stats",
    "corrupt",
    "decode",
    "decompress_frame",
    "event_from_row",
    "event_rows",
    "header_text",
    "stored_log",
]

EVENT_COLUMNS: Final = "seq, type, time, data, source_event_seqs, surface_op, ignorable"
"""The columns ``event_from_row`` reads, in its order."""
_APPEND: Final = '"append"'
"""The ``surface_op`` column of an append."""


class BadRow(Exception):
    """A stored row that cannot be an event (or a header): where, and why."""

    def __init__(self, seq: int, what: str) -> None:
        super().__init__(what)
        self.seq = seq
        self.what = what


def header_text(header: Mapping[str, Any]) -> str:
    """A header as the JSON text of its column (lone surrogates kept, as JSON allows)."""
    return dumps(header).decode("utf-8", "surrogatepass")


def event_rows(
    session_id: str,
    events: Iterable[Mapping[str, Any]],
    pack: Callable[[bytes], object],
    absent: object = None,
) -> list[tuple[Any, ...]]:
    """The rows of wire events; ``pack`` turns each payload's JSON bytes into its column.

    ``absent`` stands for the optional columns an event does not have (``None``: SQL ``NULL``;
    a statement may bind a sentinel instead and turn it into ``NULL`` itself). One loop for the
    batch, not a call per event: this runs for every event an SQL store writes.
    """
    rows: list[tuple[Any, ...]] = []
    add = rows.append
    for event in events:
        get = event.get
        data = event["data"]
        try:
            encoded = _orjson_dumps(data)
        except _EncodeError:
            encoded = dumps(data)  # lone surrogates, deep nesting: the exact fallback
        sources = get("sourceEventSeqs")
        surface_op = get("surfaceOp")
        if surface_op is None:
            op_column = absent
        elif surface_op == "append":
            op_column = _APPEND  # most nodes: their marker needs no encoder
        else:
            op_column = dumps(surface_op).decode()
        add(
            (
                session_id,
                event["seq"],
                event["type"],
                event["time"],
                pack(encoded),
                absent if sources is None else dumps(sources).decode(),
                op_column,
                1 if get("ignorable") is True else absent,
            )
        )
    return rows


def event_from_row(
    index: int,
    columns: tuple[Any, ...],
    unpack: Callable[[int, bytes], bytes],
    *,
    shared: bool = True,
) -> dict[str, Any]:
    """The wire event of the row at position ``index`` (``EVENT_COLUMNS``).

    ``unpack`` turns a bytes ``data`` column back into JSON bytes (raising ``BadRow``).
    ``shared``: recurring short strings become one object (a log kept in memory; a raw read
    hands its events to the caller as they are).

    Raises:
        BadRow: for a seq out of line, a wrong column type, or a value that is not JSON.
    """
    seq, event_type, time, data, sources, surface_op, ignorable = columns
    if seq != index:
        raise BadRow(index, f"seq gap (expected {index}, got {seq})")
    if type(event_type) is not str or type(time) is not int:
        raise BadRow(index, "type or time has the wrong column type")
    if isinstance(data, bytes):
        data = unpack(index, data)
    event: dict[str, Any] = {
        "type": intern(event_type),  # one shared string per type, as the JSONL reader
        "seq": seq,
        "time": time,
        "data": decode(index, "data", data),
    }
    if sources is not None:
        event["sourceEventSeqs"] = decode(index, "source_event_seqs", sources)
    if surface_op is not None:
        # Most nodes are appends: their marker needs no JSON parser.
        op = "append" if surface_op == _APPEND else decode(index, "surface_op", surface_op)
        event["surfaceOp"] = op
    if ignorable is not None:
        event["ignorable"] = True
    if not shared:
        return event
    share_strings(event)  # before the next row is decoded, which reuses the freed memory
    return event


def decode(seq: int, column: str, text: object) -> Any:
    """A JSON column's value (``seq`` -1: the session row).

    Raises:
        BadRow: when the column is not JSON text.
    """
    if not isinstance(text, str | bytes):
        what = {int: "an integer", float: "a real number"}.get(type(text), "NULL")
        raise BadRow(seq, f"{column} is {what}, not JSON text")
    try:
        return loads(text)
    except ValueError as exc:
        raise BadRow(seq, f"{column} is not JSON ({exc})") from exc


def corrupt(session_id: str, location: str, bad: BadRow, following: int) -> CorruptLog:
    """The ``CorruptLog`` of a bad row in ``location``, with how many rows follow it."""
    if bad.seq < 0:
        where, more = "its session row", ""
    else:
        where, more = f"event row seq {bad.seq}", f" ({following} later row(s) follow)"
    return CorruptLog(
        f'corrupt session "{session_id}" in "{location}" at {where}: {bad.what}{more}',
        session_id=session_id,
        path=location,
        line=None if bad.seq < 0 else bad.seq,
        seq=None if bad.seq < 0 else bad.seq,
        following=None if bad.seq < 0 else following,
    )


def check_type_stats(stats: Sequence[Sequence[Any]], stored_tail: int) -> None:
    """Check a session's ``type, count, min(seq), max(seq)`` rows against its stored tail.

    Seqs are unique per session, so the count, the lowest and the highest pin them to
    ``0 .. count - 1``, which must end at the stored tail.

    Raises:
        BadRow: for a type that is not text, or seqs that do not make the stored log.
    """
    count = sum(int(stat[1]) for stat in stats)
    lowest = min((stat[2] for stat in stats), default=0)
    highest = max((stat[3] for stat in stats), default=-1)
    if any(type(stat[0]) is not str for stat in stats):
        raise BadRow(0, "an event row's type has the wrong column type")
    if count != stored_tail or (count and (lowest, highest) != (0, count - 1)):
        what = f"{count} event rows (seqs {lowest}..{highest}), a stored tail of {stored_tail}"
        raise BadRow(min(count, stored_tail), what)


def decompress_frame(index: int, data: bytes, decompressor: zstandard.ZstdDecompressor) -> bytes:
    """The JSON bytes of the zstd frame in the ``data`` column of the row at ``index``.

    Raises:
        BadRow: when the frame is damaged or incomplete.
    """
    # A decompression object: one-shot decompression would allocate whatever size a damaged
    # frame header claims.
    stream = decompressor.decompressobj()
    try:
        plain: bytes = stream.decompress(data)
    except zstandard.ZstdError as exc:
        raise BadRow(index, f"compressed data: {exc}") from exc
    if not stream.eof:
        raise BadRow(index, "compressed data: the frame is incomplete")
    return plain


def stored_log(
    session_id: str,
    location: str,
    session_row: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    from_seq: int,
    unpack: Callable[[int, bytes], bytes],
) -> StoredLog:
    """The log of a session row (``header, next_seq``) and its event rows from ``from_seq`` on.

    Shared by every SQL store's read, sync or async (spec/persistence.md §4): the rows are
    decoded one by one as they come, so they are never all held at once, and a current-format
    record becomes its checked ``Event`` while it is fresh.

    Raises:
        BadRow: for a damaged row (the caller counts the rows after it: ``corrupt``).
        CorruptLog: when the rows do not reach the stored tail.
    """
    header = decode(-1, "header", session_row[0])
    current = isinstance(header, dict) and header.get("version") == FORMAT_VERSION
    settle = event_or_record if current else _as_is
    events = [
        settle(event_from_row(index, tuple(columns), unpack))
        for index, columns in enumerate(rows, from_seq)
    ]
    count = from_seq + len(events)
    if count != max(session_row[1], from_seq):
        what = f"{count} event rows but a stored tail of {session_row[1]}"
        raise corrupt(session_id, location, BadRow(count, what), 0)
    return StoredLog(header=header, events=events, location=location)


def _as_is(record: dict[str, Any]) -> Mapping[str, Any]:
    return record
