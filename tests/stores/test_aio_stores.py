"""``AsyncStoreCore`` on PostgreSQL: the store's own rules, awaited (closed stores, sessions
open here, idempotent closes, a session's lease released at its close)."""

from __future__ import annotations

import asyncio

import pytest

from agentlog import aio
from agentlog.errors import AgentlogError, SessionAlreadyExists, SessionLocked
from agentlog.stores import open_store
from tests.stores.contract import clock


def test_the_store_rules_hold_awaited(postgres_url: str) -> None:
    async def scenario() -> None:
        store = await aio.open_store(postgres_url, clock=clock)
        session = await store.create("s")
        with pytest.raises(SessionAlreadyExists, match='session "s" already exists'):
            await store.create("s")
        await session.append("turn/start", {"turn": 1})
        with pytest.raises(SessionLocked, match="close it first"):
            await store.delete("s")
        with pytest.raises(SessionLocked, match="already open for writing in this store"):
            await store.repair("s", cut_at=0)
        await session.close()
        await session.close()  # idempotent
        with open_store(postgres_url) as sync:  # the lease went with the close
            sync.open("s").close()
        result = await store.repair("s", cut_at=0)
        assert result.removed == 3  # turn/start, and the closer and marker the open added
        await store.close()
        await store.close()
        with pytest.raises(AgentlogError, match="is closed"):
            await store.list()

    asyncio.run(scenario())


def test_closing_the_store_flushes_and_releases_open_sessions(postgres_url: str) -> None:
    async def scenario() -> None:
        async with await aio.open_store(
            postgres_url, clock=clock, write_behind=True, batch_delay=600
        ) as store:
            session = await store.create("s")
            await session.append("turn/start", {"turn": 1})
        with open_store(postgres_url) as sync:
            reopened = sync.open("s")
            assert [e.type for e in reopened.events][:1] == ["turn/start"]
            reopened.close()

    asyncio.run(scenario())
