"""Deeply immutable JSON containers (DESIGN decision 4).

``FrozenDict`` and ``FrozenList`` subclass ``dict`` and ``list`` so that frozen values compare
equal to plain JSON, serialise natively with ``orjson`` and read at C speed; every mutating
method raises ``TypeError``. They are built only by ``snapshot()``, which validates first:
calling the class raises, and so does ``__init__`` on an existing value. So holding one means
holding validated lossless JSON, which is why ``snapshot()`` accepts them again without a copy.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "new_frozen_dict", "new_frozen_list"]

_dict_new = dict.__new__
_dict_update = dict.update
_list_new = list.__new__
_list_extend = list.extend


def _immutable(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"{type(self).__name__} is immutable; agentlog.thaw() gives a mutable plain copy"
    )


def _not_constructible(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"{type(self).__name__} values are built by agentlog.values.snapshot(), "
        "which validates them"
    )


class FrozenDict(dict[str, Any]):
    """A JSON object that refuses mutation; equal to the plain ``dict`` with the same items."""

    __slots__ = ()

    __init__ = _not_constructible

    __setitem__ = _immutable
    __delitem__ = _immutable
    __ior__ = _immutable
    clear = _immutable
    pop = _immutable
    popitem = _immutable
    setdefault = _immutable
    update = _immutable

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_thawed_snapshot, (dict(self),))


class FrozenList(list[Any]):
    """A JSON array that refuses mutation; equal to the plain ``list`` with the same items."""

    __slots__ = ()

    __init__ = _not_constructible

    __setitem__ = _immutable
    __delitem__ = _immutable
    __iadd__ = _immutable
    __imul__ = _immutable
    append = _immutable
    extend = _immutable
    insert = _immutable
    pop = _immutable
    remove = _immutable
    reverse = _immutable
    sort = _immutable
    clear = _immutable

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_thawed_snapshot, (list(self),))


def new_frozen_dict(items: dict[str, Any]) -> FrozenDict:
    """Freeze ``items`` whose values are already validated and frozen (snapshot internals)."""
    frozen: FrozenDict = _dict_new(FrozenDict)
    _dict_update(frozen, items)
    return frozen


def new_frozen_list(items: list[Any]) -> FrozenList:
    """Freeze ``items`` that are already validated and frozen (snapshot internals)."""
    frozen: FrozenList = _list_new(FrozenList)
    _list_extend(frozen, items)
    return frozen


def _thawed_snapshot(value: Any) -> Any:
    """Unpickling: validate and freeze again (no trust in pickled bytes)."""
    from agentlog.values._snapshot import snapshot

    return snapshot(value)
