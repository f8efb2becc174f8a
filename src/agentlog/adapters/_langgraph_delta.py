"""Patches between JSON trees of one LangGraph thread, so repeated state is stored once.

Two kinds, both checked at write time to rebuild the new tree exactly (key order included), and
not used otherwise:

* ``diff`` / ``patched`` — a checkpoint differs from its parent in a few entries (its id and
  time, the versions of the channels a step wrote), so it is stored as
  ``{"$lg": "patch", "set": {...}, "unset": [...]}`` against the parent's tree; a nested dict
  that changed is itself a patch (without ``"of"``). The caller adds ``"of"``: the seq of the
  event holding the base.
  The patch is taken against the parent as ``predicted`` from the event's blobs (the new
  channel versions, the channels updated, the versions the nodes that ran saw), so it holds
  only what the blobs do not say; its kind is ``"step"`` (``"patch"`` in threads written
  before the versions seen were guessed, read with the guess of that time).
* ``KnownList`` — the last value of a list channel, to tell a new value that extends it (the
  ``add_messages`` pattern: only the new items are stored).
* ``with_fields`` — a message that reaches the channel is usually the very object a task wrote,
  but ``add_messages`` gave it an ``id`` on the way: the channel's copy is stored as a reference
  to the write plus the constructor fields that differ (``"set"``).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Final

import orjson

__all__ = [
    "KnownList",
    "diff",
    "field_changes",
    "is_patch",
    "next_metadata",
    "patched",
    "predicted",
    "with_fields",
]

MARK: Final = "$lg"
INTERRUPT: Final = "__interrupt__"
"""LangGraph's entry of ``versions_seen`` for the versions at the last interrupt (no node)."""


def _plain(value: Any) -> bool:
    return isinstance(value, dict) and MARK not in value


def diff(old: Any, new: Any) -> dict[str, Any] | None:
    """A patch turning dict tree ``old`` into ``new`` exactly, or ``None`` if there is none."""
    if not (_plain(old) and _plain(new)):
        return None
    patch = _diff(old, new)
    if orjson.dumps(patched(old, patch)) != orjson.dumps(new):
        return None  # a key moved: only a whole tree keeps the order
    return patch


def _diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    changed: dict[str, Any] = {}
    for key, value in new.items():
        if key not in old:
            changed[key] = value
        elif old[key] != value or type(old[key]) is not type(value):
            before = old[key]
            changed[key] = _diff(before, value) if _plain(before) and _plain(value) else value
    patch: dict[str, Any] = {MARK: "patch", "set": changed}
    unset = [key for key in old if key not in new]
    if unset:
        patch["unset"] = unset
    return patch


