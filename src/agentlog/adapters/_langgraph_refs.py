"""References to objects a LangGraph thread stored recently, so that each is stored once.

A message reaches the checkpointer more than once: as a task's pending write, then in the
channel value of the next checkpoint — or the other way round, since LangGraph stores a task's
writes in a background thread — and an input message also sits in the ``__start__`` channel.
``StoredObjects`` keeps, for the events of the last few checkpoints, every object the serde
stored as an extension type (a message, a model) with where its tree is in the event's data; an
object stored again becomes ``{"$lg": "at", "r": [seq, key, ...], "set": {...}}``: that path
plus the constructor fields changed since (``add_messages`` gives a message its ``id`` in
place), used only when those rebuild the new tree exactly. ``resolved`` follows the
references back.

Most objects are not stored again but are new objects of a class the thread stored before — a
new message of a conversation. Such an object is a reference to the last one of its shape (the
same class and constructor keywords, stored whole) with the fields that differ: a message's
content and id rather than its class path and every default field again. That is the same
``"at"`` reference; it names a whole tree, so following one never goes further than that.

Paths are stored short: into a task's write, ``[seq, "writes", k, 2, ...]`` as ``[seq, k,
...]``; into a list item of a checkpoint, ``[seq, "blobs", channel, "items", i, ...]`` as
``[seq, channel, i, ...]`` (not for a channel named ``"writes"``); into a channel value,
``[seq, "blobs", channel, "value", key, ...]`` as ``[seq, channel, key, ...]`` (not for a
channel named ``"blobs"`` or ``"writes"``, nor when ``key`` is an int). A full path starts
with ``"blobs"`` then a string, or ``"writes"`` then an int, so the forms never meet.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Final

import orjson

from agentlog.adapters._langgraph_codec import LONG_STRING, Resolve, resolve_strings
from agentlog.adapters._langgraph_delta import field_changes, with_fields

__all__ = ["GENERATIONS", "SHAPES", "StoredObjects", "resolved"]

GENERATIONS: Final = 4
"""Objects stored by the last this many checkpoints (and the writes between them) are
referred to when stored again: LangGraph's writes may reach the checkpointer after the next
checkpoint or two that contain them."""
SHAPES: Final = 256
"""Templates kept (one per shape, the least recently stored forgotten beyond): a thread holds
a few message classes, while arbitrary models could make a shape of every object."""


def _same_keys(value: dict[Any, Any], tree: Any) -> bool:
    """Whether ``tree`` is the plain JSON object the serde made of dict ``value``, key by key."""
    return (
        isinstance(tree, dict)
        and "$lg" not in tree
        and len(tree) == len(value)
        and all(type(key) is str and key in tree for key in value)
    )


def _short(path: list[Any]) -> list[Any]:
    """A path in its short form, when it has one (see the module docstring)."""
    if len(path) >= 4 and path[1] == "writes" and type(path[2]) is int and path[3] == 2:
        return [path[0], path[2], *path[4:]]
    if (
        len(path) >= 5
        and path[1] == "blobs"
        and path[2] != "writes"
        and path[3] == "items"
        and type(path[4]) is int
    ):
        return [path[0], path[2], *path[4:]]
    if (
        len(path) >= 4
        and path[1] == "blobs"
        and path[2] not in ("blobs", "writes")
        and path[3] == "value"
        and not (len(path) > 4 and type(path[4]) is int)
    ):
        return [path[0], path[2], *path[4:]]
    return path


class _Stored:
    """A serialized object stored recently."""

    __slots__ = ("path", "tree", "value")

    def __init__(self, value: Any, tree: Any, path: list[Any]):
        self.value = value  # held so that its id() is not reused while it is looked up
        self.tree = tree  # the serde tree it had when stored (before sharing)
        self.path = path  # [seq, key, ...]: where in that event's data it is


def _shape(tree: Any) -> bytes | None:
    """What a tree of the same shape shares with ``tree`` (class, keywords); ``None``: no ext."""
    if not (isinstance(tree, dict) and tree.get("$lg") == "ext"):
        return None
    payload = tree.get("d")
    if not (isinstance(payload, list) and len(payload) >= 3 and isinstance(payload[2], dict)):
        return None
    return orjson.dumps([tree["c"], payload[:2], list(payload[2]), payload[3:]])


class StoredObjects:
    """The objects a thread stored recently, by identity.

    Args:
        share: Turns a tree into the one to store (long strings shared with earlier events).
    """

    def __init__(self, share: Callable[[Any], Any]) -> None:
        self._share = share
        self._generations: deque[dict[int, _Stored]] = deque([{}], maxlen=GENERATIONS)
        self._templates: dict[bytes, _Stored] = {}

    def refer(self, value: Any, tree: Any) -> Any:
        """``tree`` (of ``value``) to store, objects stored recently replaced by references."""
        key = id(value)
        found = next((known[key] for known in self._generations if key in known), None)
        if found is not None and found.value is value:
            fields = field_changes(found.tree, tree)
            if fields is not None:
                ref: dict[str, Any] = {"$lg": "at", "r": _short(found.path)}
                if fields:
                    ref["set"] = self._share(fields)
                return ref
        if type(value) is list and isinstance(tree, list) and len(tree) == len(value):
            return [self.refer(item, node) for item, node in zip(value, tree, strict=True)]
        if type(value) is dict and _same_keys(value, tree):
            return {key: self.refer(value[key], node) for key, node in tree.items()}
        whole = self._share(tree)
        shape = _shape(tree)
        template = None if shape is None else self._templates.get(shape)
        if template is not None:
            fields = field_changes(template.tree, tree)
            if fields is not None:
                like: dict[str, Any] = {"$lg": "at", "r": _short(template.path)}
                if fields:
                    like["set"] = self._share(fields)
                if len(orjson.dumps(like)) < len(orjson.dumps(whole)):
                    return like
        return whole

    def remember(self, value: Any, tree: Any, stored: Any, path: list[Any]) -> None:
        """Keep the objects of ``value`` (stored as ``stored`` at ``path``: ``[seq, key, ...]``).

        Only those the serde stored as extension types (messages, models): other values are
        small or shared as long strings already. One stored whole is also the template of its
        shape from now on.
        """
        if isinstance(tree, dict) and tree.get("$lg") == "ext":
            # A long key in the path would be a shared string in the stored data, not a key.
            if all(not isinstance(key, str) or len(key) < LONG_STRING for key in path):
                known = self._generations[0][id(value)] = _Stored(value, tree, path)
                shape = _shape(tree)
                if shape is not None and isinstance(stored, dict) and stored.get("$lg") == "ext":
                    self._templates.pop(shape, None)
                    self._templates[shape] = known
                    if len(self._templates) > SHAPES:
                        del self._templates[next(iter(self._templates))]
        elif type(value) is list and isinstance(tree, list) and len(tree) == len(value):
            parts = stored if isinstance(stored, list) and len(stored) == len(tree) else None
            for index, item in enumerate(value):
                part = None if parts is None else parts[index]
                self.remember(item, tree[index], part, [*path, index])
        elif type(value) is dict and _same_keys(value, tree):
            plain = isinstance(stored, dict) and "$lg" not in stored
            for key, item in value.items():
                part = stored.get(key) if plain else None
                self.remember(item, tree[key], part, [*path, key])

    def next_generation(self) -> None:
        """Start the objects of a new checkpoint; those of the oldest one are forgotten."""
        self._generations.appendleft({})


def resolved(tree: Any, data_at: Callable[[int], Any], string: Resolve) -> Any:
    """``tree`` with every reference replaced by the tree it names.

    ``data_at(seq)`` is the data of event ``seq``; ``string`` resolves the shared strings of
    changed fields.
    """
    if isinstance(tree, list):
        return [resolved(item, data_at, string) for item in tree]
    if not isinstance(tree, dict):
        return tree
    kind = tree.get("$lg")
    if kind == "at":
        seq, *path = tree["r"]
        target = data_at(seq)
        if path and type(path[0]) is int:  # a write's value, [seq, k, ...] (see ``_short``)
            target = target["writes"][path[0]][2]
            path = path[1:]
        elif len(path) >= 2 and type(path[1]) is int and path[0] != "writes":
            target = target["blobs"][path[0]]["items"]  # a list item, [seq, channel, i, ...]
            path = path[1:]
        elif path and path[0] not in ("blobs", "writes"):
            target = target["blobs"][path[0]]["value"]  # a value, [seq, channel, key, ...]
            path = path[1:]
        for key in path:
            target = target[key]
        found = resolved(target, data_at, string)
        fields = tree.get("set")
        return with_fields(found, resolve_strings(fields, string)) if fields else found
    if kind is None:
        return {key: resolved(item, data_at, string) for key, item in tree.items()}
    return tree  # an escape of the codec: holds no references
