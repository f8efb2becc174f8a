"""Packed chunk rows: how format-0 and format-1 files store runs of ``assistant/chunk`` events.

Implements spec/core.md §12 (``chunk-rows.ts``) and spec/persistence.md §3.3. A run of three or
more whitelisted delta chunks of one kind (contiguous seqs, same turn, step and block index; for
tool calls the same id and the same presence and value of ``name``) is stored as one row:

``{"type": "text-chunks" | "reasoning-chunks", "seq0", "time0", "data": {turn, step, index, dt,
texts}}`` or ``{"type": "tool-call-chunks", "seq0", "time0", "data": {turn, step, index, id,
name?, dt, args}}``

where member ``k`` has seq ``seq0 + k`` and time ``time0 + sum(dt[:k])``. Rows never enter a
session: readers expand them (``decode_storage_record``), and only the format-0 writer of the
property tests packs them (``pack_chunk_runs``). Format 2 and later embed stream records in the
messages instead (spec/core.md §2.5).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate, pairwise
from typing import Any, Final

from agentlog.values import is_safe_integer

__all__ = ["ROW_TYPES", "MalformedChunkRow", "decode_storage_record", "pack_chunk_runs"]

ROW_TYPES: Final = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
"""The tags of packed rows; slash-less, so they never collide with an event type."""

_ROW_OF_DELTA: Final = {
    "text-delta": "text-chunks",
    "reasoning-delta": "reasoning-chunks",
    "tool-call-delta": "tool-call-chunks",
}
_DELTA_OF_ROW: Final = {row: delta for delta, row in _ROW_OF_DELTA.items()}
_ROW_KEYS: Final = frozenset({"type", "seq0", "time0", "data"})
_TEXT_DATA_KEYS: Final = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_DATA_KEYS: Final = frozenset({"turn", "step", "index", "id", "dt", "args"})
_NAMED_TOOL_DATA_KEYS: Final = _TOOL_DATA_KEYS | {"name"}
_EVENT_KEYS: Final = frozenset({"type", "seq", "time", "data"})
_CHUNK_DATA_KEYS: Final = frozenset({"turn", "step", "chunk"})
_TEXT_CHUNK_KEYS: Final = frozenset({"type", "index", "text"})
_TOOL_CHUNK_KEYS: Final = frozenset({"type", "index", "id", "argumentsDelta"})
_NAMED_TOOL_CHUNK_KEYS: Final = _TOOL_CHUNK_KEYS | {"name"}


class MalformedChunkRow(ValueError):
    """A packed row is damaged; ``str()`` is ``malformed <tag> storage row: <why>`` (§12)."""


def _is_number(value: object) -> bool:
    return type(value) in (int, float)


def _is_string_list(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(type(v) is str for v in value)


# --- reading -----------------------------------------------------------------------------


def decode_storage_record(value: object) -> list[Any]:
    """The events one stored record stands for (spec/core.md §12, ``decodeStorageRecord``).

    A packed row is validated and expanded into its member ``assistant/chunk`` events (``name``
    only when the row has one); anything else is returned as ``[value]`` unvalidated, even
    ``"junk"`` or ``None``: checking events is the reader's job.

    Raises:
        MalformedChunkRow: with the spec's text for a damaged row.
    """
    if not isinstance(value, dict):
        return [value]
    tag = value.get("type")
    if tag not in ROW_TYPES:
        return [value]

    def malformed(why: str) -> MalformedChunkRow:
        return MalformedChunkRow(f"malformed {tag} storage row: {why}")

    if value.keys() != _ROW_KEYS:
        raise malformed("envelope must be exactly {type, seq0, time0, data}")
    seq0, time0, data = value["seq0"], value["time0"], value["data"]
    if not (is_safe_integer(seq0) and seq0 >= 0):
        raise malformed("seq0 must be a non-negative safe integer")
    if not is_safe_integer(time0):
        raise malformed("time0 must be a safe integer")
    if not isinstance(data, dict):
        raise malformed("data must be an object")
    if tag == "tool-call-chunks":
        if data.keys() != _TOOL_DATA_KEYS and data.keys() != _NAMED_TOOL_DATA_KEYS:
            raise malformed("data must be exactly {turn, step, index, id, name?, dt, args}")
        if type(data["id"]) is not str or ("name" in data and type(data["name"]) is not str):
            raise malformed("id (and name when present) must be strings")
        members_key = "args"
    else:
        if data.keys() != _TEXT_DATA_KEYS:
            raise malformed("data must be exactly {turn, step, index, dt, texts}")
        members_key = "texts"
    if not all(_is_number(data[key]) for key in ("turn", "step", "index")):
        raise malformed("turn/step/index must be numbers")
    members = data[members_key]
    if not _is_string_list(members):
        raise malformed(f"{members_key} must be a non-empty string array")
    dt = data["dt"]
    if not (isinstance(dt, list) and all(is_safe_integer(gap) for gap in dt)):
        raise malformed("dt must be an array of safe integers")
    if len(dt) != len(members) - 1:
        raise malformed(f"dt length {len(dt)} does not match {len(members)} members")
    if not is_safe_integer(seq0 + len(members) - 1):
        raise malformed("member seqs must stay safe integers")
    times = list(accumulate(dt, initial=time0))
    if not all(is_safe_integer(time) for time in times):
        raise malformed("member times must stay safe integers")
    delta = _DELTA_OF_ROW[tag]
    events = []
    for k, (member, time) in enumerate(zip(members, times, strict=True)):
        chunk: dict[str, Any]
        if tag == "tool-call-chunks":
            chunk = {"type": delta, "index": data["index"], "id": data["id"]}
            if "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = member
        else:
            chunk = {"type": delta, "index": data["index"], "text": member}
        events.append(
            {
                "type": "assistant/chunk",
                "seq": int(seq0) + k,
                "time": int(time),
                "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk},
            }
        )
    return events


# --- writing -----------------------------------------------------------------------------


def _run_key(event: object) -> tuple[Any, ...] | None:
    """What a packable chunk event must share with its run's others, or None (§12 whitelist)."""
    if not isinstance(event, Mapping) or event.keys() != _EVENT_KEYS:
        return None
    if event["type"] != "assistant/chunk":
        return None
    seq, time, data = event["seq"], event["time"], event["data"]
    if not (is_safe_integer(seq) and seq >= 0 and is_safe_integer(time)):
        return None
    if not isinstance(data, Mapping) or data.keys() != _CHUNK_DATA_KEYS:
        return None
    turn, step, chunk = data["turn"], data["step"], data["chunk"]
    if not (_is_number(turn) and _is_number(step) and isinstance(chunk, Mapping)):
        return None
    row = _ROW_OF_DELTA.get(chunk.get("type"))  # type: ignore[arg-type]
    if row is None or not _is_number(chunk.get("index")):
        return None
    if row != "tool-call-chunks":
        if chunk.keys() != _TEXT_CHUNK_KEYS or type(chunk["text"]) is not str:
            return None
        return (row, turn, step, chunk["index"])
    if chunk.keys() != _TOOL_CHUNK_KEYS and chunk.keys() != _NAMED_TOOL_CHUNK_KEYS:
        return None
    if type(chunk["id"]) is not str or type(chunk["argumentsDelta"]) is not str:
        return None
    name = chunk.get("name", _NO_NAME)
    if name is not _NO_NAME and type(name) is not str:
        return None
    return (row, turn, step, chunk["index"], chunk["id"], "name" in chunk, name)


