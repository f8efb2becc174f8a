"""Immutable, O(1) views of a session's append-only lists: its events and its messages."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any, Generic, TypeVar, overload

from agentlog.events import Event
from agentlog.values import JsonValue

__all__ = ["EventLog", "ListView", "MessageLog"]

T = TypeVar("T")


class ListView(Sequence[T], Generic[T]):
    """A prefix of an append-only list, frozen in length: O(1) to take, never grows.

    Slicing returns a tuple; the view compares equal to any sequence with the same items.
    """

    __slots__ = ("_events", "_length")

    def __init__(self, items: list[T], length: int) -> None:
        self._events = items
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            events = self._events
            return tuple(events[i] for i in range(*index.indices(self._length)))
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("event index out of range")
        return self._events[index]

    def __iter__(self) -> Iterator[T]:
        return islice(self._events, self._length)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(other) == self._length and all(a == b for a, b in zip(self, other, strict=False))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._length} items)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))


class EventLog(ListView[Event]):
    """The events of a session as they were when the view was taken.

    ``Session.events`` returns the same ``EventLog`` until the next append; an older view never
    grows (spec/core.md §3).
    """

    __slots__ = ()


class MessageLog(ListView[JsonValue]):
    """The derived history of a session as it was when the view was taken (``messages()``)."""

    __slots__ = ()
