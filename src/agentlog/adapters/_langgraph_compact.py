"""The compact stored form of LangGraph events: what the log already says is left out.

A ``langgraph/checkpoint`` or ``langgraph/writes`` event is built in its full form (see
``_langgraph_index``) and stored compacted by ``compact``; ``expand`` rebuilds the full form,
which is all the rest of the adapter reads. The writer keeps a compacted event only when
``expand`` gives back its full form byte for byte (``orjson`` output), so a rule below that does
not hold for some value — another id scheme, a time zone, a LangGraph that hashes task ids
otherwise — only costs bytes, never changes what is read. Events stored before these rules
have none of their keys and are their own full form.

Checkpoint events (``"v"`` or ``"m"`` at the top, or ``"id"`` a list):

* ``"id": [dt, node, ts]`` (or ``[dt, node, ts, seq]``) — the checkpoint id, a UUID v6 as
  LangGraph makes them (``uuid6(clock_seq=step)``): its parent's id moved by ``dt`` (in
  100 ns), with clock sequence the parent's plus one (else ``seq``) and random ``node``
  (hex); and its ``ts``, ``ts`` microseconds from the id's time (LangGraph takes both within
  microseconds of each other);
* ``"checkpoint"`` then leaves out the ``ts``, the ``id`` and the ``"of"`` of a ``"step"``
  patch of the parent, and is left out itself when nothing else changed;
* ``"m": set`` — metadata ``{"$lg": "patch", "set": set}``;
* ``"v": version`` — the version shared by the blobs (most often all of them), left out with a
  compact id when it is one above every blob version of the namespace so far (LangGraph's
  next version of int versions): a blob without ``"v"`` has it, and a blob ``[]`` is
  ``{"v": version, "empty": true}``, ``[value]`` is ``{"v": version, "value": value}``, and
  ``{"+": items}`` is ``{"v": version, "base": last, "items": items}``, ``last`` the version
  of the channel's previous blob in the namespace.

Writes events:

* ``"checkpoint": [dt, node]`` — the target checkpoint id, as above against the namespace's
  previous checkpoint in log order;
* ``"pull": name`` (or ``[name, trigger, ...]``) — for the task of node ``name`` that LangGraph
  pulled (its ``task_path`` ``"~__pregel_pull, name"``), whose ``task`` id LangGraph derives
  from the checkpoint id, the namespace, the step (the checkpoint id's clock sequence plus
  one), the node and its triggers (by default ``"branch:to:<name>"``, ``"__start__"`` for the
  ``__start__`` node): both are left out;
* ``"checkpoint": k`` — the target is the ``k``-th checkpoint before the namespace's last;
* a write ``[channel, tree]`` is ``[position, channel, tree]`` (its idx is its position).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import orjson
from xxhash import xxh3_128_hexdigest

__all__ = ["RECENT", "Context", "compact", "expand", "id_from", "id_offset"]

CHECKPOINT: Final = "langgraph/checkpoint"
WRITES: Final = "langgraph/writes"
_UUID_EPOCH: Final = 0x01B21DD213814000
"""100 ns intervals from the UUID epoch (1582-10-15) to the Unix epoch."""
_UNIX: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND: Final = timedelta(microseconds=1)
_PULL: Final = "~__pregel_pull, "
_SEQ_MASK: Final = 0x3FFF
RECENT: Final = 16
"""A write target among this many previous checkpoints of its namespace is named by position."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """What the compact form of one event is relative to: the thread's events before it."""

    parent: str | None = None
    """A checkpoint's parent id."""
    of: int | None = None
    """The seq of the parent's checkpoint event."""
    recent: Sequence[str] = ()
    """The namespace's checkpoint ids in log order (the last ``RECENT`` at least)."""
    versions: Mapping[str, Any] | None = None
    """Channel → the version of its last blob in the namespace."""
    top: int | None = None
    """The highest int version of a blob in the namespace."""


