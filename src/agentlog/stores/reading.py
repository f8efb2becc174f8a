"""Reading stored sessions beyond ``inspect``: stored events, suffixes, following a live one.

``StoreReads`` is the read-only half of ``Store`` beyond ``inspect`` (``Store`` inherits it):

* ``inspection`` tells the stored events of a read-only view from those the view adds (repair
  closers, the end-seed marker);
* ``read_from`` is spec/persistence.md §2.1 ``readFrom``: a detached physical suffix, with no
  caching, truncation or closers;
* ``read_raw`` is the trusted read (``Backend.read_raw``): the stored events of the types a
  reader asks for, as plain, unvalidated JSON;
* ``revision`` changes whenever the stored log does (§2.1 ``listSnapshots``);
* ``follow`` polls the revision (a cheap ``stat`` or one row) and reads only the new suffix;
  ``Backend.wait_for_append`` is the hook a backend with notifications (PostgreSQL ``LISTEN``)
  overrides to wake up at once.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from agentlog.errors import CorruptLog, EventRejected, NotLosslessJson
from agentlog.events import Event
from agentlog.formats import FORMAT_VERSION
from agentlog.session import Session, check_session_id
from agentlog.stores.base import Backend, RawLog, StoredLog, session_not_found
from agentlog.stores.restore import Restored, collector_paused
from agentlog.stores.writer import Writer

__all__ = ["Inspection", "StoreReads"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Inspection:
    """A read-only view of a stored session, and how much of it is actually stored.

    ``session`` is what ``Store.inspect`` returns: the stored events (migrated in memory when
    the log is in an older format), then — in the view only — the repair closers of a turn a
    crash left open and the ``session/end-seed`` marker a resume would append.
    """

    session: Session
    """The read-only view."""
    stored_events: int
    """How many leading events of ``session`` are stored; the rest exist in the view only."""
    stored_version: int
    """The format version the log is stored in."""
    location: str | None
    """The file the session is stored in (file stores)."""
    torn_tail: bool
    """Whether a crash left an incomplete record at the end (left on disk by a read)."""

    @property
    def virtual_seqs(self) -> range:
        """The seqs of the view-only events (closers and end-seed marker), never stored."""
        return range(self.stored_events, self.session.seq)


class StoreReads:
    """``Store``'s reads beyond ``inspect`` (a base of ``Store``; see the module docstring)."""

    _backend: Backend
    _lock: threading.RLock
    _live: dict[str, tuple[Session, Writer]]

    def _check_open(self) -> None:
        raise NotImplementedError  # Store's

    def _restore(self, session_id: str, stored: StoredLog, *, repair: bool) -> Restored:
        raise NotImplementedError  # Store's

    def inspect(self, session_id: str) -> Session:
        """A detached, read-only view of a stored session (``Store.inspect``)."""
        raise NotImplementedError  # Store's

    def inspection(self, session_id: str) -> Inspection:
        """``inspect``, and what of the view is stored: nothing is written.

        Raises:
            SessionNotFound, CorruptLog, FormatVersionError: as for ``Store.open``.
        """
        session_id = check_session_id(session_id)
        with self._lock:
            self._check_open()
            live = self._live.get(session_id)
            if live is not None:
                return Inspection(
                    session=self.inspect(session_id),
                    stored_events=live[0].seq,
                    stored_version=FORMAT_VERSION,
                    location=None,
                    torn_tail=False,
                )
            if not self._backend.exists(session_id):
                raise session_not_found(session_id)
            with collector_paused():
                stored = self._backend.read(session_id)
                restored = self._restore(session_id, stored, repair=True)
            return Inspection(
                session=restored.session,
                stored_events=restored.stored_events,
                stored_version=stored.header["version"],
                location=stored.location,
                torn_tail=stored.torn is not None,
            )

    def read_from(self, session_id: str, from_seq: int) -> list[Event]:
        """The stored events of a session from ``from_seq`` on, checked; nothing is written.

        Implements spec/persistence.md §2.1 ``readFrom``: the physical suffix of the valid
        stored prefix, without closers or marker (a log in an older format is migrated first).
        Only the suffix is checked, event by event (§4.8).

        Raises:
            TypeError: for a negative ``from_seq``.
            SessionNotFound, CorruptLog, FormatVersionError: as for ``Store.open``.
        """
        if type(from_seq) is not int or from_seq < 0:
            raise TypeError(f"readFrom fromSeq must be a non-negative safe integer, got {from_seq}")
        session_id = check_session_id(session_id)
        with self._lock:
            self._check_open()
            if not self._backend.exists(session_id):
                raise session_not_found(session_id)
            stored = self._backend.read(session_id, from_seq)
            if stored.header.get("version") == FORMAT_VERSION:
                return [_checked(session_id, stored, record) for record in stored.events]
            # An older format: the migration chain converts the whole log.
            stored = self._backend.read(session_id)
            with collector_paused():
                restored = self._restore(session_id, stored, repair=False)
            return list(restored.session.events[from_seq : restored.stored_events])

    def read_raw(self, session_id: str, types: Collection[str]) -> RawLog:
        """The stored events of ``types`` as plain, unvalidated JSON; nothing is written.

        The trusted read (``Backend.read_raw``) for a reader that relies on what agentlog
        itself wrote and needs no ``Session``: no event is checked, no surface is folded, no
        repair is made (``RawLog.torn`` and an open last turn are the reader's to notice), the
        header's version is not migrated, and only events of ``types`` are returned
        (``RawLog.last_seqs`` names every type the log holds, with its last seq). What is
        returned is the caller's to keep or change. A session open for writing is read as
        stored (write-behind events not yet flushed are not in it).

        Raises:
            SessionNotFound, CorruptLog: as for ``Store.open``.
        """
        session_id = check_session_id(session_id)
        with self._lock:
            self._check_open()
            if not self._backend.exists(session_id):
                raise session_not_found(session_id)
            with collector_paused():
                return self._backend.read_raw(session_id, types)

    def revision(self, session_id: str) -> str | None:
        """A token that changes whenever the stored session does (``None``: cannot tell)."""
        with self._lock:
            self._check_open()
            return self._backend.revision(check_session_id(session_id))

    def follow(
        self, session_id: str, *, from_seq: int = 0, interval: float = 0.25
    ) -> Iterator[Event]:
        """Follow a session another process is writing: its stored events, then each new one.

        ``interval`` is the polling period in seconds. The iterator never ends by itself: stop
        iterating (or close it) to stop following.

        Raises:
            SessionNotFound, CorruptLog: as for ``read_from``.
        """
        next_seq = from_seq
        seen: str | None = None
        while True:
            revision = self.revision(session_id)
            if revision is None or revision != seen:
                events = self.read_from(session_id, next_seq)
                next_seq += len(events)
                seen = revision
                yield from events
            self._backend.wait_for_append(session_id, seen, interval)


def _checked(session_id: str, stored: StoredLog, record: Mapping[str, Any]) -> Event:
    """One record of a stored suffix, with the event-local checks."""
    try:
        return Event.from_wire(record)
    except (EventRejected, NotLosslessJson) as exc:
        raise CorruptLog(
            f'stored session "{session_id}" failed validation at seq {record.get("seq")}: {exc}',
            session_id=session_id,
            path=stored.location,
        ) from exc
