"""Paging helpers: the cursor round-trips any id, and the default page filters in order."""

from __future__ import annotations

import pytest

from agentlog.errors import StoreError
from agentlog.stores import SessionInfo
from agentlog.stores.paging import decode_cursor, encode_cursor, page_of


def info(session_id: str, created_at: int, **fields: object) -> SessionInfo:
    return SessionInfo(id=session_id, created_at=created_at, version=4, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("session_id", ["s1", "a:b:c", "é 😀", "-1:x"])
def test_a_cursor_names_its_session_whatever_the_id(session_id: str) -> None:
    assert decode_cursor(encode_cursor(info(session_id, -5))) == (-5, session_id)


@pytest.mark.parametrize("cursor", ["", "12", "x:s1", "12:", ":s1"])
def test_a_foreign_cursor_is_refused(cursor: str) -> None:
    with pytest.raises(StoreError, match="not a list_page cursor"):
        decode_cursor(cursor)


def test_the_default_page_filters_orders_and_stops_at_the_limit() -> None:
    sessions = [
        info("b", 2, cwd="/p", updated_at=50),
        info("a", 2, cwd="/p"),
        info("c", 1, cwd="/q", updated_at=10),
        info("d", 3, cwd="/p", updated_at=5),
    ]

    def ids(
        cwd: str | None = None,
        updated_since: int | None = None,
        after: tuple[int, str] | None = None,
        limit: int = 9,
    ) -> list[str]:
        page = page_of(sessions, cwd=cwd, updated_since=updated_since, after=after, limit=limit)
        return [i.id for i in page]

    assert ids() == ["c", "a", "b", "d"]
    assert ids(cwd="/p", after=(2, "a"), limit=1) == ["b"]
    assert ids(updated_since=5) == ["c", "b", "d"]
