"""``Sink``: where an attached session persists its events (implemented by the stores).

A session attached to a store hands every accepted event to its sink *after* the validators
and *before* the commit (spec/core.md §4 step 9): a sink that raises rejects the append, so the
in-memory log never holds an event the store refused. What ``persist`` returning means —
durable now, or queued until ``flush`` — is the store's documented durability mode; inside a
group commit (``Session.batch()``, between ``hold`` and ``release``) it only queues.

The session calls its sink under its own lock, one call at a time.
"""

from __future__ import annotations

from typing import Protocol

from agentlog.events import Event

__all__ = ["Sink"]


class Sink(Protocol):
    """The persistence side of an attached session."""

    def persist(self, event: Event) -> None:
        """Persist (or queue) ``event``, the next event of the log; raise to refuse it."""
        ...

    def hold(self) -> None:
        """Start a group commit: queue every persisted event until ``release``."""
        ...

    def release(self, *, write: bool) -> None:
        """End the group commit; with ``write``, make what it queued durable in one write.

        Raises:
            StoreError: when the write fails; the events stay queued for the next ``flush``.
        """
        ...

    def flush(self) -> None:
        """Return once every persisted event is durable."""
        ...

    def close(self) -> None:
        """Flush, then release the session (its writer lock); idempotent."""
        ...
