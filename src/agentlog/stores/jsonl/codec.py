"""The lines of a format-4 JSONL transcript: the header record and one event per line.

Implements spec/persistence.md §3.3 as the format-4 writer uses it (§3.11): line 1 is the
header record ``{"type": "session", "version": 4, ...}`` in dsh's key order; every later line is
one event exactly as its wire form, except that ``sourceEventSeqs`` stores runs of three or more
consecutive seqs as ``[start, end]`` pairs (spec/core.md §12, ``encodeSeqRanges``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from sys import intern
from typing import Any

import orjson

from agentlog.errors import NotLosslessJson
from agentlog.events import event_or_record, settle_owned_wire
from agentlog.session.header import stored_header
from agentlog.stores.jsonl.torn import UNREPRESENTABLE
from agentlog.values import JsonValue, dumps, is_seq, loads, share_strings

_orjson_loads = orjson.loads
_orjson_dumps = orjson.dumps
_DecodeError = orjson.JSONDecodeError
_EncodeError = orjson.JSONEncodeError
_NEWLINE = orjson.OPT_APPEND_NEWLINE

__all__ = [
    "decode_current_line",
    "decode_event_line",
    "decode_seq_ranges",
    "encode_event_line",
    "encode_event_lines",
    "encode_header_line",
    "encode_seq_ranges",
    "header_problem",
]


def encode_header_line(header: Mapping[str, JsonValue]) -> bytes:
    """The first line of a transcript: ``type: "session"``, then the header as stored.

    ``stored_header``: dsh's key order, ``delegationDepth`` 0 when absent.
    """
    record: dict[str, JsonValue] = {"type": "session"}
    for key, value in stored_header(header).items():
        record.setdefault(key, value)  # a header's own "type" never replaces the record's
    return dumps(record) + b"\n"


def header_problem(record: object) -> str | None:
    """Why a parsed first line is not a session header record, or ``None``."""
    if not isinstance(record, dict) or record.get("type") != "session":
        return "first line is not a session header"
    if type(record.get("version")) not in (int, float):
        return "session header has no numeric version"
    if type(record.get("id")) is not str:
        return "session header has no string id"
    depth = record.get("delegationDepth")
    if not is_seq(depth):
        return "session header delegationDepth must be a non-negative safe integer"
    if "sandboxMode" in record or "approvalPolicy" in record:
        return "session header uses retired policy baseline fields"
    return None


def encode_seq_ranges(seqs: Sequence[int]) -> list[int | list[int]]:
    """Runs of >= 3 consecutive ascending seqs become ``[start, end]``; others stay as they are."""
    encoded: list[int | list[int]] = []
    i, n = 0, len(seqs)
    while i < n:
        j = i
        while j + 1 < n and seqs[j + 1] == seqs[j] + 1:
            j += 1
        if j - i >= 2:
            encoded.append([seqs[i], seqs[j]])
        else:
            encoded.extend(seqs[i : j + 1])
        i = j + 1
    return encoded


def decode_seq_ranges(items: Sequence[Any]) -> list[Any] | None:
    """Expand ``[start, end]`` pairs; ``None`` when a pair is malformed (not a run of >= 3)."""
    decoded: list[Any] = []
    for item in items:
        if isinstance(item, list):
            if (
                len(item) != 2
                or not is_seq(item[0])
                or not is_seq(item[1])
                or item[1] - item[0] < 2
            ):
                return None
            decoded.extend(range(int(item[0]), int(item[1]) + 1))
        else:
            decoded.append(item)
    return decoded


def encode_event_line(event: Mapping[str, Any]) -> bytes:
    """One transcript line for ``event`` (its wire form, citations range-encoded)."""
    sources = event.get("sourceEventSeqs")
    if isinstance(sources, list) and len(sources) >= 3:
        encoded = encode_seq_ranges(sources)
        if len(encoded) != len(sources):
            event = {**event, "sourceEventSeqs": encoded}
    try:
        return _orjson_dumps(event, option=_NEWLINE)  # the newline without copying the line
    except _EncodeError:
        return dumps(event) + b"\n"  # lone surrogates: the exact fallback


def encode_event_lines(events: Sequence[Mapping[str, Any]]) -> bytes:
    """The transcript lines of ``events``, joined: ``encode_event_line`` of each.

    An event without citations (most of them) is encoded here in line, one call fewer per
    event of a batch; the others, and an event orjson refuses, take ``encode_event_line``.
    """
    dumps_line, lines = _orjson_dumps, []
    for event in events:
        if "sourceEventSeqs" not in event:
            try:
                lines.append(dumps_line(event, option=_NEWLINE))
                continue
            except _EncodeError:
                pass
        lines.append(encode_event_line(event))
    return b"".join(lines)


def decode_event_line(line: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """Parse one transcript line into a wire event, or say why it is not one."""
    try:
        record = _orjson_loads(line)
    except _DecodeError:
        try:
            record = loads(line)  # lone surrogates, deep nesting: the exact fallbacks
        except ValueError as exc:
            if isinstance(exc, NotLosslessJson) and exc.well_formed:
                return None, f"{UNREPRESENTABLE} ({exc})"
            return None, f"unparsable line ({exc})"
    return _decoded(record)


def decode_current_line(line: bytes) -> tuple[Mapping[str, Any] | None, str | None]:
    """``decode_event_line`` for a transcript of the current format, settling good records.

    A record is checked and frozen into its ``Event`` right after it is parsed, while it is in
    the processor's caches (``agentlog.events.settle_owned_wire``: one C call for the common
    record), instead of in a second walk over the loaded log; a record it cannot settle comes
    back as ``decode_event_line`` gives it, for the rebuild to diagnose with its location.
    """
    try:
        record = _orjson_loads(line)
    except _DecodeError:
        return decode_event_line(line)
    if type(record) is dict:
        settled = settle_owned_wire(record)
        if settled is not None:
            return settled, None
    event, problem = _decoded(record)
    return (None, problem) if event is None else (event_or_record(event), None)


def _decoded(record: Any) -> tuple[dict[str, Any] | None, str | None]:
    """A parsed line as a wire event (type interned, strings shared, citations expanded)."""
    if type(record) is not dict:
        return None, "line is not a JSON object"
    event_type = record.get("type")
    if type(event_type) is str:
        # One shared string per event type and, with the accelerator, per recurring short
        # value: freed at once, the parser's next line reuses the memory, so a loaded log is
        # smaller than its raw records.
        record["type"] = intern(event_type)
    share_strings(record)
    sources = record.get("sourceEventSeqs")
    if sources is not None and type(sources) is list and list in map(type, sources):
        decoded = decode_seq_ranges(sources)
        if decoded is None:
            return None, "malformed sourceEventSeqs range"
        record["sourceEventSeqs"] = decoded
    return record, None
