"""The store contract: what every backend implements, and what it hands back.

Implements the backend half of spec/persistence.md §2.2. A ``Backend`` only moves bytes or rows:
it reads a stored log from a seq (reporting a torn tail, never repairing it), hands out the
writer lease of a session (a capability: a file lock, a database lock, nothing at all), appends
a batch whose first seq is the stored next seq, and lists headers. Everything that is the same
for every backend — one writer per session, id rules, crash repair, version and vocabulary
gates, forks — lives once in ``agentlog.stores.store.Store``.

What varies only with some backends is a capability protocol beside the contract:
``DropsTornTails`` for a store whose crashed writer can leave a torn tail (JSONL). The shared
checks every backend makes are here once: ``check_tail`` (the expected next seq) and
``session_not_found``.

``read_raw`` is the trusted read (DESIGN.md, trusting what agentlog wrote): the committed
events of the types a reader asks for, as freshly parsed plain JSON, unvalidated. The default
filters ``read``; a backend that can skip work overrides it.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self, runtime_checkable

from agentlog.errors import (
    ConcurrentWriteError,
    SessionAlreadyExists,
    SessionNotFound,
    StoreError,
)
from agentlog.values import JsonValue, thaw

if TYPE_CHECKING:
    from agentlog.stores.url import StoreURL

__all__ = [
    "Backend",
    "DropsTornTails",
    "Lease",
    "RawLog",
    "RepairResult",
    "SessionInfo",
    "StoredLog",
    "TornTail",
    "check_tail",
    "session_not_found",
    "suffix",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TornTail:
    """What a crashed writer left after the committed prefix (only ``DropsTornTails`` stores)."""

    position: int
    """Where the committed prefix ends, in the reporting backend's own terms (JSONL: a byte
    offset); only that backend's ``drop_torn_tail`` interprets it."""
    reason: str
    """What was found there, for logs and messages."""
    recovered: tuple[Mapping[str, Any], ...] = ()
    """Complete events salvaged from inside the torn region (a torn zstd frame)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredLog:
    """A stored session as read: header, committed events (wire dicts) and any torn tail."""

    header: Mapping[str, Any]
    """The stored header as written (format-specific keys included)."""
    events: Sequence[Mapping[str, Any]]
    """The committed events, contiguous from seq 0, as plain wire dicts."""
    torn: TornTail | None = None
    """The crash tail to drop, if any."""
    location: str | None = None
    """The file path, for messages."""
    first_line: int | None = None
    """Line number of ``events[0]`` in the file (events are one per line), for messages."""
    migrated_from: int | None = None
    """For a log migrated in memory: the format version it was stored in."""

    def where(self, index: int) -> str:
        """Locate event ``index`` for an error message: ``"<path>" line N`` or ``seq N``."""
        if self.location is not None and self.first_line is not None:
            return f'"{self.location}" line {self.first_line + index}'
        return f"seq {index}"


@dataclass(frozen=True, slots=True, kw_only=True)
class RawLog:
    """A stored session as ``Backend.read_raw`` hands it out: plain, unvalidated, the caller's."""

    header: Mapping[str, Any]
    """The stored header as written (its ``version`` unchecked: older formats are not
    migrated, so a reader of the current format checks it)."""
    events: Sequence[dict[str, Any]]
    """The committed events of the types asked for, in seq order, as fresh plain (mutable)
    wire dicts."""
    last_seqs: Mapping[str, int]
    """Every event type the committed log holds (asked for or not), with its last seq."""
    count: int
    """How many events the committed log holds (its seqs are ``0 .. count - 1``)."""
    torn: bool = False
    """Whether a crash left a torn tail after the committed events (left on disk)."""
    location: str | None = None
    """The file path or database, for messages."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    """One stored session, as ``Store.list()`` reports it (read from the header alone)."""

    id: str
    """The session id."""
    created_at: int
    """Epoch milliseconds of creation."""
    version: int
    """The stored format version."""
    cwd: str | None = None
    """The working directory the session ran in."""
    parent_session: str | None = None
    """The parent, for a fork child."""
    location: str | None = None
    """The file path, for file stores."""
    updated_at: int | None = None
    """Epoch milliseconds of the last change: the time of the last stored event (SQL, memory)
    or the transcript's modification time (JSONL); ``None`` when unknown."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RepairResult:
    """What ``Store.repair`` cut from a stored log, and where the removed part was kept."""

    session_id: str
    """The session repaired."""
    cut_at: int
    """The first removed seq: the log now holds seqs ``0 .. cut_at - 1``."""
    removed: int
    """Well-formed records removed (events; a packed row of an old format counts once)."""
    damaged: int
    """Damaged records removed (lines or rows that could not be read)."""
    saved_to: str | None = None
    """The copy of the removed bytes (rows, for SQL stores) beside the log; ``None`` when
    nothing was removed or the store keeps no files."""


