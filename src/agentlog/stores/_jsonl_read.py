"""Reading a JSONL transcript back: header, events, and what a crash left at the end.

Implements spec/persistence.md §3.5 for both encodings. Plain transcripts are scanned line by
line and split into committed events and a torn tail by the shared rule of
``agentlog.stores.recovery``. Compressed transcripts are stricter: every line inside a complete,
checksummed frame must be good, and only a frame cut off by EOF is torn; its complete lines are
recovered.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from agentlog.errors import CorruptLog
from agentlog.stores._jsonl_codec import decode_event_line, header_problem
from agentlog.stores._zstd_frames import decode_frames, recover_torn_frame, scan_frames
from agentlog.stores.base import TornTail
from agentlog.stores.recovery import (
    Record,
    check_format_version,
    committed_prefix,
    event_problem,
)
from agentlog.values import loads

__all__ = ["read_transcript"]

_logger = logging.getLogger("agentlog.stores")


def read_transcript(
    data: bytes, session_id: str, location: str, *, compressed: bool
) -> tuple[dict[str, Any], list[Mapping[str, Any]], TornTail | None]:
    """Parse a whole transcript into its header record, committed events and torn tail.

    Every event returned had its envelope and seq checked.

    Raises:
        CorruptLog: when committed data is damaged (naming the file and line).
        FormatVersionError: when the header declares a version too new to read.
    """
    if compressed:
        return _read_compressed(data, session_id, location)
    header_line, body_start = _split_header(data, location)
    header = _read_header(header_line, session_id, location)
    lines = data.split(b"\n")  # no copy of the body first: peak memory stays the raw parse's
    del lines[0]  # the header line
    fragment = lines.pop()  # what follows the last newline: empty, or a torn write
    events, bad, _ = _decode_events(lines, 0)
    if bad is None and not fragment:
        return header, events, None
    # Something is wrong at the end (or in the middle): let the torn-tail rule decide, with
    # every line as a located record. Rare, so the slow, thorough path is fine here.
    records = list(_scan_lines(data, body_start, first_line=2))
    events, torn = committed_prefix(records, location=location, session_id=session_id)
    return header, events, torn


def _decode_events(
    lines: list[bytes], first_seq: int
) -> tuple[list[Mapping[str, Any]], int | None, str | None]:
    """Decode lines while each is the next good event: (events, index of the first bad, why)."""
    events: list[Mapping[str, Any]] = []
    for index, line in enumerate(lines):
        event, problem = decode_event_line(line)
        if problem is None:
            problem = event_problem(event, first_seq + index)
        if problem is not None:
            return events, index, problem
        assert event is not None
        events.append(event)
    return events, None, None


def _read_compressed(
    data: bytes, session_id: str, location: str
) -> tuple[dict[str, Any], list[Mapping[str, Any]], TornTail | None]:
    """Every line inside a complete, checksummed frame must be good; a torn frame is salvaged."""
    header_line, body, torn_start, recovered_text = _scan_compressed(data, location)
    header = _read_header(header_line, session_id, location)
    lines = body.split(b"\n")[:-1] if body else []
    events, bad, problem = _decode_events(lines, 0)
    if bad is not None:
        raise CorruptLog(
            f'corrupt Zstandard session log "{location}" line {bad + 2}: {problem}',
            path=location,
            line=bad + 2,
        )
    if torn_start is None:
        return header, events, None
    recovered_lines = recovered_text.split(b"\n")[:-1]  # complete lines only
    recovered, _, _ = _decode_events(recovered_lines, len(events))
    torn = TornTail(
        position=torn_start,
        reason=f"torn Zstandard frame at byte {torn_start}",
        recovered=tuple(recovered),
    )
    return header, events, torn


def _split_header(data: bytes, location: str) -> tuple[bytes, int]:
    end = data.find(b"\n")
    if end < 0:
        raise CorruptLog(f'empty or header-less session log "{location}"', path=location, line=1)
    return data[: end + 1], end + 1


def _read_header(line: bytes, session_id: str, location: str) -> dict[str, Any]:
    """Parse and check the header record; the version is checked before the shape."""
    try:
        record = loads(line)
    except ValueError:
        record = None
    if isinstance(record, dict) and type(record.get("version")) is int:
        check_format_version(record["version"], session_id, location, lambda _version: False)
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


def _scan_lines(data: bytes, start: int, *, first_line: int) -> Iterator[Record]:
    """One record per line of ``data[start:]``; a final fragment without newline is torn."""
    position, line_number = start, first_line
    end = len(data)
    while position < end:
        newline = data.find(b"\n", position)
        if newline < 0:
            yield Record(
                event=None,
                problem="incomplete final line (torn write)",
                position=position,
                line=line_number,
            )
            return
        event, problem = decode_event_line(data[position:newline])
        yield Record(event=event, problem=problem, position=position, line=line_number)
        position, line_number = newline + 1, line_number + 1


def _scan_compressed(data: bytes, location: str) -> tuple[bytes, bytes, int | None, bytes]:
    """Header line, the text of the complete frames, the torn frame's start and its text."""
    scan = scan_frames(data, path=location)
    if not scan.frames:
        raise CorruptLog(
            f'empty or header-less Zstandard session log "{location}"', path=location, line=1
        )
    frames = list(decode_frames(data, scan, path=location))
    header_line = frames[0]
    if header_line.count(b"\n") != 1 or not header_line.endswith(b"\n"):
        raise CorruptLog(
            f'corrupt Zstandard session log "{location}": first frame is not exactly one header '
            "line",
            path=location,
            offset=0,
        )
    body = b"".join(frames[1:])
    if body and not body.endswith(b"\n"):
        raise CorruptLog(
            f'corrupt Zstandard session log "{location}": complete frame contains a torn JSONL '
            "record",
            path=location,
        )
    recovered = b""
    if scan.torn_start is not None:
        recovered = recover_torn_frame(data[scan.torn_start :])
        _logger.warning(
            'session log "%s": dropping a torn Zstandard frame at byte %d',
            location,
            scan.torn_start,
        )
    return header_line, body, scan.torn_start, recovered
