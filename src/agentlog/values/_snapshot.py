"""The lossless-JSON snapshot: validate and deep-freeze in one pass (spec/core.md §1).

Two walkers share one rule set. The recursive fast path handles ordinary values at near-C
speed; anything it cannot finish (a rejected value, or a ``RecursionError`` from a very deep
or cyclic value) is redone by the iterative walker, which has no depth limit, detects cycles
through the ancestor chain and names the offending JSON path in its error.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from functools import partial
from typing import Any

from agentlog.errors import NotLosslessJson
from agentlog.values._frozen import FrozenDict, FrozenList, new_frozen_dict, new_frozen_list

__all__ = [
    "MAX_SAFE_INTEGER",
    "c_snapshot",
    "freeze_owned",
    "is_frozen",
    "settle_event_record",
    "python_snapshot",
    "retype",
    "share_strings",
    "snapshot",
    "thaw_walk",
    "untrack",
]

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer a JSON reader built on IEEE doubles keeps exactly (JS ``Number``)."""

_MIN = -MAX_SAFE_INTEGER
_MAX = MAX_SAFE_INTEGER
_copysign = math.copysign


class _Reject(Exception):
    """Internal signal of the fast paths: redo with the diagnosing walker."""


def is_frozen(value: object) -> bool:
    """Tell whether ``value`` is an agentlog frozen container (validated, immutable JSON)."""
    return isinstance(value, (FrozenDict, FrozenList))


def snapshot(value: object) -> Any:
    """Validate ``value`` as lossless JSON and return a deeply immutable copy of it.

    Implements spec/core.md §1 with the Python mapping of §1.4 and DESIGN decision 3: accepts
    ``None``, ``bool``, ``str``, ``int`` within ±(2**53-1), finite ``float`` other than
    ``-0.0``, ``list`` and ``dict`` with ``str`` keys; refuses everything else, including
    tuples, sets, bytes, subclasses and cycles. Shared sub-objects become independent copies.
    Already-frozen agentlog values are returned as they are, without a copy.

    Raises:
        NotLosslessJson: naming the JSON path of the first offending value.
    """
    try:
        return _fast_snapshot(value)
    except (_Reject, RecursionError):
        return _snap_diagnosing(value)


def _snap(v: Any) -> Any:
    t = type(v)
    if t is str or t is bool or v is None:
        return v
    if t is dict:
        out = {}
        for k, x in v.items():
            if type(k) is not str:
                raise _Reject
            tx = type(x)
            if tx is str or tx is bool or x is None or (tx is int and _MIN <= x <= _MAX):
                out[k] = x
            else:
                out[k] = _snap(x)
        return new_frozen_dict(out)
    if t is list:
        return new_frozen_list([x if type(x) is str else _snap(x) for x in v])
    if t is int:
        if _MIN <= v <= _MAX:
            return v
        raise _Reject
    if t is float:
        if v - v == 0.0 and (v != 0.0 or _copysign(1.0, v) > 0.0):
            return v
        raise _Reject
    if isinstance(v, (FrozenDict, FrozenList)):
        return v
    raise _Reject


def _load_speedups() -> Any:
    """The C accelerator module, unless it was not built or ``AGENTLOG_PURE_PYTHON`` is set."""
    if os.environ.get("AGENTLOG_PURE_PYTHON"):
        return None
    try:
        from agentlog.values import _speedups  # type: ignore[attr-defined]  # C, optional
    except ImportError:
        return None
    _speedups.configure(FrozenDict, FrozenList, _Reject)
    return _speedups


_speedups = _load_speedups()
c_snapshot: Callable[[Any], Any] | None = None if _speedups is None else _speedups.snapshot
"""The compiled fast path (``None`` when unavailable); same results as ``python_snapshot``."""
python_snapshot = _snap
"""The pure-Python fast path."""
_fast_snapshot = c_snapshot or python_snapshot


def freeze_owned(value: Any) -> Any:
    """``snapshot()`` for a value nobody else holds (fresh from a parser): no copy if it can.

    With the C accelerator, the value's own dicts and lists become frozen in place after their
    contents validated; otherwise, or when something needs diagnosing, this is ``snapshot()``
    (which keeps whatever was already frozen). Never pass a caller's object: it is changed.

    Raises:
        NotLosslessJson: as ``snapshot()``.
    """
    if _speedups is not None:
        try:
            return _speedups.freeze_in_place(value)
        except (_Reject, RecursionError):
            pass
    return snapshot(value)


def _share_nothing(record: Any) -> None:
    """``share_strings`` without the accelerator: nothing to do."""


