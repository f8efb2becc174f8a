"""LangGraph serde output as agentlog JSON: msgpack transcoded losslessly, long strings shared.

The checkpointer serializes every value with LangGraph's own serde (``serde.dumps_typed``, by
default ``JsonPlusSerializer``: msgpack, never pickle) and stores the result in an agentlog
event, which holds JSON only. Base64 would cost a third more bytes and hide the content from
every agentlog tool, so msgpack is *transcoded*: decoded without interpreting its extension
types, written as JSON, and re-encoded byte for byte on read, where the serde's own
``loads_typed`` turns it back into objects (its allowlists apply as usual). What JSON cannot
hold is escaped in an object whose key ``"$lg"`` names the kind:

* ``{"$lg": "ext", "c": code, "d": tree}`` — an extension type (LangGraph's pydantic models,
  datetimes, ...), its payload transcoded in turn (``"b"``: base64, when it is not msgpack);
* ``{"$lg": "bin", "b": base64}`` — bytes;
* ``{"$lg": "map", "i": [[key, value], ...]}`` — a map with a key that is not a string (or is
  ``"$lg"`` itself);
* ``{"$lg": "int", "v": "digits"}`` / ``{"$lg": "float", "v": "nan"}`` — numbers outside
  agentlog's lossless JSON domain;
* ``{"$lg": "raw", "t": type, "b": base64}`` — a serde result kept as bytes (another type than
  msgpack, or msgpack whose transcoding would not reproduce it exactly: the check is done on
  every value, so transcoding never changes what the serde reads back);
* ``{"$lg": "s", "r": [seq, k]}`` — a long string already stored in this thread: the ``k``-th
  long string of the value trees of event ``seq`` (see ``long_strings``). A message's content
  reaches the checkpointer twice (as a task's pending write, then in the channel), so sharing
  long strings keeps a thread's bytes near the raw size of its messages.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Iterator
from typing import Any, Final

import ormsgpack

from agentlog.values import MAX_SAFE_INTEGER

__all__ = [
    "LONG_STRING",
    "decode_tree",
    "encode_typed",
    "resolve_strings",
    "long_strings",
    "share_strings",
]

MARK: Final = "$lg"
LONG_STRING: Final = 128
"""Strings at least this long are shared between the events of a thread."""

_OPTION: Final = ormsgpack.OPT_NON_STR_KEYS


class _Ext:
    """An extension value read without interpreting it."""

    __slots__ = ("code", "data")

    def __init__(self, code: int, data: bytes) -> None:
        self.code = code
        self.data = data


def _unpack(data: bytes) -> Any:
    return ormsgpack.unpackb(data, ext_hook=_Ext, option=_OPTION)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def encode_typed(typed: tuple[str, bytes]) -> Any:
    """The JSON tree of one ``serde.dumps_typed`` result (exact: ``decode_tree`` inverts it)."""
    type_, data = typed
    if type_ == "null" and not data:
        return None  # read back as msgpack nil, which the serde also loads as None
    if type_ == "msgpack":
        try:
            tree = _tree(_unpack(data))
            if _pack(tree, _no_strings) == data:
                return tree
        except (ormsgpack.MsgpackDecodeError, ormsgpack.MsgpackEncodeError, TypeError, ValueError):
            pass
    return {MARK: "raw", "t": type_, "b": _b64(bytes(data))}


def _tree(value: Any) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        return {MARK: "int", "v": str(value)}
    if isinstance(value, float):
        if math.isfinite(value) and not (value == 0.0 and math.copysign(1.0, value) < 0):
            return value
        return {MARK: "float", "v": repr(value)}
    if isinstance(value, list):
        return [_tree(item) for item in value]
    if isinstance(value, dict):
        if MARK not in value and all(type(key) is str for key in value):
            return {key: _tree(item) for key, item in value.items()}
        return {MARK: "map", "i": [[_tree(key), _tree(item)] for key, item in value.items()]}
    if isinstance(value, bytes):
        return {MARK: "bin", "b": _b64(value)}
    if isinstance(value, _Ext):
        try:
            return {MARK: "ext", "c": value.code, "d": _tree(_unpack(value.data))}
        except ormsgpack.MsgpackDecodeError:
            return {MARK: "ext", "c": value.code, "b": _b64(value.data)}
    raise TypeError(f"unexpected msgpack value {type(value).__name__}")


Resolve = Callable[[int, int], str]
"""Looks up the ``k``-th long string of event ``seq`` of the thread."""


def _no_strings(seq: int, index: int) -> str:
    raise ValueError(f"unresolved shared string [{seq}, {index}]")


def decode_tree(tree: Any, resolve: Resolve) -> tuple[str, bytes]:
    """The ``(type, bytes)`` pair a tree of ``encode_typed`` stands for, for ``loads_typed``."""
    if isinstance(tree, dict) and tree.get(MARK) == "raw":
        return str(tree["t"]), base64.b64decode(_text(tree["b"], resolve))
    return "msgpack", _pack(tree, resolve)


def _pack(tree: Any, resolve: Resolve) -> bytes:
    return ormsgpack.packb(_value(tree, resolve), option=_OPTION)


def _text(node: Any, resolve: Resolve) -> str:
    if isinstance(node, dict):
        seq, index = node["r"]
        return resolve(seq, index)
    return str(node)


def _value(node: Any, resolve: Resolve) -> Any:
    if isinstance(node, list):
        return [_value(item, resolve) for item in node]
    if not isinstance(node, dict):
        return node
    kind = node.get(MARK)
    if kind is None:
        return {key: _value(item, resolve) for key, item in node.items()}
    if kind == "s":
        return _text(node, resolve)
    if kind == "ext":
        if "b" in node:
            return ormsgpack.Ext(node["c"], base64.b64decode(_text(node["b"], resolve)))
        return ormsgpack.Ext(node["c"], _pack(node["d"], resolve))
    if kind == "bin":
        return base64.b64decode(_text(node["b"], resolve))
    if kind == "map":
        return {_value(key, resolve): _value(item, resolve) for key, item in node["i"]}
    if kind == "int":
        return int(node["v"])
    if kind == "float":
        return float(node["v"])
    raise ValueError(f"unknown escape {kind!r} in a stored LangGraph value")


# --- shared long strings ------------------------------------------------------------------


def long_strings(trees: Iterator[Any]) -> list[str]:
    """The long strings stored inline in ``trees``, in depth-first order (refs excluded).

    The order is the address space of ``{"$lg": "s", "r": [seq, k]}``: writer and reader walk
    the same value trees of an event the same way.
    """
    found: list[str] = []
    stack = list(trees)
    stack.reverse()
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if len(node) >= LONG_STRING:
                found.append(node)
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            stack.extend(reversed(list(node.values())))
    return found


def resolve_strings(tree: Any, resolve: Resolve) -> Any:
    """``tree`` with every shared-string reference replaced by its string."""
    if isinstance(tree, list):
        return [resolve_strings(item, resolve) for item in tree]
    if isinstance(tree, dict):
        if tree.get(MARK) == "s":
            return _text(tree, resolve)
        return {key: resolve_strings(item, resolve) for key, item in tree.items()}
    return tree


def share_strings(tree: Any, table: dict[str, tuple[int, int]]) -> Any:
    """``tree`` with every long string already in ``table`` replaced by a reference to it."""
    if isinstance(tree, str):
        at = table.get(tree) if len(tree) >= LONG_STRING else None
        return tree if at is None else {MARK: "s", "r": list(at)}
    if isinstance(tree, list):
        return [share_strings(item, table) for item in tree]
    if isinstance(tree, dict):
        return {key: share_strings(item, table) for key, item in tree.items()}
    return tree
