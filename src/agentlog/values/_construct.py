"""Objects built from parsed JSON by a fixed plan, without running their classes' constructors.

A reader that trusts what it wrote (DESIGN.md, Performance targets) can rebuild objects from
their JSON without validating each value again: a ``Shape`` says, once per class, which
attributes an instance holds in which order (``template``), how each key of a JSON object
converts (``fields``: an exact-type check, a nested shape, a list of them …), which defaults
are made afresh per instance, and which attributes hold the object's dict, the set of the
JSON keys given, and constants. ``construct`` then makes the instance with ``cls.__new__``
and sets those attributes through ``object.__setattr__`` (any ``__setattr__`` of the class is
bypassed), and calls ``post_init`` if the shape has one.

Nothing here knows any framework: a shape is plain data (classes, dicts, tuples, callables),
which an adapter derives from its framework's own description of a class. A value outside
the shape — another key, a value of another type, a missing required key — raises
``Unconstructible`` and the caller takes its slow, validating path. The C accelerator
(``_speedups.construct``) has the same semantics; ``python_construct`` is the fallback used
when it is not built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple, Union

__all__ = [
    "FLAG",
    "NUMBER",
    "TEXT",
    "TEXT_SET",
    "Field",
    "Shape",
    "Unconstructible",
    "c_construct",
    "construct",
    "listed",
    "mapping",
    "nested",
    "python_construct",
]


class Unconstructible(Exception):
    """A value outside its shape: the caller validates it instead."""


class Field(NamedTuple):
    """How one key's value converts (``kind`` one of the module's ``_KIND`` codes)."""

    kind: int
    arg: Any = None


_TEXT, _FLAG, _NUMBER, _MAPPING, _TEXT_SET, _NESTED, _LISTED = range(7)

TEXT: Final = Field(_TEXT)
"""An exact ``str``, kept."""
FLAG: Final = Field(_FLAG)
"""An exact ``bool``, kept."""
NUMBER: Final = Field(_NUMBER)
"""An exact ``float``, kept, or an exact ``int`` (JSON's whole float), converted to ``float``."""
TEXT_SET: Final = Field(_TEXT_SET)
"""``None``, kept, or a list of exact ``str``, made a ``set``."""


def mapping(thaw: Callable[[Any], dict[str, Any]]) -> Field:
    """An object: an exact ``dict`` kept as it is, another (a frozen one) passed to ``thaw``.

    The exact ``dict`` becomes part of the instance: give only one nobody else holds.
    """
    return Field(_MAPPING, thaw)


def nested(shape: Shape) -> Field:
    """An object constructed by ``shape``."""
    return Field(_NESTED, shape)


def listed(shape: Shape) -> Field:
    """A list (of any ``list`` type) of objects constructed by ``shape``, made a plain list."""
    return Field(_LISTED, shape)


Made = Union[Callable[[], Any], "Shape"]
"""A per-instance default: a factory called with no arguments, or a shape built from ``{}``."""


class Shape(NamedTuple):
    """How to construct instances of ``cls`` from a JSON object (see the module docstring).

    A tuple, so the C accelerator reads it by position; keep the field order.
    """

    cls: type[Any]
    template: dict[str, Any]
    """Every attribute in order, at its default (an absent key keeps it; copied per instance)."""
    fields: Mapping[str, Field]
    """The keys the JSON object may hold, each with its conversion."""
    made: tuple[tuple[str, Made], ...]
    """Attributes whose default is made per instance, when their key is absent."""
    required: tuple[str, ...]
    """Keys the JSON object must hold."""
    nullable: frozenset[str]
    """Keys outside ``fields`` that may still appear with the value ``None`` (kept as None)."""
    dict_attr: str
    """The attribute set to the new attribute dict (``"__dict__"``)."""
    keys_attr: str | None
    """The attribute set to the set of the JSON object's keys, if any."""
    constants: tuple[tuple[str, Any], ...]
    """Further attributes, each set to its value."""
    post_init: tuple[Callable[..., Any], tuple[Any, ...]] | None
    """``(function, args)``: ``function(instance, *args)`` is called last."""


def python_construct(shape: Shape, value: Any) -> Any:
    """An instance of ``shape.cls`` holding ``value`` (the pure-Python ``construct``).

    Raises:
        Unconstructible: when ``value`` is outside the shape.
    """
    if not isinstance(value, dict):
        raise Unconstructible
    values = shape.template.copy()
    for name, make in shape.made:
        if name not in value:
            values[name] = python_construct(make, {}) if isinstance(make, Shape) else make()
    fields = shape.fields
    for key, item in value.items():
        field = fields.get(key)
        if field is not None:
            values[key] = _convert(field, item)
        elif item is None and key in shape.nullable:
            values[key] = None
        else:
            raise Unconstructible
    for name in shape.required:
        if name not in value:
            raise Unconstructible
    cls: Any = shape.cls  # any class: mypy reads ``type.__new__`` as the metaclass's
    instance = cls.__new__(cls)
    object.__setattr__(instance, shape.dict_attr, values)
    if shape.keys_attr is not None:
        object.__setattr__(instance, shape.keys_attr, set(value))
    for name, constant in shape.constants:
        object.__setattr__(instance, name, constant)
    if shape.post_init is not None:
        function, args = shape.post_init
        function(instance, *args)
    return instance


def _convert(field: Field, item: Any) -> Any:
    kind = field.kind
    if kind in (_TEXT, _FLAG):
        if type(item) is (str if kind == _TEXT else bool):
            return item
    elif kind == _NUMBER:
        if type(item) is float:
            return item
        if type(item) is int:
            try:
                return float(item)
            except OverflowError:
                raise Unconstructible from None
    elif kind == _MAPPING:
        if type(item) is dict:
            return item
        if isinstance(item, dict):
            return field.arg(item)
    elif kind == _TEXT_SET:
        if item is None:
            return None
        if isinstance(item, list):
            found = set()
            for text in item:
                if type(text) is not str:
                    raise Unconstructible
                found.add(text)
            return found
    elif kind == _NESTED:
        return python_construct(field.arg, item)
    elif kind == _LISTED and isinstance(item, list):
        return [python_construct(field.arg, entry) for entry in item]
    raise Unconstructible


def _load() -> Callable[[Shape, Any], Any] | None:
    from agentlog.values._snapshot import _speedups

    if _speedups is None:
        return None
    _speedups.configure_construct(Unconstructible)
    return _speedups.construct  # type: ignore[no-any-return]


c_construct: Final = _load()
"""The compiled ``construct`` (``None`` when unavailable); same results as ``python_construct``."""

construct: Final[Callable[[Shape, Any], Any]] = c_construct or python_construct
"""An instance of ``shape.cls`` holding ``value`` (see the module docstring).

Raises:
    Unconstructible: when ``value`` is outside the shape.
"""
