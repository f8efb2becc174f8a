"""``Store``: sessions that persist, over any backend (the shared coordinator).

Implements spec/persistence.md §2.3 and §2.6 for every backend at once: one writer per session
(the backend's lease, plus this process's own registry), id rules, resume with crash repair,
the version and vocabulary gates, inspect without writing, and forks. Backends only move bytes.

Resume (``open``) is: take the writer lease → read → refuse an unreadable version or an
undeclared event type → drop the torn tail of a crash → add the repair closers of an
interrupted turn → rebuild the session (every event validated) → persist the repair and the
``session/end-seed`` marker durably → attach. Opening a session twice in a row writes nothing
the second time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentlog.errors import (
    StoreError,
)
from agentlog.formats import FORMAT_VERSION
from agentlog.session import Session, check_session_id
from agentlog.stores.base import (
    Backend,
    DropsTornTails,
    Lease,
    RepairResult,
    SessionInfo,
    TornTail,
    session_not_found,
)
from agentlog.stores.core import (
    StoreCore,
    already_exists,
    already_open,
    fork_exists,
    guard,
    open_here,
)
from agentlog.stores.paging import SessionPage
from agentlog.stores.reading import StoreReads
from agentlog.stores.restore import collector_paused
from agentlog.stores.writer import Batcher, Writer
from agentlog.surface import IMAGE_OFFLOAD, MessageProjection

__all__ = ["MigrationPlan", "Store"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MigrationPlan:
    """What continuing a stored session would convert (``Store.plan_migration``)."""

    session_id: str
    stored_version: int
    """The format version the session is stored in."""
    stored_events: int
    """How many events the stored log holds (a packed chunk row counts as its members)."""
    session: Session
    """The session as continuing it would begin: migrated and repaired, in memory only."""
    location: str | None
    """The stored artifact, for file stores."""

    @property
    def needed(self) -> bool:
        """Whether the session is stored in an older format than the current one."""
        return self.stored_version < FORMAT_VERSION


class Store(StoreCore[Writer], StoreReads):
    """A place sessions persist: create, resume, inspect, list and fork them.

    Args:
        backend: The storage (JSONL files, SQLite, PostgreSQL, memory).
        write_behind: Queue appends and write them in batches (see ``Session.flush``) instead
            of making every append durable before it returns.
        batch_delay: Seconds between a session's first queued event and its background write.
        projections: Message projections sessions may use (``image/offload`` by default).
        clock: Epoch-ms source for new events and headers.

    Sessions a store creates, opens and forks run the invariant companion of spec/core.md §11
    (``agentlog.install_invariants``) unless asked with ``strict=False``: an append that breaks
    turn/step structure, or a tool result that answers no pending call of its step, raises
    ``InvariantError`` and changes nothing. A stored log's own history is never judged (an open
    never fails for it): checks start from the trace its end leaves, and a log whose end cannot
    be followed stays unchecked, with a warning.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        write_behind: bool = False,
        batch_delay: float = 0.2,
        projections: Iterable[MessageProjection] = (IMAGE_OFFLOAD,),
        clock: Callable[[], int] | None = None,
    ) -> None:
        super().__init__(projections=projections, clock=clock)
        self._backend = backend
        self._batcher = Batcher(batch_delay) if write_behind else None
        self._lock = threading.RLock()

    @property
    def url(self) -> str:
        """The URL this store was opened from."""
        return self._backend.url

    # --- sessions ---------------------------------------------------------------------

    def create(
        self, session_id: str | None = None, *, cwd: str | None = None, strict: bool = True
    ) -> Session:
        """Create a new session, attached: every append is persisted.

        Nothing is written until the first append; the session then appears in ``list()``.

        Args:
            session_id: The id (default: a fresh UUID).
            cwd: The absolute working directory the session runs in.
            strict: Check structure at every append (see the class docstring).

        Raises:
            SessionAlreadyExists: when the id is taken in this store or on disk.
            SeedRejected: for an invalid id or ``cwd``.
        """
        with self._lock:
            self._check_open()
            session_id = self._new_id(session_id)
            if session_id in self._live or self._backend.exists(session_id):
                raise already_exists(session_id)
            session = self._new_session(session_id, cwd=cwd, strict=strict)
            writer = self._writer(session_id, session.header, lambda: self._lease(session_id), 0)
            session.attach(writer)
            self._live[session_id] = (session, writer)
            return session

    def open(self, session_id: str, *, strict: bool = True) -> Session:
        """Resume a stored session for writing: repair what a crash left, then attach.

        ``strict``: check structure at every new append (see the class docstring).

        Raises:
            SessionNotFound: when no session has that id.
            SessionLocked: when another writer holds it (here or in another process).
            CorruptLog: when committed data is damaged.
            FormatVersionError: when the log is too new or holds undeclared event types.
        """
        session_id = check_session_id(session_id)
        with self._lock:
            self._check_open()
            if session_id in self._live:
                raise already_open(session_id)
            if not self._backend.exists(session_id):
                raise session_not_found(session_id)
            lease = self._lease(session_id)
            try:
                with collector_paused():
                    stored = self._backend.read(session_id)
                    restored = self._restore(session_id, stored, repair=True)
                session = restored.session
                # Events salvaged from a torn tail are rewritten with the closers.
                if stored.torn is not None and restored.migrated_from is None:
                    self._drop_torn_tail(lease, session_id, stored.torn)
                write = self._resume_write(stored, restored)
                if write is not None:
                    self._backend.append(lease, session.header, write[0], next_seq=write[1])
            except BaseException:
                lease.release()
                raise
            guard(session, strict)
            writer = self._writer(session_id, session.header, lease, session.seq)
            session.attach(writer)
            self._live[session_id] = (session, writer)
            return session

    def inspect(self, session_id: str) -> Session:
        """A detached, read-only view of a stored session; nothing is written.

        An interrupted turn is closed in the view only, and a torn tail is left on disk.
        A session open for writing in this store is shown as it is now.

        Raises:
            SessionNotFound, CorruptLog, FormatVersionError: as for ``open``.
        """
        session_id = check_session_id(session_id)
        with self._lock:
            self._check_open()
            live = self._live_view(session_id)
            if live is not None:
                return live
            if not self._backend.exists(session_id):
                raise session_not_found(session_id)
            with collector_paused():
                stored = self._backend.read(session_id)
                return self._restore(session_id, stored, repair=True).session

    def plan_migration(self, session_id: str) -> MigrationPlan:
        """What continuing ``session_id`` would convert; nothing is written.

        A session stored in an older format is migrated in memory (spec/persistence.md §5.5)
        and repaired in the view, exactly as ``open`` would before publishing it.

        Raises:
            SessionNotFound, CorruptLog, FormatVersionError: as for ``open``.
            MigrationRefused: when the chain cannot carry the log forward.
        """
        session_id = check_session_id(session_id)
        with self._lock:
            self._check_open()
            if not self._backend.exists(session_id):
                raise session_not_found(session_id)
            with collector_paused():
                stored = self._backend.read(session_id)
                restored = self._restore(session_id, stored, repair=True)
            return MigrationPlan(
                session_id=session_id,
                stored_version=stored.header["version"],
                stored_events=len(stored.events),
                session=restored.session,
                location=stored.location,
            )

    def repair(self, session_id: str, *, cut_at: int) -> RepairResult:
        """Cut a stored log at seq ``cut_at``: the explicit way past ``CorruptLog``.

        Every record from ``cut_at`` on is removed — the damaged one and the well-formed ones
        after it — and a copy of what was removed is kept beside the log (file and SQLite
        stores; ``RepairResult.saved_to``). The records before the cut must be intact: a cut
        never keeps damage. ``CorruptLog.seq`` is where to cut for the damage it reports. The
        session must not be open for writing anywhere; the next ``open`` closes a turn the cut
        leaves open, as after a crash. Implements DESIGN.md, Reliability ("only a torn tail is
        ever dropped"; everything else is cut only on request, and reported).

        Raises:
            SessionNotFound: when no session has that id.
            SessionLocked: when a writer holds the session (here or in another process).
            CorruptLog: when a record before ``cut_at`` is damaged.
            StoreError: for a ``cut_at`` that is not an integer from 0 to the event count.
        """
        session_id = check_session_id(session_id)
        if type(cut_at) is not int or cut_at < 0:
            raise StoreError(
                f"cut_at must be a non-negative integer seq, got {cut_at!r}", session_id=session_id
            )
        with self._lock:
            self._check_open()
            if session_id in self._live:
                raise already_open(session_id)
            if not self._backend.exists(session_id):
                raise session_not_found(session_id)
            lease = self._lease(session_id)
            try:
                return self._backend.cut(lease, session_id, cut_at=cut_at)
            finally:
                lease.release()

    def list(self) -> list[SessionInfo]:
        """Every stored session (created sessions appear after their first append)."""
        with self._lock:
            self._check_open()
            return self._sorted(self._backend.list())

    def list_page(
        self,
        *,
        cwd: str | None = None,
        updated_since: int | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> SessionPage:
        """A page of stored sessions in creation order, filtered; ``cursor`` pages on.

        Args:
            cwd: Only sessions that ran in this working directory.
            updated_since: Only sessions changed at or after this epoch-ms time.
            limit: At most this many sessions (1 to 10,000).
            cursor: The ``cursor`` of the previous page (``None``: the first page).

        Returns:
            The sessions, and the cursor of the next page (``None`` after the last).

        Raises:
            StoreError: for a ``limit`` out of range or a cursor no page handed out.
        """
        after = self._page_after(limit, cursor)
        with self._lock:
            self._check_open()
            found = self._backend.list_page(
                cwd=cwd, updated_since=updated_since, after=after, limit=limit + 1
            )
        return self._page(found, limit)

    def fork(
        self,
        session_id: str,
        boundary: int | None = None,
        child_id: str | None = None,
        *,
        strict: bool = True,
    ) -> Session:
        """Fork a stored (or open) session after ``boundary`` into a new persisted child.

        The child inherits events ``0..boundary`` (default: all), a turn the cut leaves open is
        closed with ``forked`` closers (spec/core.md §10.2), and the child is written durably
        and returned attached. The source is only read. ``strict`` as for ``open``.

        Raises:
            SessionForkError: ``SESSION_ALREADY_EXISTS``, ``SESSION_NOT_FOUND`` or
                ``INVALID_BOUNDARY``, with the texts of spec/core.md §10.1.
        """
        session_id, child_id = self._fork_ids(session_id, child_id)
        with self._lock:
            self._check_open()
            if child_id is not None and (child_id in self._live or self._backend.exists(child_id)):
                raise fork_exists(session_id, child_id)
            stored = None
            if session_id not in self._live and self._backend.exists(session_id):
                stored = self._backend.read(session_id)
            source = self._fork_source(session_id, stored)
            child = self._fork_child(session_id, source, boundary, child_id)
            child_id = child.id
            lease = self._lease(child_id)
            try:
                writer = self._writer(child_id, child.header, lease, 0)
                writer.catch_up(list(child.events))
            except BaseException:
                lease.release()
                raise
            guard(child, strict)
            child.attach(writer)
            self._live[child_id] = (child, writer)
            return child

    def delete(self, session_id: str) -> None:
        """Remove a stored session and every event of it, durably.

        The only operation that removes events (compaction, pruning and forks never do). The
        session must not be open for writing, here or in another process.

        Raises:
            SessionNotFound: when no session has that id.
            SessionLocked: when the session is open for writing (its writer holds the lease).
            SeedRejected: for an invalid id.
        """
        session_id = check_session_id(session_id)
        with self._lock:
            self._check_open()
            if session_id in self._live:
                raise open_here(session_id)
            if not self._backend.exists(session_id):
                raise session_not_found(session_id)
            lease = self._lease(session_id)
            try:
                self._backend.delete(lease, session_id)
            finally:
                lease.release()

    # --- lifecycle --------------------------------------------------------------------

    def flush(self) -> None:
        """Make every appended event of every open session durable."""
        with self._lock:
            for _, writer in list(self._live.values()):
                writer.flush()

    def close(self) -> None:
        """Flush and release every open session, then the backend; idempotent."""
        with self._lock:
            if self._closed:
                return
            try:
                for session, _ in list(self._live.values()):
                    session.close()
            finally:
                self._closed = True
                for _, writer in list(self._live.values()):
                    writer.abandon()
                self._live.clear()
                if self._batcher is not None:
                    self._batcher.stop()
                self._backend.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    # --- internals --------------------------------------------------------------------

    def _lease(self, session_id: str) -> Lease:
        return self._backend.lease(session_id)

    def _drop_torn_tail(self, lease: Lease, session_id: str, torn: TornTail) -> None:
        """Cut the tail a crashed writer left (only a ``DropsTornTails`` backend reports one)."""
        backend = self._backend
        if not isinstance(backend, DropsTornTails):
            raise StoreError(
                f'store {self.url!r} reported a torn tail of session "{session_id}" it cannot drop',
                session_id=session_id,
            )
        backend.drop_torn_tail(lease, session_id, torn)

    def _writer(
        self, session_id: str, header: Mapping[str, Any], lease: Any, next_seq: int
    ) -> Writer:
        def released() -> None:
            with self._lock:
                self._live.pop(session_id, None)

        return Writer(
            self._backend,
            session_id,
            header,
            lease,
            next_seq,
            batcher=self._batcher,
            on_close=released,
        )