share_strings: Callable[[Any], None] = (
    _share_nothing if _speedups is None else _speedups.share_strings
)
"""Replace short string values of a freshly parsed record by equal ones seen before.

A parser makes a new ``str`` for each ``"text"``, ``"assistant"`` or model name of a log, so a
loaded session would hold tens of thousands of equal copies; the stores' readers call this on
each record right after parsing, so the parser's next record reuses the memory (the
accelerator's ``freeze_owned`` and ``settle_event_record`` share the same way). Only the C
accelerator does it (a bounded table of recent strings; ``str`` is immutable, so nothing
observable changes); without it this does nothing. Never pass a caller's object: its dicts and
lists are changed in place.
"""


def _untrack_nothing(value: Any) -> Any:
    """``untrack`` without the accelerator: the collector keeps tracking ``value``."""
    return value


untrack: Callable[[Any], Any] = _untrack_nothing if _speedups is None else _speedups.untrack
"""Take a frozen container (an ``Event`` too) out of the cyclic garbage collector's lists.

Frozen values are immutable and hold only scalars and frozen values built before them, so no
reference cycle can pass through one: the collector would walk a long session's whole log at
every full collection and find nothing (DESIGN.md, Performance targets: no collector stalls).
Reference counting still frees them. The accelerator's ``snapshot`` and ``freeze_owned``
untrack what they build; this serves frozen containers built elsewhere (events). Without the
accelerator it does nothing (Python has no way to untrack an object), which changes no value.
"""


def _settle_nothing(
    record: dict[str, Any], subtype: type[FrozenDict], rule_types: frozenset[str]
) -> FrozenDict | None:
    """``settle_event_record`` without the accelerator: every record takes the general path."""
    return None


settle_event_record: Callable[
    [dict[str, Any], type[FrozenDict], frozenset[str]], FrozenDict | None
] = _settle_nothing if _speedups is None else _speedups.settle_event_record
"""A freshly parsed event record checked and frozen in place, if the accelerator can.

``settle_event_record(record, subtype, rule_types)`` is the stores' readers' one C call per
record of a current-format log: the envelope of spec/core.md §2.1 (only envelope keys, a ``str``
type, ``int`` seq and time in range, ``data`` present, ``ignorable`` absent or ``true``,
citations as plain ints), the lossless domain of every value (short strings shared as
``share_strings`` does, the type interned), and the per-type data rules of the message types
when their data is plainly valid. Returns the record as a ``subtype`` when every check passed;
as a ``FrozenDict`` when the types in ``rule_types`` still need the Python rules (which name
what is wrong); ``None`` when the accelerator is missing or the general path must read the
record. What was frozen by then stays frozen and valid. Never pass a caller's object: it is
changed.
"""


def _rules_not_known(event_type: str, data: Any) -> bool:
    """``message_rules_hold`` without the accelerator: the Python rules always run."""
    return False


message_rules_hold: Callable[[str, Any], bool] = (
    _rules_not_known if _speedups is None else _speedups.message_rules_hold
)
"""Whether the accelerator finds a message event's data plainly valid under its rules.

``True`` only when every per-type rule of the user, assistant, tool-result and system message
types holds (spec/core.md §4 step 7 and §9.1 step 4), so the Python rules
(``agentlog.events.check_event``) would pass it; ``False`` means "run them": they name what is
wrong, or accept what this stricter test leaves to them (an integral float turn, a developer
message). Always ``False`` without the accelerator.
"""


new_event_record: Callable[..., Any] | None = (
    None if _speedups is None else _speedups.new_event_record
)
"""The accelerator's event construction, or ``None`` without it.

``new_event_record(subtype, type, seq, time, data, sources, op, ignorable)`` builds a
``subtype`` (a slotless ``FrozenDict`` subclass: ``agentlog.events.Event``) with the keys
``type, seq, time, data``, then ``sourceEventSeqs`` and ``surfaceOp`` unless ``None``, then
``ignorable: true`` when ``ignorable`` is true, untracked as ``untrack`` does: what
``agentlog.events.new_event`` builds, in one C call (the append's hot path).
"""


def _python_settled_types(records: list[Any], subtype: type[FrozenDict]) -> set[Any] | None:
    if not all(type(record) is subtype for record in records):
        return None
    return {record["type"] for record in records}


settled_types: Callable[[list[Any], type[FrozenDict]], set[Any] | None] = (
    _python_settled_types if _speedups is None else _speedups.settled_types
)
"""The set of ``"type"`` values of ``records`` when every one is an exact ``subtype``.

``None`` as soon as one record is not (a record a reader left for the rebuild to diagnose).
One pass over a loaded log, in C with the accelerator: on a long log each pass costs a cache
miss per event, so the rebuild makes as few as it can.
"""