def _uuid6(text: Any) -> tuple[int, int, int] | None:
    """The time, clock sequence and node of a canonical UUID v6 string, else ``None``."""
    if type(text) is not str or len(text) != 36:
        return None
    try:
        value = uuid.UUID(text)
    except ValueError:
        return None
    if value.version != 6 or value.variant != uuid.RFC_4122 or str(value) != text:
        return None
    number = value.int
    time = ((number >> 80) << 12) | ((number >> 64) & 0xFFF)
    return time, (number >> 48) & _SEQ_MASK, number & 0xFFFF_FFFF_FFFF


def _make_uuid6(time: int, seq: int, node: int) -> str:
    number = ((time >> 12) & 0xFFFF_FFFF_FFFF) << 80 | (time & 0xFFF) << 64
    number |= (seq & _SEQ_MASK) << 48 | (node & 0xFFFF_FFFF_FFFF)
    number |= 6 << 76 | 2 << 62  # version 6, RFC 4122 variant (spelled out: Python 3.11's
    return str(uuid.UUID(int=number))  # ``uuid.UUID(version=6)`` refuses the version)


def id_offset(text: Any, base: Any) -> list[Any] | None:
    """UUID v6 ``text`` as an offset from ``base`` (``id_from`` inverts it), else ``None``."""
    new, old = _uuid6(text), _uuid6(base)
    if new is None or old is None:
        return None
    offset: list[Any] = [new[0] - old[0], f"{new[2]:012x}"]
    if new[1] != (old[1] + 1) & _SEQ_MASK:
        offset.append(new[1])
    return offset if id_from(offset, base) == text else None


def id_from(offset: list[Any], base: str) -> str:
    """The UUID v6 that ``offset`` (of ``id_offset``) names, given ``base``."""
    old = _uuid6(base)
    if old is None:
        raise ValueError(f"checkpoint id {base!r} is not a UUID v6")
    seq = offset[2] if len(offset) > 2 else (old[1] + 1) & _SEQ_MASK
    return _make_uuid6(old[0] + offset[0], seq, int(offset[1], 16))


def _micros(checkpoint_id: str) -> int:
    parts = _uuid6(checkpoint_id)
    if parts is None:
        raise ValueError(f"checkpoint id {checkpoint_id!r} is not a UUID v6")
    return (parts[0] - _UUID_EPOCH) // 10


def _ts_from(offset: int, checkpoint_id: str) -> str:
    return (_UNIX + timedelta(microseconds=_micros(checkpoint_id) + offset)).isoformat()


def _ts_offset(ts: Any, checkpoint_id: str) -> int | None:
    if type(ts) is not str:
        return None
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    offset = (moment - _UNIX) // _MICROSECOND - _micros(checkpoint_id)
    return offset if _ts_from(offset, checkpoint_id) == ts else None


def _pull_task(checkpoint_id: str, ns: str, name: str, triggers: list[str]) -> str:
    """The id LangGraph gives the pulled task of node ``name`` of a checkpoint."""
    parts = _uuid6(checkpoint_id)
    if parts is None:
        raise ValueError(f"checkpoint id {checkpoint_id!r} is not a UUID v6")
    step = (parts[1] + 1) & _SEQ_MASK  # uuid6(clock_seq=step), the tasks run at step + 1
    task_ns = f"{ns}|{name}" if ns else name
    text = "".join([task_ns, str(step), name, "__pregel_pull", *triggers])
    digest = xxh3_128_hexdigest(uuid.UUID(checkpoint_id).bytes + text.encode())
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _triggers(name: str) -> list[str]:
    """The channels that trigger node ``name`` in a ``StateGraph``, LangGraph's default."""
    return ["__start__"] if name == "__start__" else [f"branch:to:{name}"]


# --- checkpoint events --------------------------------------------------------------------


