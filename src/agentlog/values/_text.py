r"""JSON text for lossless values: ``orjson`` first, exact fallbacks for what it cannot do.

``orjson`` refuses three things the lossless domain allows: strings holding lone surrogates
(``"\ud800"``, which dsh logs contain), nesting deeper than 255 levels when writing, and deeper
than 1024 when reading. The fallbacks here handle those few values exactly (stdlib ``json`` and,
for any depth, an iterative encoder and decoder), so what ``snapshot()`` accepts always has a
text form and reads back equal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

import orjson

from agentlog.errors import NotLosslessJson

__all__ = ["dumps", "loads"]

# The C string scanner behind json.loads; typeshed does not declare it.
scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

_orjson_dumps = orjson.dumps
_orjson_loads = orjson.loads
_EncodeError = orjson.JSONEncodeError
_DecodeError = orjson.JSONDecodeError


def dumps(value: Any) -> bytes:
    """Serialise a lossless JSON value to compact UTF-8 JSON text, keys in insertion order."""
    try:
        return _orjson_dumps(value)
    except _EncodeError:
        return _encode_walk(value).encode("ascii")


def loads(text: bytes | str) -> Any:
    """Parse JSON text into plain Python values (``dict``, ``list``, scalars).

    Raises:
        NotLosslessJson: when the text is not one valid JSON value, or holds ``NaN``,
            ``Infinity`` or a number that overflows a double.
    """
    try:
        return _orjson_loads(text)
    except _DecodeError as exc:
        first_error = str(exc)
    # orjson refuses lone surrogate escapes and deep nesting; the stdlib reads the former and
    # the iterative decoder the latter. Anything refused by both is really malformed.
    source = text.decode("utf-8", "surrogatepass") if isinstance(text, bytes) else text
    try:
        return json.loads(source, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        pass
    except _Overflow as exc:
        raise _unrepresentable(exc) from None
    except ValueError:
        raise _malformed(first_error) from None
    try:
        return _decode_walk(source)
    except _Overflow as exc:
        raise _unrepresentable(exc) from None
    except ValueError as exc:
        raise _malformed(str(exc)) from None


def _malformed(problem: str) -> NotLosslessJson:
    return NotLosslessJson(
        f"invalid JSON text: {problem}", reason=f"is not valid JSON text ({problem})"
    )


def _unrepresentable(overflow: _Overflow) -> NotLosslessJson:
    return NotLosslessJson(
        str(overflow), reason=f"holds {overflow.number} (overflows a double)", well_formed=True
    )


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class _Overflow(ValueError):
    """A number the JSON grammar allows but no double can hold (``1e400``)."""

    def __init__(self, number: str, where: str = "") -> None:
        super().__init__(f"number {number} overflows a double{where}")
        self.number = number


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:
        raise _Overflow(text)
    return value


def _encode_walk(root: Any) -> str:
    """Encode without recursion; non-ASCII characters and lone surrogates are escaped."""
    parts: list[str] = []
    # Work items are values to encode or 1-tuples holding literal text (values are never tuples).
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        t = type(item)
        if t is tuple:
            parts.append(item[0])
        elif isinstance(item, str):
            parts.append(encode_basestring_ascii(item))
        elif item is None:
            parts.append("null")
        elif item is True:
            parts.append("true")
        elif item is False:
            parts.append("false")
        elif isinstance(item, int):
            parts.append(int.__repr__(item))
        elif isinstance(item, float):
            parts.append(float.__repr__(item))
        elif isinstance(item, dict):
            tokens: list[Any] = [("{",)]
            for i, (key, value) in enumerate(item.items()):
                separator = "," if i else ""
                tokens.append((separator + encode_basestring_ascii(key) + ":",))
                tokens.append(value)
            tokens.append(("}",))
            stack.extend(reversed(tokens))
        elif isinstance(item, list):
            tokens = [("[",)]
            for i, value in enumerate(item):
                if i:
                    tokens.append((",",))
                tokens.append(value)
            tokens.append(("]",))
            stack.extend(reversed(tokens))
        else:
            raise TypeError(f"{t.__name__} is not a JSON type")
    return "".join(parts)


_WS = re.compile(r"[ \t\n\r]*")


def _skip(s: str, pos: int) -> int:
    """Position after the whitespace at ``pos`` (the pattern always matches, maybe empty)."""
    match = _WS.match(s, pos)
    assert match is not None
    return match.end()


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


def _decode_walk(s: str) -> Any:
    """Decode without recursion (only reached for values nested beyond the C parsers' limit)."""
    pos = _skip(s, 0)
    # A frame is [container, pending key]; values are attached to the innermost frame.
    stack: list[list[Any]] = []
    while True:
        value: Any
        ch = s[pos : pos + 1]
        if ch == "{":
            pos = _skip(s, pos + 1)
            if s[pos : pos + 1] == "}":
                value, pos = {}, pos + 1
            else:
                key, pos = _member_key(s, pos)
                stack.append([{}, key])
                continue
        elif ch == "[":
            pos = _skip(s, pos + 1)
            if s[pos : pos + 1] == "]":
                value, pos = [], pos + 1
            else:
                stack.append([[], None])
                continue
        elif ch == '"':
            value, pos = scanstring(s, pos + 1)
        elif (number := _NUMBER.match(s, pos)) is not None:
            text = number.group()
            value = float(text) if number.group(1) or number.group(2) else int(text)
            if isinstance(value, float) and value - value != 0.0:
                raise _Overflow(text, f" at char {pos}")
            pos = number.end()
        else:
            for literal, literal_value in _LITERALS.items():
                if s.startswith(literal, pos):
                    value, pos = literal_value, pos + len(literal)
                    break
            else:
                raise ValueError(f"expected a JSON value at char {pos}")
        # Attach the value, closing every container it completes.
        while True:
            pos = _skip(s, pos)
            if not stack:
                if pos != len(s):
                    raise ValueError(f"extra data at char {pos}")
                return value
            frame = stack[-1]
            container = frame[0]
            if type(container) is dict:
                container[frame[1]] = value
            else:
                container.append(value)
            ch = s[pos : pos + 1]
            if ch == ",":
                pos = _skip(s, pos + 1)
                if type(container) is dict:
                    frame[1], pos = _member_key(s, pos)
                break
            if ch == ("}" if type(container) is dict else "]"):
                stack.pop()
                value, pos = container, pos + 1
                continue
            raise ValueError(f"expected ',' or a closing bracket at char {pos}")


def _member_key(s: str, pos: int) -> tuple[str, int]:
    if s[pos : pos + 1] != '"':
        raise ValueError(f"expected an object key at char {pos}")
    key, pos = scanstring(s, pos + 1)
    pos = _skip(s, pos)
    if s[pos : pos + 1] != ":":
        raise ValueError(f"expected ':' at char {pos}")
    return key, _skip(s, pos + 1)
