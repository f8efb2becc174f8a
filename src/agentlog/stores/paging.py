"""Listing sessions a page at a time, filtered: ``Store.list_page`` and its cursor.

A store of a fleet holds more sessions than one answer should carry. ``Store.list_page`` returns
them in creation order (``created_at``, then id — the order of ``Store.list``), filtered by
working directory and by last change, ``limit`` at a time; the page's ``cursor`` is where the
next page starts (keyset paging: a session created meanwhile never shifts a page). A backend
that can filter and page itself (PostgreSQL, by index) overrides ``Backend.list_page``; the
default here filters ``Backend.list``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from agentlog.errors import StoreError
from agentlog.stores.base import SessionInfo

__all__ = ["MAX_PAGE", "PageKey", "SessionPage", "decode_cursor", "encode_cursor", "page_of"]

MAX_PAGE: Final = 10_000
"""The largest ``limit`` a page may ask for."""
PageKey = tuple[int, str]
"""Where a page starts: after the session with this ``(created_at, id)``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionPage:
    """One page of ``Store.list_page``: sessions in creation order, and where the next starts."""

    sessions: tuple[SessionInfo, ...]
    """At most ``limit`` sessions, oldest first."""
    cursor: str | None
    """Pass as ``cursor`` for the next page; ``None`` when this page is the last."""


def encode_cursor(info: SessionInfo) -> str:
    """The cursor of the page that starts after ``info``."""
    return f"{info.created_at}:{info.id}"


def decode_cursor(cursor: str) -> PageKey:
    """The key a cursor names.

    Raises:
        StoreError: for a string no ``list_page`` handed out.
    """
    created_at, separator, session_id = cursor.partition(":")
    try:
        created = int(created_at)
    except ValueError:
        created = None
    if not separator or not session_id or created is None:
        raise StoreError(f"not a list_page cursor: {cursor!r}")
    return created, session_id


def page_of(
    sessions: Iterable[SessionInfo],
    *,
    cwd: str | None,
    updated_since: int | None,
    after: PageKey | None,
    limit: int,
) -> list[SessionInfo]:
    """The first ``limit`` sessions after ``after`` that match the filters, in creation order.

    ``updated_since`` keeps sessions whose last change (``updated_at``, else ``created_at``)
    is at or after that epoch-millisecond time.
    """
    matching = sorted(
        (
            info
            for info in sessions
            if (cwd is None or info.cwd == cwd)
            and (updated_since is None or _changed_at(info) >= updated_since)
            and (after is None or (info.created_at, info.id) > after)
        ),
        key=lambda info: (info.created_at, info.id),
    )
    return matching[:limit]


def _changed_at(info: SessionInfo) -> int:
    return info.created_at if info.updated_at is None else info.updated_at