def _compact_checkpoint(data: dict[str, Any], context: Context) -> Any:
    parent, of = context.parent, context.of
    stored: dict[str, Any] = {}
    tree = data["checkpoint"]
    step = (
        parent is not None
        and "id" not in data
        and isinstance(tree, dict)
        and tree.get("$lg") == "step"
        and tree.get("of") == of
        and list(tree["set"])[:2] == ["ts", "id"]
    )
    offset = id_offset(tree["set"]["id"], parent) if step else None
    ts = None if offset is None else _ts_offset(tree["set"]["ts"], tree["set"]["id"])
    if offset is not None and ts is not None:
        stored["id"] = [*offset[:2], ts, *offset[2:]]
    for key in ("id", "ns", "parent"):
        if key in data:
            stored[key] = data[key]
    if "id" in stored and "id" not in data:
        rest = {key: value for key, value in tree.items() if key not in ("$lg", "set", "of")}
        changed = {key: value for key, value in tree["set"].items() if key not in ("ts", "id")}
        if changed or rest:
            stored["checkpoint"] = {"$lg": "step", "set": changed, **rest}
    else:
        stored["checkpoint"] = tree
    metadata = data.get("metadata")
    if isinstance(metadata, dict) and list(metadata) == ["$lg", "set"] and _patch(metadata):
        stored["m"] = metadata["set"]
    elif "metadata" in data:
        stored["metadata"] = metadata
    blobs = data["blobs"]
    versions = Counter(orjson.dumps(blob["v"]) for blob in blobs.values())
    if versions:
        common = orjson.loads(versions.most_common(1)[0][0])
        if "id" not in stored or "id" in data or common != _next_version(context):
            stored["v"] = common
        last = context.versions or {}
        stored["blobs"] = {
            channel: _short_blob(blob, common, last.get(channel, _NONE))
            for channel, blob in blobs.items()
        }
    else:
        stored["blobs"] = blobs
    return stored


_NONE: Final = object()


def _next_version(context: Context) -> int | None:
    """The version LangGraph gives the channels a step writes: one above every other."""
    return None if context.top is None else context.top + 1


def _patch(tree: dict[str, Any]) -> bool:
    return tree["$lg"] == "patch" and isinstance(tree["set"], dict)


def _short_blob(blob: dict[str, Any], common: Any, last: Any) -> Any:
    if orjson.dumps(blob["v"]) != orjson.dumps(common):
        return blob
    if len(blob) == 2 and blob.get("empty") is True:
        return []
    if len(blob) == 2 and "value" in blob:
        return [blob["value"]]
    if list(blob) == ["v", "base", "items"] and last is not _NONE and blob["base"] == last:
        return {"+": blob["items"]}
    return {key: value for key, value in blob.items() if key != "v"}


def _expand_checkpoint(data: dict[str, Any], context: Context) -> Any:
    parent, of = context.parent, context.of
    offset = data.get("id")
    compact_id = isinstance(offset, list)
    if "v" not in data and "m" not in data and not isinstance(offset, list):
        return data
    full: dict[str, Any] = {}
    for key in ("id", "ns", "parent"):
        if key in data and not (key == "id" and compact_id):
            full[key] = data[key]
    if isinstance(offset, list):
        if parent is None or of is None:
            raise ValueError("a compact checkpoint event without its parent checkpoint")
        checkpoint_id = id_from([offset[0], offset[1], *offset[3:]], parent)
        tree = data.get("checkpoint", {"$lg": "step", "set": {}})
        changed = {"ts": _ts_from(offset[2], checkpoint_id), "id": checkpoint_id, **tree["set"]}
        rest = {key: value for key, value in tree.items() if key not in ("$lg", "set")}
        full["checkpoint"] = {"$lg": "step", "set": changed, **rest, "of": of}
    else:
        full["checkpoint"] = data["checkpoint"]
    if "m" in data:
        full["metadata"] = {"$lg": "patch", "set": data["m"]}
    elif "metadata" in data:
        full["metadata"] = data["metadata"]
    if data["blobs"] and ("v" in data or compact_id):
        common = data["v"] if "v" in data else _next_version(context)
        last = context.versions or {}
        full["blobs"] = {
            channel: _long_blob(blob, common, last, channel)
            for channel, blob in data["blobs"].items()
        }
    else:
        full["blobs"] = data["blobs"]
    return full


def _long_blob(blob: Any, common: Any, last: Mapping[str, Any], channel: str) -> Any:
    if isinstance(blob, list):
        return {"v": common, "value": blob[0]} if blob else {"v": common, "empty": True}
    if "+" in blob:
        return {"v": common, "base": last[channel], "items": blob["+"]}
    return blob if "v" in blob else {"v": common, **blob}


