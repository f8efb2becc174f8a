"""``EventLog``: an immutable, O(1) view of a session's events up to a fixed length."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any, overload

from agentlog.events import Event

__all__ = ["EventLog"]


class EventLog(Sequence[Event]):
    """The events of a session as they were when the view was taken.

    ``Session.events`` returns the same ``EventLog`` until the next append; an older view never
    grows (spec/core.md §3). Taking a view is O(1): it shares the session's append-only list and
    remembers its length. Slicing returns a tuple.
    """

    __slots__ = ("_events", "_length")

    def __init__(self, events: list[Event], length: int) -> None:
        self._events = events
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Event, ...]: ...

    def __getitem__(self, index: int | slice) -> Event | tuple[Event, ...]:
        if isinstance(index, slice):
            events = self._events
            return tuple(events[i] for i in range(*index.indices(self._length)))
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("event index out of range")
        return self._events[index]

    def __iter__(self) -> Iterator[Event]:
        return islice(self._events, self._length)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(other) == self._length and all(a == b for a, b in zip(self, other, strict=False))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    def __repr__(self) -> str:
        return f"EventLog({self._length} events)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))