def patched(old: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``old`` with ``patch`` applied (a new tree; ``old`` is not changed)."""
    changed = patch["set"]
    unset = set(patch.get("unset", ()))
    result: dict[str, Any] = {}
    for key, value in old.items():
        if key in unset:
            continue
        if key in changed:
            update = changed[key]
            nested = isinstance(update, dict) and update.get(MARK) == "patch"
            result[key] = patched(value, update) if nested else update
        else:
            result[key] = value
    for key, value in changed.items():
        if key not in old:
            result[key] = value
    return result


def predicted(parent: Any, blobs: dict[str, Any], *, seen: bool = False) -> Any:
    """The checkpoint tree a child of ``parent`` most likely has, given the child's blobs.

    LangGraph's ``put`` hands the new version of every channel a step wrote (``new_versions``,
    stored as the blobs' ``"v"``), so the child's ``channel_versions`` are the parent's updated
    with them, and its ``updated_channels`` are the written channels that hold a value, sorted.
    With ``seen`` (a ``"step"`` patch), ``versions_seen`` too: a node that ran consumed its
    trigger channels (their blobs are ``empty``), and saw the parent's versions of them.
    A guess only: ``diff`` against it records whatever differs, and the reader makes the same
    guess from the same blobs.
    """
    if not _plain(parent):
        return parent
    guess = dict(parent)
    versions = parent.get("channel_versions")
    if _plain(versions):
        guess["channel_versions"] = {
            **versions,
            **{channel: blob["v"] for channel, blob in blobs.items()},
        }
        nodes = parent.get("versions_seen")
        if seen and _plain(nodes):
            consumed = {
                channel: versions[channel]
                for channel, blob in blobs.items()
                if blob.get("empty") and channel in versions
            }
            guess["versions_seen"] = {
                node: channels if node == INTERRUPT else _seen(channels, consumed)
                for node, channels in nodes.items()
            }
    if "updated_channels" in parent:
        guess["updated_channels"] = sorted(
            channel for channel, blob in blobs.items() if not blob.get("empty")
        )
    return guess


def _seen(channels: Any, consumed: dict[str, Any]) -> Any:
    """A node's seen versions, those of the consumed channels it had seen brought forward."""
    if not _plain(channels) or not any(channel in consumed for channel in channels):
        return channels
    return {channel: consumed.get(channel, version) for channel, version in channels.items()}


def is_patch(tree: Any) -> bool:
    """Whether a stored checkpoint (or metadata) tree is a patch, of either kind.

    ``"patch"`` is taken against ``predicted(parent, blobs)``; ``"step"`` against
    ``predicted(parent, blobs, seen=True)``. The kinds differ so that a reader that makes
    only the first guess fails loudly on the second instead of misreading it.
    """
    return isinstance(tree, dict) and tree.get(MARK) in ("patch", "step")


def next_metadata(metadata: Any) -> Any:
    """The metadata tree a checkpoint most likely has, given its base checkpoint's.

    LangGraph's metadata of a superstep is its ``source``, ``step`` and ``parents``: a child
    of the same run has the same, one ``step`` on. A guess only, as ``predicted``.
    """
    if _plain(metadata) and type(metadata.get("step")) is int:
        return {**metadata, "step": metadata["step"] + 1}
    return metadata


def with_fields(tree: Any, fields: dict[str, Any]) -> Any:
    """An extension tree with some constructor keyword arguments replaced.

    The tree is ``{"$lg": "ext", "d": [module, name, kwargs, ...]}``; anything else is returned
    unchanged.
    """
    if not fields or not (isinstance(tree, dict) and tree.get(MARK) == "ext" and "d" in tree):
        return tree
    payload = tree["d"]
    if not (isinstance(payload, list) and len(payload) >= 3 and _plain(payload[2])):
        return tree
    kwargs = {**payload[2], **fields}
    return {**tree, "d": [*payload[:2], kwargs, *payload[3:]]}


def field_changes(written: Any, stored: Any) -> dict[str, Any] | None:
    """The constructor fields that turn extension tree ``written`` into ``stored`` exactly.

    ``None`` when no such change does (another class, other fields, another order).
    """
    if not (isinstance(written, dict) and isinstance(stored, dict)):
        return None
    if written == stored:
        return {}
    if written.get(MARK) != "ext" or stored.get(MARK) != "ext":
        return None
    before, after = written.get("d"), stored.get("d")
    if not (isinstance(before, list) and isinstance(after, list) and len(before) >= 3):
        return None
    if not (_plain(before[2]) and len(after) == len(before) and _plain(after[2])):
        return None
    fields = {key: value for key, value in after[2].items() if before[2].get(key, MARK) != value}
    if orjson.dumps(with_fields(written, fields)) != orjson.dumps(stored):
        return None
    return fields


class KnownList:
    """The last list value a channel was written or read with, for delta detection.

    Only the items that had no ``id`` are checked again: ``add_messages`` gives such an item its
    id in place, and never changes an id once set.
    """

    __slots__ = ("anonymous", "items", "version")

    def __init__(self, version: Any, items: Sequence[Any], previous: KnownList | None = None):
        self.version = version
        self.items = tuple(items)
        start = 0 if previous is None else len(previous.items)
        kept: tuple[int, ...] = () if previous is None else previous.anonymous
        self.anonymous: tuple[int, ...] = (
            *kept,
            *(
                index
                for index in range(start, len(self.items))
                if getattr(self.items[index], "id", None) is None
            ),
        )

    def prefix_of(self, value: list[Any]) -> bool:
        items = self.items
        if len(value) < len(items) or not all(map(operator.is_, value, items)):
            return False
        return all(getattr(items[index], "id", None) is None for index in self.anonymous)