# --- writes events ------------------------------------------------------------------------


def _compact_writes(data: dict[str, Any], context: Context) -> Any:
    recent = context.recent
    last = recent[-1] if recent else None
    stored: dict[str, Any] = {}
    if "ns" in data:
        stored["ns"] = data["ns"]
    target = data.get("checkpoint", last)
    if "checkpoint" in data:
        back = next(
            (k for k in range(1, min(RECENT, len(recent))) if recent[-1 - k] == target), None
        )
        offset = id_offset(target, last) if back is None and last is not None else None
        stored["checkpoint"] = back or offset or target
    path = data["path"]
    name = path[len(_PULL) :] if type(path) is str and path.startswith(_PULL) else None
    pulled: str | list[str] | None = None
    if name is not None and isinstance(target, str) and _uuid6(target) is not None:
        ns = data.get("ns", "")
        if _pull_task(target, ns, name, _triggers(name)) == data["task"]:
            pulled = name
        else:
            for triggers in ([f"branch:to:{name}"], [name]):
                if _pull_task(target, ns, name, triggers) == data["task"]:
                    pulled = [name, *triggers]
                    break
    if pulled is None:
        stored.update(task=data["task"], path=path)
    else:
        stored["pull"] = pulled
    stored["writes"] = [
        entry[1:] if entry[0] == position else entry
        for position, entry in enumerate(data["writes"])
    ]
    return stored


def _expand_writes(data: dict[str, Any], context: Context) -> Any:
    if (
        "pull" not in data
        and type(data.get("checkpoint", "")) is str
        and all(len(entry) == 3 for entry in data["writes"])
    ):
        return data
    recent = context.recent
    last = recent[-1] if recent else None
    full: dict[str, Any] = {}
    if "ns" in data:
        full["ns"] = data["ns"]
    target = data.get("checkpoint", last)
    if isinstance(target, list):
        if last is None:
            raise ValueError("a compact writes event without a previous checkpoint")
        target = full["checkpoint"] = id_from(target, last)
    elif type(target) is int:  # the target-th checkpoint before the last
        target = full["checkpoint"] = recent[-1 - target]
    elif "checkpoint" in data:
        full["checkpoint"] = target
    if "pull" in data:
        pulled = data["pull"]
        name, triggers = (pulled[0], pulled[1:]) if isinstance(pulled, list) else (pulled, [])
        if target is None:
            raise ValueError("a compact writes event without its checkpoint")
        triggers = triggers or _triggers(name)
        full["task"] = _pull_task(target, data.get("ns", ""), name, triggers)
        full["path"] = _PULL + name
    else:
        full.update(task=data["task"], path=data["path"])
    full["writes"] = [
        entry if len(entry) == 3 else [position, *entry]
        for position, entry in enumerate(data["writes"])
    ]
    return full


# --- both ---------------------------------------------------------------------------------


def compact(event_type: str, data: dict[str, Any], context: Context) -> dict[str, Any]:
    """The stored form of a full-form event: compacted when ``expand`` gives ``data`` back.

    Args:
        event_type: The event type (other types are stored as they are).
        data: The full form.
        context: What the event is relative to (``ThreadIndex.context``).
    """
    if event_type == CHECKPOINT:
        stored = _compact_checkpoint(data, context)
    elif event_type == WRITES:
        stored = _compact_writes(data, context)
    else:
        return data
    try:
        same = orjson.dumps(expand(event_type, stored, context)) == orjson.dumps(data)
    except (ValueError, KeyError, TypeError, IndexError):
        same = False
    return stored if same else data


def expand(event_type: str, data: Any, context: Context) -> Any:
    """The full form of a stored event (an event in full form already is returned as is).

    Args:
        event_type: The event type.
        data: The stored data.
        context: As for ``compact``, from the thread's events before this one.
    """
    if event_type == CHECKPOINT:
        return _expand_checkpoint(data, context)
    if event_type == WRITES:
        return _expand_writes(data, context)
    return data
