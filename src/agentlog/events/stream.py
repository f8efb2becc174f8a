"""Assistant stream records: the compact, lossless form of one model attempt's timed chunks.

Implements spec/core.md §2.5 (assistant stream records, embedded as ``stream`` in
``assistant/message`` and ``assistant/attempt``) and spec/plugins.md §5.3–§5.4 (the streaming
protocol and its compact records). Consecutive deltas of one kind become one run record
(``text-chunks``, ``reasoning-chunks``, ``tool-call-chunks``) holding the first member's time
and the gaps between members; every other chunk is kept whole as a ``chunk`` record.
``expand_stream`` gives back the exact timed chunk sequence, every delta boundary included.

Session does not validate stream contents (§2.5); stores and loops call ``validate_stream`` (or
``expand_stream``, which validates) on streams they read.

Example:
    >>> from agentlog.events.stream import expand_stream, record_stream
    >>> chunks = [
    ...     (100, {"type": "text-delta", "index": 0, "text": "Hel"}),
    ...     (104, {"type": "text-delta", "index": 0, "text": "lo"}),
    ...     (103, {"type": "text-delta", "index": 0, "text": "!"}),
    ...     (110, {"type": "finish", "reason": {"kind": "stop"}}),
    ... ]
    >>> records = record_stream(chunks)
    >>> records[0]
    {'type': 'text-chunks', 'time0': 100, 'index': 0, 'dt': [4, -1], 'texts': ['Hel', 'lo', '!']}
    >>> records[1]["type"], records[1]["time"]
    ('chunk', 110)
    >>> expand_stream(records) == chunks
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Literal, TypeAlias

from agentlog.errors import NotLosslessJson, StreamRecordError
from agentlog.values import MAX_SAFE_INTEGER, JsonValue, is_frozen, is_safe_integer, snapshot
from agentlog.values import json_path as _json_path

__all__ = [
    "StreamRecord",
    "StreamRecordType",
    "StreamRecorder",
    "TimedChunk",
    "expand_stream",
    "record_stream",
    "validate_stream",
]

StreamRecordType: TypeAlias = Literal[
    "text-chunks", "reasoning-chunks", "tool-call-chunks", "chunk"
]
"""The ``type`` of an assistant stream record (spec/core.md §2.5)."""

StreamRecord: TypeAlias = dict[str, JsonValue]
"""One assistant stream record, e.g. ``{"type": "text-chunks", "time0", "index", "dt", ...}``."""

TimedChunk: TypeAlias = tuple[int, dict[str, JsonValue]]
"""A stream chunk with its session time: ``(time, chunk)``."""

_RunType: TypeAlias = Literal["text-chunks", "reasoning-chunks", "tool-call-chunks"]

_RUN_OF_DELTA: Final[dict[str, _RunType]] = {
    "text-delta": "text-chunks",
    "reasoning-delta": "reasoning-chunks",
    "tool-call-delta": "tool-call-chunks",
}
_TEXT_RUN_OF: Final = {d: r for d, r in _RUN_OF_DELTA.items() if r != "tool-call-chunks"}
_DELTA_OF_RUN: Final[dict[str, str]] = {run: delta for delta, run in _RUN_OF_DELTA.items()}

_TEXT_DELTA_KEYS: Final = frozenset({"type", "index", "text"})
_TOOL_DELTA_KEYS: Final = frozenset({"type", "index", "id", "argumentsDelta"})
_NAMED_TOOL_DELTA_KEYS: Final = _TOOL_DELTA_KEYS | {"name"}

_TEXT_RUN_KEYS: Final = ("type", "time0", "index", "dt", "texts")
_TOOL_RUN_KEYS: Final = ("type", "time0", "index", "dt", "id", "args")
_NAMED_TOOL_RUN_KEYS: Final = ("type", "time0", "index", "dt", "id", "name", "args")
_CHUNK_KEYS: Final = ("type", "time", "chunk")


class _Run:
    """The open run record of a ``StreamRecorder``: mutable, appended to in O(1)."""

    __slots__ = ("dt", "id", "index", "key", "last_time", "members", "name", "time0", "type")

    def __init__(
        self, run_type: _RunType, time: int, index: int, call_id: str, name: str | None, member: str
    ) -> None:
        self.type: _RunType = run_type
        self.time0 = time
        self.last_time = time
        self.index = index
        self.id = call_id
        self.name = name
        self.dt: list[int] = []
        self.members = [member]
        # Everything a following delta must match to join (§2.5); ``name is None`` stands for an
        # absent name, which never equals a present one because names are strings.
        self.key: tuple[str, int, str, str | None] = (run_type, index, call_id, name)

    def record(self) -> StreamRecord:
        if self.type != "tool-call-chunks":
            return {
                "type": self.type,
                "time0": self.time0,
                "index": self.index,
                "dt": list(self.dt),
                "texts": list(self.members),
            }
        out: StreamRecord = {
            "type": self.type,
            "time0": self.time0,
            "index": self.index,
            "dt": list(self.dt),
            "id": self.id,
        }
        if self.name is not None:
            out["name"] = self.name
        out["args"] = list(self.members)
        return out


def _is_index(value: object) -> bool:
    """A content-block index a run can carry: a non-negative ``int`` (``bool`` is no number)."""
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def _run_of(chunk: Mapping[str, JsonValue]) -> tuple[_RunType, int, str, str | None, str] | None:
    """Classify ``chunk``: ``(run type, index, id, name, member)`` for a packable delta, else None.

    Implements the §2.5 split between deltas and raw chunks. A tool-call delta with an empty
    ``id`` or an empty-string ``name`` is raw by the spec. A delta whose shape is not exactly
    the protocol's (extra keys, a member of the wrong type, a negative index) is also kept raw,
    so the codec stays lossless for every JSON object, as the F0 storage codec's whitelist
    (§12) does; a run could not carry the extra keys, and validation on read would refuse it.
    """
    chunk_type = chunk.get("type")
    run_type = _RUN_OF_DELTA.get(chunk_type) if type(chunk_type) is str else None
    if run_type is None:
        return None
    keys = chunk.keys()
    index = chunk["index"] if "index" in keys else None
    if not _is_index(index):
        return None
    assert isinstance(index, int)  # _is_index checked it
    if run_type != "tool-call-chunks":
        text = chunk["text"] if keys == _TEXT_DELTA_KEYS else None
        return (run_type, index, "", None, text) if type(text) is str else None
    if keys != _TOOL_DELTA_KEYS and keys != _NAMED_TOOL_DELTA_KEYS:
        return None
    call_id, arguments, name = chunk["id"], chunk["argumentsDelta"], chunk.get("name")
    if type(call_id) is not str or type(arguments) is not str or call_id == "":
        return None
    if "name" in keys and (type(name) is not str or name == ""):
        return None
    return (run_type, index, call_id, name, arguments)


def _text_run_of(chunk: object, time: object) -> tuple[_RunType, int, str, str | None, str] | None:
    """``_run_of`` of a plain text or reasoning delta at an ``int`` time, else ``None``."""
    # add()'s checks, but no snapshot: a run keeps only the delta's string, not a copy of it.
    if type(chunk) is not dict or type(time) is not int or chunk.keys() != _TEXT_DELTA_KEYS:
        return None
    kind, index, text = chunk["type"], chunk["index"], chunk["text"]
    run = _TEXT_RUN_OF.get(kind) if type(kind) is str else None
    if run is None or type(text) is not str or not _is_index(index) or abs(time) > MAX_SAFE_INTEGER:
        return None
    return (run, index, "", None, text)


class StreamRecorder:
    """Accumulates one attempt's timed chunks into assistant stream records as they arrive.

    Implements the accumulation rule of spec/core.md §2.5: a delta joins the previous record iff
    it is a run of the same type and ``index`` (tool calls: same ``id``, same presence and value
    of ``name``) and the time gap is a safe integer; otherwise it starts a new record. Every
    other chunk becomes a ``chunk`` record. Gaps may be negative.

    Example:
        >>> recorder = StreamRecorder()
        >>> recorder.add({"type": "reasoning-delta", "index": 0, "text": "Hm"}, 5)
        >>> recorder.add({"type": "reasoning-delta", "index": 0, "text": "m."}, 9)
        >>> recorder.records()
        [{'type': 'reasoning-chunks', 'time0': 5, 'index': 0, 'dt': [4], 'texts': ['Hm', 'm.']}]
    """

    __slots__ = ("_records", "_run")

    def __init__(self) -> None:
        self._records: list[_Run | StreamRecord] = []
        self._run: _Run | None = None

    def add(self, chunk: Mapping[str, JsonValue], time: int) -> None:
        """Record one chunk the provider streamed at ``time`` (spec/core.md §2.5 accumulation).

        The chunk is snapshotted (validated and deep-frozen), so later changes to the caller's
        mapping do not reach the records.

        Args:
            chunk: A stream chunk (spec/plugins.md §5.3), any lossless JSON object.
            time: The session time of the chunk, a safe integer (an integral float such as
                ``1.0`` counts and is stored as ``int``).

        Raises:
            TypeError: ``chunk`` is not a mapping.
            StreamRecordError: ``time`` is not a safe integer.
            NotLosslessJson: ``chunk`` holds a value outside the lossless JSON domain.
        """
        delta = _text_run_of(chunk, time)
        if delta is None:
            if not is_safe_integer(time):
                raise StreamRecordError(f"stream time must be a safe integer, got {time!r}")
            time = int(time)
            if not isinstance(chunk, Mapping):
                raise TypeError(f"stream chunk must be a mapping, got {type(chunk).__name__}")
            frozen: dict[str, JsonValue] = snapshot(
                chunk if type(chunk) is dict or is_frozen(chunk) else dict(chunk)
            )
            delta = _run_of(frozen)
            if delta is None:
                self._records.append({"type": "chunk", "time": time, "chunk": frozen})
                self._run = None
                return
        run_type, index, call_id, name, member = delta
        run = self._run
        # Times are safe integers, so the sum time0 + dt[0] + ... is exact in Python and equals
        # ``time``; only the gap itself can leave the safe range (up to 2 * MAX_SAFE_INTEGER).
        if run is not None and run.key == (run_type, index, call_id, name):
            gap = time - run.last_time
            if -MAX_SAFE_INTEGER <= gap <= MAX_SAFE_INTEGER:
                run.dt.append(gap)
                run.members.append(member)
                run.last_time = time
                return
        self._run = _Run(run_type, time, index, call_id, name, member)
        self._records.append(self._run)

    def records(self) -> list[StreamRecord]:
        """Return the records so far, in order, as new plain dicts and lists.

        Raw chunks inside ``chunk`` records are the immutable snapshots taken by ``add``.
        """
        return [r.record() if isinstance(r, _Run) else dict(r) for r in self._records]


def record_stream(chunks: Iterable[tuple[int, Mapping[str, JsonValue]]]) -> list[StreamRecord]:
    """Compact a sequence of ``(time, chunk)`` pairs into assistant stream records.

    Implements spec/core.md §2.5 accumulation in one call; see ``StreamRecorder``.

    Raises:
        TypeError: A chunk is not a mapping.
        ValueError: A time is not a safe integer, or a chunk is not lossless JSON.
    """
    recorder = StreamRecorder()
    for time, chunk in chunks:
        recorder.add(chunk, time)
    return recorder.records()


def expand_stream(records: Sequence[Mapping[str, JsonValue]]) -> list[TimedChunk]:
    """Expand assistant stream records back into the exact ``(time, chunk)`` sequence.

    Implements spec/core.md §2.5 (member k's time is ``time0 + dt[0] + ... + dt[k-1]``) and the
    expansion of spec/plugins.md §5.4. The records are validated first (``validate_stream``).
    A tool-call delta carries ``name`` only when its record has one. Raw chunks come back as
    immutable snapshots; rebuilt deltas as new dicts. Times and indexes read as integral floats
    (``1.0``, JSON written elsewhere) come back as ``int``.

    Raises:
        StreamRecordError: A record is malformed; the message names the record and its path.
    """
    validate_stream(records)
    out: list[TimedChunk] = []
    for record in records:
        record_type = record["type"]
        if record_type == "chunk":
            out.append((int(record["time"]), snapshot(record["chunk"])))
            continue
        delta_type = _DELTA_OF_RUN[record_type]
        index = int(record["index"])
        time = int(record["time0"])
        dt = record["dt"]
        if record_type == "tool-call-chunks":
            call_id = record["id"]
            named = "name" in record
            name = record.get("name")
            for k, arguments in enumerate(record["args"]):
                if k:
                    time += int(dt[k - 1])
                chunk: dict[str, JsonValue] = {"type": delta_type, "index": index, "id": call_id}
                if named:
                    chunk["name"] = name
                chunk["argumentsDelta"] = arguments
                out.append((time, chunk))
        else:
            for k, text in enumerate(record["texts"]):
                if k:
                    time += int(dt[k - 1])
                out.append((time, {"type": delta_type, "index": index, "text": text}))
    return out


def validate_stream(records: JsonValue) -> None:
    """Check assistant stream records read from storage, strictly.

    Implements "Validation on read" of spec/core.md §2.5 and spec/plugins.md §5.4: exact key
    sets; non-empty ``texts``/``args`` of strings; non-empty string ``id`` and ``name``;
    safe-integer ``time``, ``time0``, gaps and (as upstream checks) a non-negative safe-integer
    ``index``; ``dt`` one entry shorter than the members; every member time a safe integer.
    A ``chunk`` record's ``chunk`` may be any lossless JSON object: raw chunks are not checked
    against the stream protocol.

    Raises:
        StreamRecordError: Naming the record index and the JSON path, e.g.
            ``stream record 3: dt length 2 does not match 4 members (at $[3].dt)``.
    """
    if not isinstance(records, list):
        raise StreamRecordError(f"stream must be an array of records, got {type(records).__name__}")
    for i, record in enumerate(records):
        _validate_record(i, record)


def _fail(i: int, why: str, *path: str | int) -> StreamRecordError:
    return StreamRecordError(f"stream record {i}: {why} (at {_json_path([i, *path])})")


def _validate_record(i: int, record: JsonValue) -> None:
    if not isinstance(record, dict):
        raise _fail(i, f"a record must be an object, got {type(record).__name__}")
    record_type = record.get("type")
    if record_type == "chunk":
        _check_keys(i, record, _CHUNK_KEYS)
        if not is_safe_integer(record["time"]):
            raise _fail(i, "time must be a safe integer", "time")
        chunk = record["chunk"]
        if not isinstance(chunk, dict):
            raise _fail(i, "chunk must be a JSON object", "chunk")
        try:
            snapshot(chunk)
        except NotLosslessJson as exc:
            where = exc.path.replace("$", _json_path([i, "chunk"]), 1)
            raise StreamRecordError(
                f"stream record {i}: chunk must be lossless JSON: {where} {exc.reason}"
            ) from exc
        return
    if record_type in ("text-chunks", "reasoning-chunks"):
        _check_keys(i, record, _TEXT_RUN_KEYS)
        members = "texts"
    elif record_type == "tool-call-chunks":
        _check_keys(i, record, _NAMED_TOOL_RUN_KEYS if "name" in record else _TOOL_RUN_KEYS)
        members = "args"
        for key in ("id", "name") if "name" in record else ("id",):
            value = record[key]
            if type(value) is not str or value == "":
                raise _fail(i, f"{key} must be a non-empty string", key)
    else:
        raise _fail(
            i,
            "type must be 'text-chunks', 'reasoning-chunks', 'tool-call-chunks' or 'chunk', "
            f"got {record_type!r}",
            "type",
        )
    time0, index, dt, values = record["time0"], record["index"], record["dt"], record[members]
    if not is_safe_integer(time0):
        raise _fail(i, "time0 must be a safe integer", "time0")
    if not is_safe_integer(index) or index < 0:
        raise _fail(i, "index must be a non-negative safe integer", "index")
    if not isinstance(values, list) or not values:
        raise _fail(i, f"{members} must be a non-empty string array", members)
    for k, value in enumerate(values):
        if type(value) is not str:
            raise _fail(i, f"{members} must be a non-empty string array", members, k)
    if not isinstance(dt, list):
        raise _fail(i, "dt must be an array of safe integers", "dt")
    for k, gap in enumerate(dt):
        if not is_safe_integer(gap):
            raise _fail(i, "dt must be an array of safe integers", "dt", k)
    if len(dt) != len(values) - 1:
        raise _fail(i, f"dt length {len(dt)} does not match {len(values)} members", "dt")
    time = int(time0)
    for k, gap in enumerate(dt):
        time += int(gap)
        if not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER:
            raise _fail(i, f"member {k + 1} time {time} is not a safe integer", "dt", k)


def _check_keys(i: int, record: dict[str, JsonValue], expected: tuple[str, ...]) -> None:
    if record.keys() == set(expected):
        return
    missing = [k for k in expected if k not in record]
    extra = [k for k in record if k not in expected]
    detail = "; ".join(
        part
        for part in (
            f"missing {', '.join(missing)}" if missing else "",
            f"unexpected {', '.join(map(repr, extra))}" if extra else "",
        )
        if part
    )
    raise _fail(i, f"{record['type']} record must be exactly {{{', '.join(expected)}}}: {detail}")
