"""``StoreCore``: the I/O-free half of a store, shared by ``Store`` and its asyncio twin.

Implements the sync/async twin rule (DESIGN.md decision 9): everything ``Store`` decides
without touching storage — id rules, the header of a new session, what a resume must write,
the view of a live session, the fork child, list pages, and the errors with their texts — is
here once; ``Store`` (``agentlog.stores.store``) and ``AsyncStoreCore``
(``agentlog.stores.aio_store``) only add the backend calls, plain or awaited.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from agentlog.errors import (
    AgentlogError,
    SessionAlreadyExists,
    SessionForkError,
    SessionLocked,
    StoreError,
)
from agentlog.lifecycle import fork_child, open_turn_closers
from agentlog.lifecycle.invariants import install_invariants
from agentlog.session import Session, check_session_id, new_header, stored_header, wall_clock
from agentlog.stores.base import SessionInfo, StoredLog
from agentlog.stores.paging import MAX_PAGE, SessionPage, decode_cursor, encode_cursor
from agentlog.stores.restore import Restored, restore_session
from agentlog.surface import IMAGE_OFFLOAD, MessageProjection

__all__ = ["StoreCore", "already_exists", "already_open", "fork_exists", "guard", "open_here"]

_W = TypeVar("_W")


class StoreCore(Generic[_W]):
    """What every store decides without I/O; ``_W`` is its sessions' writer type."""

    def __init__(
        self,
        *,
        projections: Iterable[MessageProjection] = (IMAGE_OFFLOAD,),
        clock: Callable[[], int] | None = None,
    ) -> None:
        self._projections = tuple(projections)
        self._clock = clock or wall_clock
        self._live: dict[str, tuple[Session, _W]] = {}
        self._closed = False

    @property
    def url(self) -> str:
        """The URL this store was opened from."""
        raise NotImplementedError

    def _check_open(self) -> None:
        if self._closed:
            raise AgentlogError(f"store {self.url!r} is closed")

    def _new_id(self, session_id: str | None) -> str:
        """The id of a new session: checked, or a fresh UUID."""
        return check_session_id(str(uuid.uuid4()) if session_id is None else session_id)

    def _new_session(self, session_id: str, *, cwd: str | None, strict: bool) -> Session:
        """A new session with its stored header, before it is attached (``Store.create``)."""
        header = stored_header(new_header(session_id, self._clock(), cwd=cwd))
        session = Session.create(
            session_id, header, projections=self._projections, clock=self._clock
        )
        guard(session, strict)
        return session

    def _restore(self, session_id: str, stored: StoredLog, *, repair: bool) -> Restored:
        return restore_session(
            session_id, stored, repair=repair, projections=self._projections, clock=self._clock
        )

    def _resume_write(
        self, stored: StoredLog, restored: Restored
    ) -> tuple[Sequence[Any], int] | None:
        """What ``open`` must write before attaching: ``(events, next_seq)``, or nothing.

        A log migrated in memory is written whole as a new format-4 artifact beside the
        untouched original (spec/persistence.md §5.5); otherwise the repair closers and the
        end-seed marker follow the committed events (salvaged torn-tail events included).
        """
        session = restored.session
        if restored.migrated_from is not None:
            return list(session.events), 0
        committed = len(stored.events)
        repaired = session.events[committed:]
        return (repaired, committed) if repaired else None

    def _live_view(self, session_id: str) -> Session | None:
        """``inspect`` of a session open for writing here: its events as they are now."""
        live = self._live.get(session_id)
        if live is None:
            return None
        events = live[0].events
        closers = open_turn_closers(events, "interrupted")
        return Session.from_events(
            session_id,
            [*events, *closers],
            live[0].header,
            inherited_event_count=live[0].inherited_event_count,
            restore=True,
            projections=self._projections,
            clock=self._clock,
        )

    def _fork_ids(self, session_id: str, child_id: str | None) -> tuple[str, str | None]:
        """The checked source and child ids of a fork."""
        return check_session_id(session_id), None if child_id is None else check_session_id(
            child_id
        )

    def _fork_source(
        self, session_id: str, stored: StoredLog | None
    ) -> tuple[Sequence[Mapping[str, Any]], Mapping[str, Any]]:
        """The events and header a fork inherits: the live session's, or the stored ones.

        Raises:
            SessionForkError: ``SESSION_NOT_FOUND`` when neither exists.
        """
        live = self._live.get(session_id)
        if live is not None:
            return live[0].events, live[0].header
        if stored is None:
            raise SessionForkError(
                f'session "{session_id}" not found', code="SESSION_NOT_FOUND", session_id=session_id
            )
        restored = self._restore(session_id, stored, repair=False)
        # The rebuilt view ends with the end-seed marker a resume would add; that event is not
        # in the stored log, so the child must not inherit it (nor may a boundary name it): the
        # child's prefix is exactly what the source has stored.
        source = restored.session
        return source.events[: restored.stored_events], source.header

    def _fork_child(
        self,
        session_id: str,
        source: tuple[Sequence[Mapping[str, Any]], Mapping[str, Any]],
        boundary: int | None,
        child_id: str | None,
    ) -> Session:
        """The detached fork child (spec/core.md §10), before it is written."""
        events, source_header = source
        return fork_child(
            session_id,
            events,
            source_header,
            boundary=boundary,
            child_id=child_id,
            created_at=self._clock(),
            projections=self._projections,
            clock=self._clock,
            stored=True,
        )

    def _page_after(self, limit: int, cursor: str | None) -> tuple[int, str] | None:
        """The key a page starts after (``list_page``'s arguments checked).

        Raises:
            StoreError: for a ``limit`` out of range or a cursor no page handed out.
        """
        if type(limit) is not int or not 1 <= limit <= MAX_PAGE:
            raise StoreError(f"limit must be an integer from 1 to {MAX_PAGE}, got {limit!r}")
        return None if cursor is None else decode_cursor(cursor)

    def _page(self, found: Sequence[SessionInfo], limit: int) -> SessionPage:
        """The page of ``limit + 1`` sessions found, and the cursor when there are more."""
        page = tuple(found[:limit])
        more = len(found) > limit
        return SessionPage(sessions=page, cursor=encode_cursor(page[-1]) if more else None)

    @staticmethod
    def _sorted(infos: Iterable[SessionInfo]) -> list[SessionInfo]:
        return sorted(infos, key=lambda info: (info.created_at, info.id))


def already_exists(session_id: str) -> SessionAlreadyExists:
    """``session "<id>" already exists``."""
    return SessionAlreadyExists(f'session "{session_id}" already exists', session_id=session_id)


def fork_exists(session_id: str, child_id: str) -> SessionForkError:
    """The fork error of a child id that is taken."""
    return SessionForkError(
        f'session "{child_id}" already exists', code="SESSION_ALREADY_EXISTS", session_id=session_id
    )


def already_open(session_id: str) -> SessionLocked:
    """A session already open for writing in this store."""
    return SessionLocked(
        f'session "{session_id}" is already open for writing in this store', session_id=session_id
    )


def open_here(session_id: str) -> SessionLocked:
    """``delete`` of a session open for writing in this store."""
    return SessionLocked(
        f'session "{session_id}" is open for writing in this store; close it first',
        session_id=session_id,
    )


def guard(session: Session, strict: bool) -> None:
    """Structure on by default: spec/core.md §11 checked at every append from the log's end."""
    if strict:
        install_invariants(session, loaded=True)
