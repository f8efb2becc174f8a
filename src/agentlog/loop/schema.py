"""JSON schemas for tool arguments, from a function's signature, type hints and docstring.

A pure function of the function object (spec/plugins.md §4.6 needs every tool described to the
model as ``{name, description, parameters}``, ``ToolSchema`` of spec/core.md §2.4): each
parameter becomes a property typed from its annotation, required unless it has a default,
described by its entry in the docstring's Google-style ``Args:`` section.

Example:
    >>> def grep(pattern: str, paths: list[str], limit: int = 20) -> str:
    ...     '''Search files for a regular expression.
    ...
    ...     Args:
    ...         pattern: The expression.
    ...         paths: Files to search.
    ...     '''
    >>> description, parameters = function_schema(grep)
    >>> description
    'Search files for a regular expression.'
    >>> parameters["required"]
    ['pattern', 'paths']
    >>> parameters["properties"]["paths"]
    {'type': 'array', 'items': {'type': 'string'}, 'description': 'Files to search.'}
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, Union, get_args, get_origin, get_type_hints

from agentlog.values import JsonValue

__all__ = ["function_schema", "type_schema"]

_SCALARS: Final[dict[Any, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
_SECTION: Final = re.compile(
    r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$"
)
_ARG_LINE: Final = re.compile(r"^(\*{0,2}\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def function_schema(function: Callable[..., Any]) -> tuple[str, dict[str, JsonValue]]:
    """The description and the parameters schema of ``function``.

    ``*args`` and ``**kwargs`` are not described (a model can only pass named arguments).

    Raises:
        TypeError: for an annotation with no JSON schema (a class that is not a dataclass,
            ``TypedDict`` or ``Enum``, a callable, ...), naming the parameter.
    """
    signature = inspect.signature(function)
    try:
        hints = get_type_hints(function, include_extras=False)
    except (NameError, TypeError) as exc:
        raise TypeError(f"cannot resolve the type hints of {function.__qualname__}: {exc}") from exc
    summary, arg_docs = _parse_docstring(inspect.getdoc(function) or "")
    properties: dict[str, JsonValue] = {}
    required: list[JsonValue] = []
    for name, parameter in signature.parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        try:
            schema = type_schema(hints[name]) if name in hints else {}
        except TypeError as exc:
            raise TypeError(f"parameter {name!r} of {function.__qualname__}: {exc}") from None
        if name in arg_docs:
            schema["description"] = arg_docs[name]
        if parameter.default is parameter.empty:
            required.append(name)
        elif _is_json(parameter.default):
            schema["default"] = parameter.default
        properties[name] = schema
    parameters: dict[str, JsonValue] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    parameters["additionalProperties"] = False
    return summary, parameters


def type_schema(annotation: Any) -> dict[str, JsonValue]:
    """The JSON schema of one annotation (``str``, ``list[int]``, ``Literal["a"]``, ...).

    Raises:
        TypeError: when the annotation has no JSON schema.
    """
    if annotation is Any or annotation is object:
        return {}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        return {"enum": list(args)}
    if origin is Union or origin is types.UnionType:
        options = [type_schema(arg) for arg in args]
        if all(set(option) == {"type"} for option in options):
            return {"type": [option["type"] for option in options]}
        return {"anyOf": list(options)}
    if origin in (list, tuple, set, frozenset, Sequence, typing.Sequence):
        if origin is tuple and args and args[-1] is not Ellipsis:
            return {
                "type": "array",
                "prefixItems": [type_schema(arg) for arg in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        return {"type": "array", "items": type_schema(args[0]) if args else {}}
    if origin in (dict, Mapping, typing.Mapping):
        if args and args[0] is not str:
            raise TypeError(f"object keys must be str, got {args[0]!r}")
        return {"type": "object", "additionalProperties": type_schema(args[1]) if args else {}}
    if annotation in (list, tuple, set, frozenset):
        return {"type": "array"}
    if annotation is dict:
        return {"type": "object"}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum": [member.value for member in annotation]}
    if isinstance(annotation, type) and typing.is_typeddict(annotation):
        return _object_schema(annotation, getattr(annotation, "__required_keys__", frozenset()))
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        required = {
            f.name
            for f in dataclasses.fields(annotation)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        return _object_schema(annotation, required)
    raise TypeError(f"no JSON schema for {annotation!r}")


def _object_schema(cls: type, required: typing.AbstractSet[str]) -> dict[str, JsonValue]:
    hints = get_type_hints(cls)
    schema: dict[str, JsonValue] = {
        "type": "object",
        "properties": {name: type_schema(hint) for name, hint in hints.items()},
    }
    names: list[JsonValue] = [name for name in hints if name in required]
    if names:
        schema["required"] = names
    return schema


def _is_json(value: object) -> bool:
    if value is None or type(value) in (str, bool, int, float):
        return True
    if type(value) in (list, tuple):
        return all(_is_json(item) for item in value)  # type: ignore[attr-defined]  # iterable
    return False


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description (text before the first section) and the ``Args:`` entries."""
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    indent = 0
    for line in doc.splitlines():
        stripped = line.strip()
        header = _SECTION.match(stripped)
        if header and len(line) - len(line.lstrip()) == 0:
            section, current = header.group(1), None
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in ("Args", "Arguments", "Parameters") or not stripped:
            continue
        line_indent = len(line) - len(line.lstrip())
        entry = _ARG_LINE.match(stripped)
        if entry and (current is None or line_indent <= indent):
            current, indent = entry.group(1).lstrip("*"), line_indent
            args[current] = entry.group(2).strip()
        elif current is not None:
            args[current] = f"{args[current]} {stripped}".strip()
    return "\n".join(summary).strip(), args
