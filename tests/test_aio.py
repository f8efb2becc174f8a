"""``agentlog.aio`` mirrors the sync store API, awaited (STYLE.md §8), without blocking the loop."""

from __future__ import annotations

import asyncio
import inspect
import threading
from pathlib import Path

import pytest

from agentlog import Session, Store, aio
from agentlog import messages as m


def public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(cls).items()
        if callable(member) and not name.startswith("_")
    }


@pytest.mark.parametrize(
    ("sync", "asynchronous"),
    [(Store, aio.AsyncStore), (Session, aio.AsyncSession)],
    ids=["store", "session"],
)
def test_async_twins_have_the_sync_names_and_signatures(sync: type, asynchronous: type) -> None:
    mirrored = public_methods(asynchronous)
    for name, signature in mirrored.items():
        assert name in dir(sync), name
        sync_signature = inspect.signature(getattr(sync, name))
        assert list(signature.parameters) == list(sync_signature.parameters), name
        assert inspect.getdoc(getattr(asynchronous, name)), name
    for name in ("create", "open", "inspect", "list", "fork", "flush", "close"):
        if sync is Store:
            assert inspect.iscoroutinefunction(getattr(asynchronous, name)), name
    for name in ("append", "flush", "close"):
        if sync is Session:
            assert inspect.iscoroutinefunction(getattr(asynchronous, name)), name


def test_open_store_mirrors_the_sync_signature() -> None:
    from agentlog.stores import open_store

    assert list(inspect.signature(aio.open_store).parameters) == list(
        inspect.signature(open_store).parameters
    )


def test_a_session_round_trips_through_the_async_facade(tmp_path: Path) -> None:
    url = f"jsonl:///{tmp_path}"

    async def scenario() -> list[str]:
        store = await aio.open_store(url)
        async with store:
            session = await store.create("s1")
            await session.append("turn/start", {"turn": 1})
            await session.append("user/message", m.user("hi", id="u1"), surface_op="append")
            await session.close()
            resumed = await store.open("s1")
            types = [event.type for event in resumed.events]
            assert [msg["id"] for msg in resumed.derive_messages()] == ["u1"]
            await resumed.close()
            listed = await store.list()
            assert [info.id for info in listed] == ["s1"]
            return types

    assert asyncio.run(scenario()) == ["turn/start", "user/message", "turn/end", "session/end-seed"]


def test_durable_appends_run_off_the_event_loop_thread(tmp_path: Path) -> None:
    """The fsync happens in a worker thread: the loop thread never runs the backend write."""
    threads: list[int] = []

    async def scenario() -> None:
        store = await aio.open_store(f"jsonl:///{tmp_path}")
        async with store:
            session = await store.create("s1")
            session.add_observer(lambda _s, _e: threads.append(threading.get_ident()))
            await session.append("turn/start", {"turn": 1})

    asyncio.run(scenario())
    assert threads
    assert threading.main_thread().ident not in threads


def test_concurrent_appends_on_one_session_are_serialized() -> None:
    async def scenario() -> Session:
        store = await aio.open_store("memory:")
        async with store:
            session = await store.create("s1")
            await session.append("turn/start", {"turn": 1})
            await asyncio.gather(
                *(
                    session.append("user/message", m.user(f"m{i}"), surface_op="append")
                    for i in range(20)
                )
            )
            assert session.seq == 21
            return session.sync

    session = asyncio.run(scenario())
    assert [event.seq for event in session.events] == list(range(21))


def test_repair_is_awaited_like_the_rest(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, int]:
        async with await aio.open_store(f"sqlite:///{tmp_path}/s.db") as store:
            session = await store.create("s")
            await session.append("turn/start", {"turn": 1})
            await session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            await session.close()
            result = await store.repair("s", cut_at=1)
            return result.removed, len((await store.inspect("s")).events)

    assert asyncio.run(scenario()) == (1, 3)  # turn/start, its interrupted turn/end, the marker
