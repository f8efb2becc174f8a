"""Lossless JSON values: snapshot and deep freeze, thaw, equality, text (spec/core.md §1).

Everything agentlog stores is a *lossless JSON value* (DESIGN decision 3). ``snapshot()`` is the
single gate into that domain: it validates and deep-freezes in one pass; the frozen containers
it builds are shared freely afterwards and never copied again (DESIGN decision 4).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, TypeAlias

import orjson

from agentlog.values._frozen import FrozenDict, FrozenList
from agentlog.values._snapshot import (
    MAX_SAFE_INTEGER,
    freeze_owned,
    is_frozen,
    json_path,
    message_rules_hold,
    new_event_record,
    retype,
    settle_event_record,
    settled_types,
    share_strings,
    snapshot,
    snapshot_fast,
    thaw_walk,
    untrack,
)
from agentlog.values._text import dumps, loads

__all__ = [
    "MAX_SAFE_INTEGER",
    "FrozenDict",
    "FrozenList",
    "JsonValue",
    "dumps",
    "freeze_owned",
    "is_frozen",
    "is_safe_integer",
    "is_seq",
    "json_equal",
    "js_text",
    "json_path",
    "loads",
    "message_rules_hold",
    "new_event_record",
    "retype",
    "settle_event_record",
    "settled_types",
    "share_strings",
    "snapshot",
    "snapshot_fast",
    "thaw",
    "untrack",
]

JsonValue: TypeAlias = Any
"""A lossless JSON value: None, bool, str, int, float, list or dict of such values.

Spelled ``Any`` because a precise recursive alias forces casts at every read of nested data;
the domain is enforced at run time by ``snapshot()``.
"""


def thaw(value: JsonValue) -> JsonValue:
    """Return a deep, plain, mutable copy (``dict``/``list``) of a JSON value."""
    if not isinstance(value, (dict, list)):
        return value
    try:
        return orjson.loads(orjson.dumps(value))
    except (orjson.JSONEncodeError, orjson.JSONDecodeError):
        return thaw_walk(value)


def is_safe_integer(value: object) -> bool:
    """Tell whether ``value`` is a JSON safe integer: integral, within ±(2**53-1), not ``-0``.

    Implements the "safe integer" of spec/core.md §1.4. A ``bool`` never counts as a number; an
    integral ``float`` such as ``1.0`` (JSON written elsewhere) does.
    """
    t = type(value)
    if t is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER  # type: ignore[operator]  # t is int
    if t is float:
        v: float = value  # type: ignore[assignment]  # t is float
        return (
            v.is_integer()
            and -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER
            and (v != 0.0 or math.copysign(1.0, v) > 0.0)
        )
    return False


def is_seq(value: object) -> bool:
    """Tell whether ``value`` can be a seq: a non-negative safe integer (spec/core.md §2.1)."""
    return is_safe_integer(value) and value >= 0  # type: ignore[operator]  # a number here


def json_equal(a: JsonValue, b: JsonValue) -> bool:
    """JSON equality: key order is irrelevant, ``1 == 1.0``, but ``true`` is never ``1``.

    Python's ``==`` conflates ``True`` with ``1``; JSON does not, so the walk compares the
    bool-ness of every scalar pair. Iterative, so any depth is fine.
    """
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, dict):
            if not isinstance(y, dict) or len(x) != len(y):
                return False
            for key, value in x.items():
                if key not in y:
                    return False
                stack.append((value, y[key]))
        elif isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(y, (dict, list)) or (type(x) is bool) != (type(y) is bool) or x != y:
            return False
    return True


def js_text(value: object) -> str:
    """Render a value the way a JavaScript template literal would, for catalogue texts.

    Error texts of the spec interpolate values with JS semantics (``${x}``): ``null``,
    ``true``, ``1`` for ``1.0``, ``[object Object]``; a missing value prints ``undefined``.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, int):
        return str(value) if abs(value) <= MAX_SAFE_INTEGER else _js_number(float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join("" if item is None else js_text(item) for item in value)
    return "undefined"


def _js_number(value: float) -> str:
    """``Number.prototype.toString()`` of a double (ECMA-262 Number::toString, radix 10)."""
    if value != value:
        return "NaN"
    if value - value != 0.0:
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "0"
    # The shortest round-trip digits (what repr() prints), as value = 0.<digits> x 10**n.
    shortest = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, shortest.digits))
    k = len(digits)
    n = int(shortest.exponent) + k
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        text = (
            digits[0] + (f".{digits[1:]}" if k > 1 else "") + f"e{'+' if e >= 0 else '-'}{abs(e)}"
        )
    return ("-" if value < 0 else "") + text
