"""Deeply immutable JSON containers (DESIGN decision 4).

``FrozenDict`` and ``FrozenList`` subclass ``dict`` and ``list`` so that frozen values compare
equal to plain JSON, serialise natively with ``orjson`` and read at C speed; every mutating
method raises ``TypeError``. They are built only by ``snapshot()`` (which validates first), so
holding one means holding validated lossless JSON; that is why ``snapshot()`` accepts them again
without a copy.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList"]


def _immutable(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"{type(self).__name__} is immutable; agentlog.thaw() gives a mutable plain copy"
    )


class FrozenDict(dict[str, Any]):
    """A JSON object that refuses mutation; equal to the plain ``dict`` with the same items."""

    __slots__ = ()

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
        return (FrozenDict, (dict(self),))


class FrozenList(list[Any]):
    """A JSON array that refuses mutation; equal to the plain ``list`` with the same items."""

    __slots__ = ()

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
        return (FrozenList, (list(self),))