def retype(value: FrozenDict, subtype: type[FrozenDict]) -> FrozenDict:
    """``value`` as an instance of ``subtype``, a slotless ``FrozenDict`` subclass (``Event``).

    In place when ``value`` is an exact ``FrozenDict`` and the accelerator is there (only for
    values nobody else holds), else as a shallow copy.
    """
    if _speedups is not None and type(value) is FrozenDict:
        return _speedups.retype(value, subtype)  # type: ignore[no-any-return]  # a C function
    copy: FrozenDict = dict.__new__(subtype)
    dict.update(copy, value)
    return copy


_DESCEND = object()


def _leaf(v: Any) -> Any:
    """Return a valid scalar or frozen value as is, ``_DESCEND`` for a container to walk.

    A refusal's reason says what the value is and why it has no JSON form, so that after the
    value's JSON path it reads as one phrase: ``$.x is -0.0 (no JSON form)``.
    """
    t = type(v)
    if t is str or t is bool or v is None:
        return v
    if t is int:
        if _MIN <= v <= _MAX:
            return v
        raise _Invalid(f"is {v} (outside the safe integer range ±(2**53-1))")
    if t is float:
        if v != v or v - v != 0.0:
            raise _Invalid(f"is {v!r} (not a finite number)")
        if v == 0.0 and _copysign(1.0, v) < 0.0:
            raise _Invalid("is -0.0 (no JSON form)")
        return v
    if t is dict or t is list:
        return _DESCEND
    if isinstance(v, (FrozenDict, FrozenList)):
        return v
    if isinstance(v, (dict, list)):
        base = "dict" if isinstance(v, dict) else "list"
        raise _Invalid(f"is of type {t.__name__} (a {base} subclass, not plain JSON)")
    raise _Invalid(f"is of type {t.__name__} (not a JSON type)")


class _Invalid(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def json_path(keys: list[Any]) -> str:
    """Render a list of keys and indexes as a JSONPath such as ``$.content[2].text``."""
    parts = ["$"]
    for key in keys:
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif key.isidentifier():
            parts.append(f".{key}")
        else:
            parts.append(f"[{key!r}]")
    return "".join(parts)


def _snap_diagnosing(root: Any) -> Any:
    """Iterative snapshot: no depth limit, cycle detection, errors that name the path."""
    keys: list[Any] = []
    try:
        first = _leaf(root)
        if first is not _DESCEND:
            return first
        ancestors = {id(root)}
        # A frame is [source, plain output, item iterator]; keys[i] is frame i+1's key.
        stack: list[list[Any]] = [_open(root)]
        while True:
            source, out, items = stack[-1]
            is_dict = type(source) is dict
            for key, item in items:
                if is_dict and type(key) is not str:
                    raise _Invalid(
                        f"has key {key!r} of type {type(key).__name__} (JSON object keys are "
                        "strings)"
                    )
                try:
                    value = _leaf(item)
                except _Invalid:
                    keys.append(key)
                    raise
                if value is _DESCEND:
                    keys.append(key)
                    if id(item) in ancestors:
                        raise _Invalid("refers back to an enclosing value (a cycle)")
                    ancestors.add(id(item))
                    stack.append(_open(item))
                    break
                if is_dict:
                    out[key] = value
                else:
                    out.append(value)
            else:
                stack.pop()
                ancestors.discard(id(source))
                frozen = new_frozen_dict(out) if is_dict else new_frozen_list(out)
                if not stack:
                    return frozen
                parent_out = stack[-1][1]
                key = keys.pop()
                if type(parent_out) is dict:
                    parent_out[key] = frozen
                else:
                    parent_out.append(frozen)
    except _Invalid as invalid:
        path = json_path(keys)
        raise NotLosslessJson(
            f"value is not lossless JSON: {path} {invalid.reason}",
            path=path,
            reason=invalid.reason,
        ) from None


def _open(container: Any) -> list[Any]:
    if type(container) is dict:
        return [container, {}, iter(container.items())]
    return [container, [], iter(enumerate(container))]


def thaw_walk(root: Any) -> Any:
    """Deep plain copy of a JSON value of any depth (the slow path of ``thaw``)."""
    if not isinstance(root, (dict, list)):
        return root
    result: Any = {} if isinstance(root, dict) else []
    stack: list[tuple[Any, Any]] = [(root, result)]
    while stack:
        source, out = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(item, (dict, list)):
                copy: Any = {} if isinstance(item, dict) else []
                stack.append((item, copy))
                item = copy
            if isinstance(out, dict):
                out[key] = item
            else:
                out.append(item)
    return result


snapshot_fast: Callable[[object], Any] = (
    snapshot if _speedups is None else partial(_speedups.snapshot_or, _snap_diagnosing)
)
"""``snapshot`` in one C call where the accelerator is built: same results, same errors."""