_NO_NAME: Final[Any] = object()


def pack_chunk_runs(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Store a batch of events with runs of 3+ packable chunks as rows (``packChunkRuns``).

    Everything else passes through, in order. ``decode_storage_record`` of every record gives
    the batch back exactly.
    """
    records: list[Mapping[str, Any]] = []
    run: list[Mapping[str, Any]] = []
    run_key: tuple[Any, ...] | None = None

    def close_run() -> None:
        if len(run) >= 3:
            records.append(_row(run))
        else:
            records.extend(run)
        run.clear()

    for event in events:
        key = _run_key(event)
        joins = (
            key is not None
            and key == run_key
            and event["seq"] == run[-1]["seq"] + 1
            and is_safe_integer(event["time"] - run[-1]["time"])
        )
        if not joins:
            close_run()
            run_key = key
        if key is None:
            records.append(event)
        else:
            run.append(event)
    close_run()
    return records


def _row(run: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    first = run[0]
    data, chunk = first["data"], first["data"]["chunk"]
    tag = _ROW_OF_DELTA[chunk["type"]]
    dt = [b["time"] - a["time"] for a, b in pairwise(run)]
    row_data: dict[str, Any] = {"turn": data["turn"], "step": data["step"], "index": chunk["index"]}
    if tag == "tool-call-chunks":
        row_data["id"] = chunk["id"]
        if "name" in chunk:
            row_data["name"] = chunk["name"]
        row_data["dt"] = dt
        row_data["args"] = [e["data"]["chunk"]["argumentsDelta"] for e in run]
    else:
        row_data["dt"] = dt
        row_data["texts"] = [e["data"]["chunk"]["text"] for e in run]
    return {"type": tag, "seq0": first["seq"], "time0": first["time"], "data": row_data}
