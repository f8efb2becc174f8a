"""Reading a JSONL transcript back: header, events, and what a crash left at the end.

Implements spec/persistence.md §3.5 for both encodings. Plain transcripts are scanned line by
line and split into committed events and a torn tail by the shared rule of
``agentlog.stores.jsonl.torn``. Compressed transcripts are stricter: every line inside a complete,
checksummed frame must be good, and only a frame cut off by EOF is torn; its complete lines are
recovered.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, BinaryIO, Final

from agentlog.errors import CorruptLog
from agentlog.formats import FORMAT_VERSION, ROW_TYPES, MalformedChunkRow, decode_storage_record
from agentlog.stores.base import TornTail
from agentlog.stores.jsonl.codec import decode_current_line, decode_event_line, header_problem
from agentlog.stores.jsonl.frames import (
    FrameScan,
    decode_frames,
    later_frames,
    recover_torn_frame,
    scan_frames,
)
from agentlog.stores.jsonl.torn import (
    Record,
    committed_prefix,
    corruption,
    event_problem,
    well_formed,
)
from agentlog.stores.recovery import check_format_version
from agentlog.values import loads

__all__ = ["read_transcript", "well_formed_lines"]

_logger = logging.getLogger("agentlog.stores")

_FIRST_UNPACKED_VERSION: Final = 2
"""Format 2 stores one event per line; formats 0 and 1 may store packed chunk rows."""

Transcript = tuple[dict[str, Any], list[Mapping[str, Any]], TornTail | None]
"""The header record, the committed events, and the torn tail (if any)."""


def read_transcript(
    file: BinaryIO, session_id: str, location: str, *, compressed: bool
) -> Transcript:
    """Parse a whole transcript into its header record, committed events and torn tail.

    The file is read line by line (frame by frame when compressed), never whole, so the peak
    memory of a load is the events' plus one buffer. Every event returned had its envelope and
    seq checked.

    Raises:
        CorruptLog: when committed data is damaged (naming the file and line).
        FormatVersionError: when the header declares a version too new to read.
    """
    if compressed:
        return _read_compressed(file.read(), session_id, location)
    header_line = file.readline()
    if not header_line.endswith(b"\n"):
        raise CorruptLog(f'empty or header-less session log "{location}"', path=location, line=1)
    header = _read_header(header_line, session_id, location)
    if header["version"] < _FIRST_UNPACKED_VERSION:
        # Formats 0 and 1 may pack chunk runs into rows: read them the thorough way.
        legacy = list(_scan_lines(file.read(), offset=len(header_line), first_line=2, rows=True))
        return header, *committed_prefix(legacy, location=location, session_id=session_id)
    events: list[Mapping[str, Any]] = []
    # A current-format record becomes its checked Event while it is fresh (decode_current_line).
    current = header["version"] == FORMAT_VERSION
    decode = decode_current_line if current else decode_event_line
    append, problem_of = events.append, event_problem
    for line in file:
        event, problem = decode(line)
        if problem is None:
            seq = event.get("seq")  # type: ignore[union-attr]  # a good decode has an event
            if type(seq) is not int or seq != len(events):  # the common case inline
                problem = problem_of(event, len(events))
        if problem is not None or not line.endswith(b"\n"):
            break
        append(event)  # type: ignore[arg-type]  # a good decode has an event
    else:
        return header, events, None
    # Something is wrong at the end (or in the middle): let the torn-tail rule decide, with
    # every remaining line as a located record. Rare, so the slow, thorough path is fine here.
    position = file.tell() - len(line)
    rest = line + file.read()
    records = list(_scan_lines(rest, offset=position, first_line=len(events) + 2, rows=False))
    tail, torn = committed_prefix(
        records, location=location, session_id=session_id, first_seq=len(events)
    )
    events += tail
    return header, events, torn


def _decode_lines(
    lines: Iterable[bytes], events: list[Mapping[str, Any]], *, rows: bool
) -> tuple[int, str] | None:
    """Append each line's events to ``events`` while they are the next good ones.

    With ``rows``, a packed chunk row (formats 0 and 1) stands for its member events.

    Returns:
        ``None`` when every line was good, else the index of the first bad line and why.
    """
    for index, line in enumerate(lines):
        for event, problem in _line_events(line, rows=rows):
            if problem is None:
                problem = event_problem(event, len(events))
            if problem is not None:
                return index, problem
            assert event is not None
            events.append(event)
    return None


def _line_events(line: bytes, *, rows: bool) -> list[tuple[dict[str, Any] | None, str | None]]:
    """The events of one line (a row's members, when ``rows``), or why it holds none."""
    event, problem = decode_event_line(line)
    if not rows or event is None or event.get("type") not in ROW_TYPES:
        return [(event, problem)]
    try:
        return [(member, None) for member in decode_storage_record(event)]
    except MalformedChunkRow as exc:
        return [(None, str(exc))]


def _read_compressed(data: bytes, session_id: str, location: str) -> Transcript:
    """Every line inside a complete, checksummed frame must be good; a torn frame is salvaged.

    Frames are decoded one at a time, so at most one frame's text is held besides the events.
    Damage found anywhere (a frame that fails its structure or checksum, a bad line, a final
    frame that is incomplete but has valid frames after it) is corruption, located by line.
    """
    try:
        scan = scan_frames(data, path=location)
        damage: CorruptLog | None = None
    except CorruptLog as exc:
        # Read the frames before the damage as usual: an earlier one may be the first damage.
        damage = exc
        prefix = scan_frames(data[: exc.offset or 0])
        damaged_at = prefix.torn_start if prefix.torn_start is not None else exc.offset or 0
        scan = FrameScan(frames=prefix.frames, torn_start=damaged_at)
    if not scan.frames:
        if damage is not None:
            raise damage
        raise CorruptLog(
            f'empty or header-less Zstandard session log "{location}"', path=location, line=1
        )
    frames = decode_frames(data, scan, path=location)
    header_line = next(frames)
    if header_line.count(b"\n") != 1 or not header_line.endswith(b"\n"):
        raise CorruptLog(
            f'corrupt Zstandard session log "{location}": first frame is not exactly one header '
            "line",
            path=location,
            offset=0,
        )
    header = _read_header(header_line, session_id, location)
    rows = header["version"] < _FIRST_UNPACKED_VERSION
    events: list[Mapping[str, Any]] = []
    pending = b""  # a line a writer split across frames
    lines_read = 1  # the header
    for (frame_start, frame_end), text in zip(scan.frames[1:], _checked(frames), strict=False):
        if isinstance(text, CorruptLog):
            raise _frame_damage(text, data, frame_start, session_id, lines_read, len(events))
        lines = (pending + text).split(b"\n")
        pending = lines.pop()
        bad = _decode_lines(lines, events, rows=rows)
        if bad is not None:
            after = lines[bad[0] + 1 :]
            raise corruption(
                bad[1],
                session_id=session_id,
                location=location,
                line=lines_read + bad[0] + 1,
                seq=len(events),
                following=well_formed_lines(after) + _lines_after(data, frame_end),
                what="corrupt Zstandard session log",
            )
        lines_read += len(lines)
    if pending:
        raise corruption(
            "complete frame contains a torn JSONL record",
            session_id=session_id,
            location=location,
            line=lines_read + 1,
            seq=len(events),
            following=_lines_after(data, scan.frames[-1][1]),
            what="corrupt Zstandard session log",
        )
    if damage is not None:
        assert scan.torn_start is not None
        raise _frame_damage(damage, data, scan.torn_start, session_id, lines_read, len(events))
    if scan.torn_start is None:
        return header, events, None
    following = _lines_after(data, scan.torn_start + 1)
    if following:
        raise corruption(
            f"frame at byte {scan.torn_start} is incomplete",
            session_id=session_id,
            location=location,
            line=lines_read + 1,
            seq=len(events),
            following=following,
            what="corrupt Zstandard session log",
        )
    _logger.warning(
        'session log "%s": dropping a torn Zstandard frame at byte %d', location, scan.torn_start
    )
    recovered: list[Mapping[str, Any]] = list(events)
    recovered_text = recover_torn_frame(data[scan.torn_start :])
    _decode_lines(recovered_text.split(b"\n")[:-1], recovered, rows=rows)
    torn = TornTail(
        position=scan.torn_start,
        reason=f"torn Zstandard frame at byte {scan.torn_start}",
        recovered=tuple(recovered[len(events) :]),
    )
    return header, events, torn


def _checked(frames: Iterator[bytes]) -> Iterator[bytes | CorruptLog]:
    """The frames' plaintexts; a frame that fails validation ends them with its error."""
    try:
        yield from frames
    except CorruptLog as exc:
        yield exc


def _frame_damage(
    exc: CorruptLog, data: bytes, start: int, session_id: str, lines_read: int, seq: int
) -> CorruptLog:
    """``exc`` (a damaged frame at byte ``start``) located by line and seq, with what follows."""
    prefix = f'corrupt Zstandard session log "{exc.path}": '
    text = str(exc)
    return corruption(
        text[len(prefix) :] if text.startswith(prefix) else text,
        session_id=session_id,
        location=exc.path,
        line=lines_read + 1,
        seq=seq,
        following=_lines_after(data, start + 1),
        what="corrupt Zstandard session log",
        offset=exc.offset,
    )


def _lines_after(data: bytes, start: int) -> int:
    """How many well-formed lines the valid frames after byte ``start`` hold."""
    frames = later_frames(data, start)
    return sum(well_formed_lines(text.split(b"\n")[:-1]) for _, _, text in frames)


def well_formed_lines(lines: Iterable[bytes]) -> int:
    """How many of ``lines`` are whole JSON records."""
    count = 0
    for line in lines:
        event, problem = decode_event_line(line)
        count += well_formed(Record(event=event, problem=problem, position=0, line=0))
    return count


def _read_header(line: bytes, session_id: str, location: str) -> dict[str, Any]:
    """Parse and check the header record; the version is checked before the shape."""
    try:
        record = loads(line)
    except ValueError:
        record = None
    if isinstance(record, dict) and type(record.get("version")) in (int, float):
        check_format_version(record["version"], session_id, location)
    problem = header_problem(record)
    if problem is not None:
        raise CorruptLog(
            f'corrupt session log "{location}" line 1: {problem}', path=location, line=1
        )
    assert isinstance(record, dict)
    if record["id"] != session_id:
        raise CorruptLog(
            f'corrupt session log "{location}": requested id "{session_id}" does not match '
            f'header id "{record["id"]}"',
            session_id=session_id,
            path=location,
            line=1,
        )
    return record


def _scan_lines(data: bytes, *, offset: int, first_line: int, rows: bool) -> Iterator[Record]:
    """Records for the lines of ``data``, which starts at byte ``offset`` of the file.

    A packed row (with ``rows``) gives one record per member event. A final fragment without
    a newline is a torn write.
    """
    position, line_number = 0, first_line
    end = len(data)
    while position < end:
        newline = data.find(b"\n", position)
        if newline < 0:
            yield Record(
                event=None,
                problem="incomplete final line (torn write)",
                position=offset + position,
                line=line_number,
            )
            return
        for event, problem in _line_events(data[position:newline], rows=rows):
            yield Record(event=event, problem=problem, position=offset + position, line=line_number)
        position, line_number = newline + 1, line_number + 1
