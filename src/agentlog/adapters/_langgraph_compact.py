"""The compact stored form of LangGraph events: what the log already says is left out.

A ``langgraph/checkpoint`` or ``langgraph/writes`` event is built in its full form (see
``_langgraph_index``) and stored compacted by ``compact``; ``expand`` rebuilds the full form,
which is all the rest of the adapter reads. The writer keeps a compacted event only when
``expand`` gives back its full form byte for byte (``orjson`` output), so a rule below that does
not hold for some value — another id scheme, a time zone, a LangGraph that hashes task ids
otherwise — only costs bytes, never changes what is read. Events stored before these rules
have none of their keys and are their own full form.

Checkpoint events (``"v"`` or ``"m"`` at the top, ``"id"`` a list, or no ``"blobs"``):

* ``"id": [dt, node, ts]`` (or ``[dt, node, ts, seq]``) — the checkpoint id, a UUID v6 as
  LangGraph makes them (``uuid6(clock_seq=step)``): its parent's id moved by ``dt`` (in
  100 ns), with clock sequence the parent's plus one (else ``seq``) and random ``node``
  (hex); and its ``ts``, ``ts`` microseconds from the id's time (LangGraph takes both within
  microseconds of each other);
* ``"checkpoint"`` then leaves out the ``ts``, the ``id`` and the ``"of"`` of a ``"step"``
  patch of the parent, and is left out itself when nothing else changed;
* ``"m": set`` — metadata ``{"$lg": "patch", "set": set}``;
* ``"b": blobs`` instead of ``"blobs"`` — the blobs that differ from the ones the parent's
  pending writes predict (``_predicted``; ``null``: a predicted blob that is not there),
  in the order the namespace's channels first had blobs; left out when none differ;
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

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from agentlog.adapters._langgraph_ids import (
    PULL,
    default_triggers,
    id_from,
    id_offset,
    pull_task,
    ts_from,
    ts_offset,
    uuid6_parts,
)

__all__ = ["RECENT", "Context", "compact", "expand"]

CHECKPOINT: Final = "langgraph/checkpoint"
WRITES: Final = "langgraph/writes"
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
    pending: Sequence[tuple[str, int, int, str, Any]] = ()
    """The parent's pending writes: ``(task path, seq, position, channel, tree)``, in order."""
    order: Mapping[str, int] | None = None
    """Channel → its rank among the namespace's channels (by first blob)."""


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
    ts = None if offset is None else ts_offset(tree["set"]["ts"], tree["set"]["id"])
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
        short = {
            channel: _short_blob(blob, common, last.get(channel, _NONE))
            for channel, blob in blobs.items()
        }
        predicted = _predicted(context)
        differs = {
            channel: blob
            for channel, blob in short.items()
            if channel not in predicted or orjson.dumps(predicted[channel]) != orjson.dumps(blob)
        }
        differs.update((channel, None) for channel in predicted if channel not in short)
        if (
            predicted
            and len(orjson.dumps(differs)) < len(orjson.dumps(short))
            and orjson.dumps(_merged(predicted, differs, context)) == orjson.dumps(short)
        ):
            if differs:
                stored["b"] = differs
        else:
            stored["blobs"] = short
    else:
        stored["blobs"] = blobs
    return stored


def _predicted(context: Context) -> dict[str, Any]:
    """The compact blobs a checkpoint most likely has, given its parent's pending writes.

    LangGraph's next checkpoint applies them: each pulled task consumed its trigger channels
    (``[]``, empty), and each written channel holds what was written — the written list's
    items on the channel's last version (``add_messages``), or the value. A guess only: the
    stored ``"b"`` says where the blobs differ.
    """
    blobs: dict[str, Any] = {}
    for path, *_ in context.pending:
        if path.startswith(PULL):
            for trigger in default_triggers(path[len(PULL) :]):
                blobs[trigger] = []
    last = context.versions or {}
    for _, seq, position, channel, tree in context.pending:
        if isinstance(tree, list) and channel in last:
            before = blobs.get(channel)
            items = before["+"] if isinstance(before, dict) else []
            refs = [{"$lg": "at", "r": [seq, position, index]} for index in range(len(tree))]
            blobs[channel] = {"+": [*items, *refs]}
        else:
            blobs[channel] = [tree]
    return blobs


def _merged(predicted: dict[str, Any], differs: dict[str, Any], context: Context) -> Any:
    """The predicted blobs with ``differs`` applied (``None``: no blob), in channel order."""
    merged = {**predicted, **differs}
    order = context.order or {}
    rank = {channel: order.get(channel, len(order) + at) for at, channel in enumerate(merged)}
    return {
        channel: merged[channel]
        for channel in sorted(merged, key=rank.__getitem__)
        if merged[channel] is not None
    }


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
    if not ({"v", "m"} & data.keys() or compact_id) and "blobs" in data:
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
        changed = {"ts": ts_from(offset[2], checkpoint_id), "id": checkpoint_id, **tree["set"]}
        rest = {key: value for key, value in tree.items() if key not in ("$lg", "set")}
        full["checkpoint"] = {"$lg": "step", "set": changed, **rest, "of": of}
    else:
        full["checkpoint"] = data["checkpoint"]
    if "m" in data:
        full["metadata"] = {"$lg": "patch", "set": data["m"]}
    elif "metadata" in data:
        full["metadata"] = data["metadata"]
    if "blobs" in data:
        blobs = data["blobs"]
    else:
        blobs = _merged(_predicted(context), data.get("b", {}), context)
    if blobs and ("v" in data or compact_id or "blobs" not in data):
        common = data["v"] if "v" in data else _next_version(context)
        last = context.versions or {}
        full["blobs"] = {
            channel: _long_blob(blob, common, last, channel) for channel, blob in blobs.items()
        }
    else:
        full["blobs"] = blobs
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
    name = path[len(PULL) :] if type(path) is str and path.startswith(PULL) else None
    pulled: str | list[str] | None = None
    if name is not None and isinstance(target, str) and uuid6_parts(target) is not None:
        ns = data.get("ns", "")
        if pull_task(target, ns, name, default_triggers(name)) == data["task"]:
            pulled = name
        else:
            for triggers in ([f"branch:to:{name}"], [name]):
                if pull_task(target, ns, name, triggers) == data["task"]:
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
        triggers = triggers or default_triggers(name)
        full["task"] = pull_task(target, data.get("ns", ""), name, triggers)
        full["path"] = PULL + name
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
