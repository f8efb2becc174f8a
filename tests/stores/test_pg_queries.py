"""The PostgreSQL reads and lists are the same operations in the sync and the async store:
the same sessions, pages and logs, and a damaged row is the same ``CorruptLog``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentlog import thaw
from agentlog.errors import CorruptLog
from agentlog.stores import open_backend, open_store
from agentlog.stores.postgres_aio import AsyncPostgresBackend
from agentlog.stores.url import parse_store_url
from tests.stores.contract import clock, one_turn
from tests.stores.pg import admin, schema_of


def both(url: str, name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``name(*args, **kwargs)`` on the sync backend and on the async one (or what it raised)."""
    sync = open_backend(url)
    try:
        try:
            plain: Any = getattr(sync, name)(*args, **kwargs)
        except CorruptLog as exc:
            plain = exc
    finally:
        sync.close()

    async def on_async() -> Any:
        backend = await AsyncPostgresBackend.connect(parse_store_url(url))
        try:
            return await getattr(backend, name)(*args, **kwargs)
        except CorruptLog as exc:
            return exc
        finally:
            await backend.close()

    return plain, asyncio.run(on_async())


def test_reads_lists_and_pages_are_the_same(postgres_url: str) -> None:
    with open_store(postgres_url, clock=clock) as store:
        for sid, cwd in (("a", "/x"), ("b", "/y")):
            session = store.create(sid, cwd=cwd)
            one_turn(session)
            session.close()
    plain, awaited = both(postgres_url, "read", "a", 3)
    assert [thaw(e) for e in plain.events] == [thaw(e) for e in awaited.events]
    assert plain.events[0]["seq"] == 3
    plain, awaited = both(postgres_url, "list")
    assert sorted(plain, key=str) == sorted(awaited, key=str)
    page = {"cwd": "/y", "updated_since": None, "after": None, "limit": 5}
    plain, awaited = both(postgres_url, "list_page", **page)
    assert list(plain) == list(awaited)
    assert [info.id for info in awaited] == ["b"]


def test_a_damaged_row_is_the_same_corrupt_log(postgres_url: str) -> None:
    with open_store(postgres_url, clock=clock) as store:
        session = store.create("s")
        one_turn(session)
        session.close()
    with admin() as connection:
        connection.execute(
            f"UPDATE {schema_of(postgres_url)}.events SET data = '{{not json'::bytea "
            "WHERE session_id = 's' AND seq = 2"
        )
    plain, awaited = both(postgres_url, "read", "s")
    assert isinstance(awaited, CorruptLog)
    assert str(awaited) == str(plain)
    assert (awaited.seq, awaited.following) == (2, plain.following)
    with pytest.raises(CorruptLog):
        raise awaited
