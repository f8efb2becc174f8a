"""``AsyncSession``: reads stay synchronous, ``async with batch()`` is one durable write.

Run on the worker-thread facade over a real SQLite file (the async-native PostgreSQL sessions
are covered by ``test_postgres_aio.py`` and the contract in ``test_postgres_aio_contract.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from agentlog import aio, open_store
from agentlog import messages as m
from agentlog.stores import Lease


def stored_types(url: str, session_id: str) -> list[str]:
    """The types of the events stored so far, as stored (no repair view)."""
    with open_store(url, read_only=True) as store:
        raw = store.read_raw(session_id, ("turn/start", "user/message", "turn/end"))
        return [event["type"] for event in raw.events]


def test_reads_are_synchronous_views_of_the_session(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with await aio.open_store(f"sqlite:///{tmp_path}/s.db") as store:
            session = await store.create("s1")
            await session.append("turn/start", {"turn": 1})
            await session.append("user/message", m.user("hi", id="u1"), surface_op="append")
            assert session.seq == 2
            assert session.event_at(1).type == "user/message"
            assert [message["id"] for message in session.derive_messages()] == ["u1"]
            assert session.events is session.sync.events
            await session.close()

    asyncio.run(scenario())


def test_a_batch_is_one_durable_write_and_nested_blocks_join_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    writes: list[int] = []

    async def scenario() -> None:
        async with await aio.open_store(url) as store:
            session = await store.create("s1")
            backend = store._store()._backend  # type: ignore[union-attr]  # the facade's Store
            append = backend.append

            def counted(
                lease: Lease,
                header: Mapping[str, Any],
                events: Sequence[Mapping[str, Any]],
                *,
                next_seq: int,
            ) -> None:
                writes.append(len(events))
                append(lease, header, events, next_seq=next_seq)

            backend.append = counted  # type: ignore[method-assign]
            await session.append("turn/start", {"turn": 1})  # durable at once
            async with session.batch():
                await session.append("user/message", m.user("a"), surface_op="append")
                async with session.batch():
                    await session.append("user/message", m.user("b"), surface_op="append")
                assert stored_types(url, "s1") == ["turn/start"]  # the block is not written yet
            assert stored_types(url, "s1") == ["turn/start", "user/message", "user/message"]
            await session.close()

    asyncio.run(scenario())
    assert writes == [1, 2]


async def broken_block(session: aio.AsyncSession) -> None:
    async with session.batch():
        await session.append("user/message", m.user("a"), surface_op="append")
        raise RuntimeError("the tool broke")


def test_an_exception_in_a_batch_writes_what_was_accepted_then_raises(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"

    async def scenario() -> None:
        async with await aio.open_store(url) as store:
            session = await store.create("s1")
            await session.append("turn/start", {"turn": 1})
            with pytest.raises(RuntimeError, match="the tool broke"):
                await broken_block(session)
            assert stored_types(url, "s1") == ["turn/start", "user/message"]
            await session.close()

    asyncio.run(scenario())