class Lease(ABC):
    """The exclusive right to write one session; released by ``release()`` (idempotent).

    What it holds is the backend's business: a file lock (JSONL, SQLite files), a lease row
    (server databases), or nothing but an in-process mark (memory).
    """

    @abstractmethod
    def release(self) -> None:
        """Give the session up so another writer may open it."""


class Backend(ABC):
    """Storage primitives of one store; ``Store`` composes them (spec/persistence.md §2.2).

    A backend is opened from a parsed store URL by ``from_url`` (``agentlog.stores.registry``
    maps the URL's scheme to the class) and released by ``close``.
    """

    url: str
    """The store URL this backend was opened from."""

    @classmethod
    def from_url(cls, url: StoreURL, *, read_only: bool = False) -> Self:
        """Open the store ``url`` names (the registry's entry point for every backend).

        ``read_only``: create nothing; writes are refused by the ``ReadOnlyBackend`` wrapper.
        This default refuses: a backend reachable from a URL overrides it.

        Raises:
            StoreError: when the store cannot be opened (or, read-only, does not exist).
        """
        raise StoreError(f"{cls.__name__} cannot be opened from a URL ({url.url!r})")

    @abstractmethod
    def exists(self, session_id: str) -> bool:
        """Whether a session with this id has been written."""

    @abstractmethod
    def read(self, session_id: str, from_seq: int = 0) -> StoredLog:
        """The header and the committed events from ``from_seq`` on; never writes.

        The events of the returned log start at ``from_seq`` (spec/persistence.md §2.1
        ``readFrom``); ``from_seq == 0`` reads the whole log, torn tail included.

        Raises:
            SessionNotFound: when no session has that id.
            CorruptLog: when bytes or rows before the last complete turn are damaged.
            FormatVersionError: when the header declares an unreadable version.
        """

    def read_raw(self, session_id: str, types: Collection[str]) -> RawLog:
        """The header and the committed events of ``types``, unvalidated, as plain JSON.

        The trusted read of a reader that relies on what agentlog itself wrote (checked at
        append time) and wants no more than it needs: events come back as fresh plain JSON
        (the caller may keep or change them), not checked against the event rules, and only
        those of ``types``, with ``last_seqs`` and ``count`` telling what else the log holds.
        Damage the read sees is still refused as by ``read`` (``CorruptLog``: a record it
        decodes that does not parse, seqs that are not ``0 .. count - 1``); damage in a record
        it skips is found by the next ``read``. Never writes.

        This default filters ``read`` (every record parsed and settled, then copied); a
        backend that can skip records overrides it.

        Raises:
            SessionNotFound, CorruptLog, FormatVersionError: as for ``read``.
        """
        stored = self.read(session_id)
        wanted = frozenset(types)
        return RawLog(
            header=thaw(stored.header),
            events=[thaw(event) for event in stored.events if event["type"] in wanted],
            last_seqs={event["type"]: event["seq"] for event in stored.events},
            count=len(stored.events),
            torn=stored.torn is not None,
            location=stored.location,
        )

    @abstractmethod
    def lease(self, session_id: str) -> Lease:
        """Take the writer lease of ``session_id`` (whether or not it exists yet).

        Raises:
            SessionLocked: when another writer holds it.
        """

    @abstractmethod
    def append(
        self,
        lease: Lease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        """Durably append ``events`` (whose first seq is ``next_seq``) under ``lease``.

        ``next_seq`` is the stored next seq the writer expects (``check_tail``);
        ``next_seq == 0`` materializes the session: header and first batch become visible
        together or not at all (a store placing sessions by the header's ``cwd`` does so
        here). On failure nothing is left half-written.

        Raises:
            SessionAlreadyExists: when materializing an id that appeared meanwhile.
            ConcurrentWriteError: when the stored next seq is not ``next_seq``.
            StoreError: when the write failed (the batch is not stored).
        """

    @abstractmethod
    def delete(self, lease: Lease, session_id: str) -> None:
        """Remove a stored session (header and every event) under its lease, then release it.

        All of it goes or none: a failure leaves the session as it was (still leased).

        Raises:
            SessionNotFound: when no session has that id.
            StoreError: when the removal failed.
        """

    @abstractmethod
    def cut(self, lease: Lease, session_id: str, *, cut_at: int) -> RepairResult:
        """Remove every record from seq ``cut_at`` on, under ``lease``, keeping a copy of them.

        The copy is made durable before anything is removed, and the cut itself is atomic.

        Raises:
            SessionNotFound: when no session has that id.
            CorruptLog: when a record before ``cut_at`` is damaged (a cut cannot keep damage).
            StoreError: when the log holds fewer than ``cut_at`` events, or the write failed.
        """

    @abstractmethod
    def list(self) -> list[SessionInfo]:
        """Every stored session, read from headers only, in no particular order."""

    def list_page(
        self,
        *,
        cwd: str | None,
        updated_since: int | None,
        after: tuple[int, str] | None,
        limit: int,
    ) -> Sequence[SessionInfo]:
        """The first ``limit`` matching sessions after the ``(created_at, id)`` key ``after``.

        In creation order (``agentlog.stores.paging``). This default filters ``list()``; a
        backend that can page by index overrides it.
        """
        from agentlog.stores.paging import page_of  # paging builds on this module's types

        return page_of(self.list(), cwd=cwd, updated_since=updated_since, after=after, limit=limit)

    def wait_for_append(self, session_id: str, revision: str | None, timeout: float) -> None:
        """Block until the session may have changed since ``revision``, or ``timeout`` seconds.

        This default polls (it sleeps ``timeout``); a backend with change notifications wakes
        up as soon as an append lands.
        """
        time.sleep(timeout)

    def revision(self, session_id: str) -> str | None:
        """A token that changes whenever the stored log does (``None``: cannot tell).

        Implements the revision of spec/persistence.md §2.1 ``listSnapshots``: followers and
        indexes compare it to skip reading a log that has not changed.
        """
        return None

    def close(self) -> None:  # noqa: B027  # optional hook: most backends hold nothing open
        """Release connections and files."""


@runtime_checkable
class DropsTornTails(Protocol):
    """A backend whose crashed writer can leave a torn tail (``StoredLog.torn``): JSONL.

    Append-only files can end in a half-written record; transactional stores cannot, so they
    neither report a torn tail nor implement this. ``Store.open`` drops the tail under the
    writer lease before it appends the repair (DESIGN.md, Reliability).
    """

    def drop_torn_tail(self, lease: Lease, session_id: str, torn: TornTail) -> None:
        """Durably cut the stored log back to the end of its committed prefix."""


def session_not_found(session_id: str, where: str | None = None) -> SessionNotFound:
    """The one ``SessionNotFound`` of every backend: ``session "<id>" not found``.

    ``where`` (a file or database) goes into the error's ``path``.
    """
    context = {} if where is None else {"path": where}
    return SessionNotFound(f'session "{session_id}" not found', session_id=session_id, **context)


def check_tail(session_id: str, stored_next: int | None, next_seq: int) -> None:
    """The expected-next-seq check of an append (``stored_next``: ``None`` for no session).

    Optimistic concurrency for every backend: a writer names the seq its batch starts at, and
    the append goes through only when that is the stored next seq.

    Raises:
        SessionAlreadyExists: when materializing (``next_seq == 0``) an id that is stored.
        SessionNotFound: when appending to a session that is not stored.
        ConcurrentWriteError: when the stored next seq differs from ``next_seq``.
    """
    if next_seq == 0:
        if stored_next is not None:
            raise SessionAlreadyExists(
                f'session "{session_id}" already exists', session_id=session_id
            )
        return
    if stored_next is None:
        raise session_not_found(session_id)
    if stored_next != next_seq:
        raise ConcurrentWriteError(
            f'session "{session_id}" append starts at seq {next_seq}, stored next seq is '
            f"{stored_next}",
            session_id=session_id,
            expected_seq=next_seq,
            stored_seq=stored_next,
        )


def suffix(stored: StoredLog, from_seq: int) -> StoredLog:
    """The part of a whole stored log from ``from_seq`` on (for backends that cannot seek)."""
    if from_seq == 0:
        return stored
    return StoredLog(
        header=stored.header,
        events=stored.events[from_seq:],
        torn=stored.torn,
        location=stored.location,
        first_line=None if stored.first_line is None else stored.first_line + from_seq,
        migrated_from=stored.migrated_from,
    )
