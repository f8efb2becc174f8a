"""``agentlog.aio`` on PostgreSQL: psycopg's async connections, the sync store's contract.

Against the real server (``postgres_url``). The async store writes exactly the rows the sync
store writes; every append is durable when it returns (a sync reader sees it); async and sync
writers exclude each other with the same lease errors; a writer whose lease was taken over is
fenced; an append whose connection is cut around COMMIT (``pg_terminate_backend``) is stored
once; ``async with session.batch()`` is one transaction; forks, lists, pages and deletes work;
and no worker thread or executor is involved.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest

from agentlog import Event, Session, aio, thaw
from agentlog import messages as m
from agentlog.errors import (
    ConcurrentWriteError,
    EventRejected,
    SessionLocked,
    SessionNotFound,
    StoreError,
)
from agentlog.stores import open_store
from tests.stores.contract import clock, one_turn, start_turn
from tests.stores.pg import admin, schema_of, stored_events, with_lease
from tests.stores.pg_cut import CuttingProxy
from tests.stores.test_postgres import dump
from tests.stores.test_postgres_commit import CUTS, append_cut, check_reopens, rows

_T = TypeVar("_T")
LOCKED = re.compile(
    r'session "s" is open for writing by another writer \(lease of \S+ pid \d+, '
    r"expires in [\d.]+ s\)"
)


def turn_events(turn: int) -> list[Event]:
    """The events of turn ``turn`` of the contract's agent (a tool call, then the answer)."""
    scratch = Session.create("scratch", clock=clock)
    for earlier in range(1, turn):
        one_turn(scratch, earlier)
    start = scratch.seq
    one_turn(scratch, turn)
    return list(scratch.events[start:])


async def replay(session: aio.AsyncSession, events: list[Event]) -> list[Event]:
    """Append ``events`` (made elsewhere) to an async session, one awaited append each."""
    return [
        await session.append(
            event.type,
            thaw(event.data),
            surface_op=thaw(event.surface_op),
            source_event_seqs=thaw(event.source_event_seqs),
            ignorable=event.ignorable,
        )
        for event in events
    ]


def wires(events: list[Event]) -> list[dict[str, Any]]:
    return [event.to_wire() for event in events]


# --- the same rows, durable at once -------------------------------------------------------------


def test_async_and_sync_stores_write_identical_rows(postgres_url: str) -> None:
    """One session written by the sync store and again by the async one (in a second schema):
    turn 1 append by append, turn 2 as one group commit. Every table holds the same rows."""
    other = f"{postgres_url}_async"
    with open_store(postgres_url, clock=clock) as store:
        session = store.create("s", cwd="/work")
        one_turn(session, 1)
        with session.batch():
            one_turn(session, 2)
        session.close()

    async def scenario() -> None:
        async with await aio.open_store(other, clock=clock) as store:
            session = await store.create("s", cwd="/work")
            await replay(session, turn_events(1))
            async with session.batch():
                await replay(session, turn_events(2))
            await session.close()

    try:
        asyncio.run(scenario())
        assert dump(other) == dump(postgres_url)
        assert dump(other)["events"]
    finally:
        with admin() as connection:
            connection.execute(f"DROP SCHEMA IF EXISTS {schema_of(other)} CASCADE")


def test_every_async_append_is_durable_when_it_returns(postgres_url: str) -> None:
    """After each awaited append a sync reader, on its own connection, finds the event."""
    seen: list[int] = []

    async def scenario() -> None:
        async with await aio.open_store(postgres_url, clock=clock) as store:
            session = await store.create("s")
            for event in turn_events(1):
                appended = (await replay(session, [event]))[0]
                stored = stored_events(postgres_url, "s")
                assert stored[-1] == appended.to_wire()
                seen.append(len(stored))

    asyncio.run(scenario())
    assert seen == list(range(1, len(seen) + 1))


def test_a_sync_call_on_an_async_session_is_refused_and_changes_nothing(
    postgres_url: str,
) -> None:
    """The wrapped ``Session`` cannot wait for an async store: its own append is refused,
    naming the awaited call, before anything is applied or written."""

    async def scenario() -> None:
        async with await aio.open_store(postgres_url, clock=clock) as store:
            session = await store.create("s")
            await session.append("turn/start", {"turn": 1})
            with pytest.raises(StoreError, match=r"append with await session\.append\(\.\.\.\)"):
                session.sync.append("step/start", {"turn": 1, "step": 1})
            with pytest.raises(StoreError, match=r"close it with await session\.close\(\)"):
                session.sync.close()
            assert session.seq == 1
            assert len(stored_events(postgres_url, "s")) == 1

    asyncio.run(scenario())


# --- one writer per session -----------------------------------------------------------------


def test_async_and_sync_writers_exclude_each_other_with_the_same_error(postgres_url: str) -> None:
    async def async_holds() -> None:
        async with await aio.open_store(postgres_url, clock=clock) as store:
            session = await store.create("s")
            await session.append("turn/start", {"turn": 1})
            with open_store(postgres_url) as sync, pytest.raises(SessionLocked) as refused:
                sync.open("s")
            assert LOCKED.fullmatch(str(refused.value)), str(refused.value)
            with pytest.raises(SessionLocked) as again:
                await store.open("s")
            assert str(again.value) == 'session "s" is already open for writing in this store'

    asyncio.run(async_holds())

    async def sync_holds() -> None:
        with open_store(postgres_url, clock=clock) as sync:
            held = sync.open("s")  # the async writer's open turn is closed on the way in
            async with await aio.open_store(postgres_url) as store:
                with pytest.raises(SessionLocked) as refused:
                    await store.open("s")
                assert LOCKED.fullmatch(str(refused.value)), str(refused.value)
            held.close()

    asyncio.run(sync_holds())


def test_an_async_writer_whose_lease_was_taken_over_is_fenced(postgres_url: str) -> None:
    """The lease row expires (a stalled writer); a sync worker takes the session over and
    closes the turn; the async writer's next append fails with the sync store's text, and its
    session and the store stay as they were."""

    async def scenario() -> None:
        async with await aio.open_store(postgres_url, clock=clock) as store:
            session = await store.create("s")
            await replay(session, turn_events(1)[:3])
            with admin() as connection:
                connection.execute(
                    f"UPDATE {schema_of(postgres_url)}.leases "
                    "SET expires_at = now() - interval '1 second'"
                )
            with open_store(postgres_url, clock=clock) as sync:
                taker = sync.open("s")
                taken = stored_events(postgres_url, "s")
                assert [e["type"] for e in taken[3:]][-2:] == ["turn/end", "session/end-seed"]
                with pytest.raises(SessionLocked) as fenced:
                    await session.append("step/end", {"turn": 1, "step": 1})
                assert str(fenced.value) == (
                    'session "s" is open for writing by another writer (this writer\'s lease '
                    "expired and was taken over)"
                )
                assert session.seq == 3
                assert stored_events(postgres_url, "s") == taken
                taker.close()

    asyncio.run(scenario())


def test_a_stale_expected_seq_is_refused_as_by_the_sync_store(postgres_url: str) -> None:
    """The seq fence: an async backend append at a seq already taken is a
    ``ConcurrentWriteError`` with the sync store's text (the session is created by the first
    append at seq 1 of a session row the test writes through the sync store)."""
    from agentlog.stores.postgres_aio import AsyncPostgresBackend
    from agentlog.stores.url import parse_store_url

    with open_store(postgres_url, clock=clock) as sync:
        sync.create("s").append("turn/start", {"turn": 1})

    async def stale() -> str:
        backend = await AsyncPostgresBackend.connect(parse_store_url(postgres_url))
        try:
            lease = await backend.lease("s")
            header = {"version": 4, "id": "s", "createdAt": 1, "isSeeded": False}
            second = {"type": "step/start", "seq": 1, "time": 1, "data": {"turn": 1, "step": 1}}
            await backend.append(lease, header, [second], next_seq=1)
            with pytest.raises(ConcurrentWriteError) as refused:
                await backend.append(lease, header, [second], next_seq=1)
            return str(refused.value)
        finally:
            await backend.close()

    assert asyncio.run(stale()) == 'session "s" append starts at seq 1, stored next seq is 2'


# --- connection cut around COMMIT --------------------------------------------------------------


@pytest.fixture
def proxy() -> Iterator[CuttingProxy]:
    cutting = CuttingProxy()
    yield cutting
    cutting.close()


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own, so the cut can be made beside it."""
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    yield running
    running.call_soon_threadsafe(running.stop)
    thread.join(10)
    running.close()


def on(loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, _T]) -> _T:
    return asyncio.run_coroutine_threadsafe(coroutine, loop).result(60)


@pytest.mark.parametrize("cut", CUTS)
def test_an_async_creating_append_cut_around_commit_is_stored_once(
    postgres_url: str, proxy: CuttingProxy, loop: asyncio.AbstractEventLoop, cut: str
) -> None:
    """The creating append (its lease is the first COMMIT, the append the second) with its
    connection cut at ``cut``: stored exactly once; the session goes on and reopens valid."""
    url = proxy.url(postgres_url)
    store = on(loop, aio.open_store(url, clock=clock))
    try:
        session = on(loop, store.create("s"))
        first, _ = append_cut(
            url, proxy, cut, lambda: on(loop, session.append("turn/start", {"turn": 1})), nth=2
        )
        assert first.seq == 0
        assert stored_events(postgres_url, "s") == [first.to_wire()]
        assert rows(postgres_url, "s") == (1, 1, 1)
        rest = on(loop, replay(session, turn_events(1)[1:]))
    finally:
        on(loop, store.close())
    assert stored_events(postgres_url, "s") == wires([first, *rest])
    check_reopens(postgres_url, "s")


@pytest.mark.parametrize("cut", CUTS)
def test_an_async_batch_cut_around_commit_is_stored_once(
    postgres_url: str, proxy: CuttingProxy, loop: asyncio.AbstractEventLoop, cut: str
) -> None:
    """A whole turn in one ``async with session.batch()``, its connection cut at ``cut``:
    stored exactly once (sent again when it had not landed); the next turn follows it."""
    url = proxy.url(postgres_url)
    store = on(loop, aio.open_store(url, clock=clock))
    try:
        session = on(loop, store.create("s"))
        first = on(loop, replay(session, turn_events(1)))

        async def a_turn_in_one_batch() -> list[Event]:
            async with session.batch():
                return await replay(session, turn_events(2))

        second, _ = append_cut(url, proxy, cut, lambda: on(loop, a_turn_in_one_batch()))
        count = len(first) + len(second)
        assert stored_events(postgres_url, "s") == wires([*first, *second])
        assert rows(postgres_url, "s") == (count, count, count)
        third = on(loop, replay(session, turn_events(3)))
    finally:
        on(loop, store.close())
    assert stored_events(postgres_url, "s") == wires([*first, *second, *third])
    if cut in ("before", "after"):
        assert proxy.commits >= 2, "the cut append was never sent again"
    check_reopens(postgres_url, "s")


# --- group commit, forks, lists -------------------------------------------------------------


def test_an_async_batch_is_one_transaction(postgres_url: str) -> None:
    """A turn inside ``async with session.batch()`` lands as one transaction (one ``xmin`` for
    all its rows); a rejected append inside raises at its call and changes nothing."""

    async def scenario() -> int:
        async with await aio.open_store(postgres_url, clock=clock) as store:
            session = await store.create("s")
            async with session.batch():
                await replay(session, turn_events(1))
                with pytest.raises(EventRejected):
                    await session.append("no/such-type", {})
                with pytest.raises(SessionNotFound):  # nothing is written before the exit
                    stored_events(postgres_url, "s")
            return session.seq

    count = asyncio.run(scenario())
    with admin() as connection:
        found = connection.execute(
            f"SELECT count(*), count(DISTINCT xmin::text) FROM {schema_of(postgres_url)}.events"
        ).fetchone()
    assert found == (count, 1)


def test_forks_lists_pages_inspect_and_delete(postgres_url: str) -> None:
    async def scenario() -> None:
        async with await aio.open_store(postgres_url, clock=clock) as store:
            for sid, cwd in (("a", "/one"), ("b", "/two"), ("c", "/one")):
                session = await store.create(sid, cwd=cwd)
                await replay(session, turn_events(1))
                if sid != "c":
                    await session.close()
            with open_store(postgres_url) as sync:
                assert await store.list() == sync.list()
                assert await store.list_page(cwd="/one") == sync.list_page(cwd="/one")
            first = await store.list_page(limit=2)
            rest = await store.list_page(limit=2, cursor=first.cursor)
            assert [i.id for i in first.sessions] == ["a", "b"]
            assert ([i.id for i in rest.sessions], rest.cursor) == (["c"], None)

            child = await store.fork("a", 2, "a-child")  # a turn cut open: forked closers
            assert child.sync.header["parentSession"] == "a"
            assert stored_events(postgres_url, "a-child") == wires(list(child.events))
            await child.append("turn/start", {"turn": 2})
            live = await store.fork("c", child_id="c-child")  # of a session open here
            assert wires(list(live.events))[:11] == stored_events(postgres_url, "c")[:11]
            view = await store.inspect("c")
            assert view.events[-1].type == "session/end-seed"
            await child.close()
            await store.delete("a-child")
            assert "a-child" not in {i.id for i in await store.list()}
            with pytest.raises(SessionLocked):
                await store.delete("c")

    asyncio.run(scenario())


def test_async_open_repairs_a_crashed_writers_turn(postgres_url: str) -> None:
    """A sync writer stops mid-turn (its lease released, as after a takeover); the async open
    writes the repair closers and the end-seed marker, durably, before it returns."""
    with open_store(postgres_url, clock=clock) as sync:
        crashed = sync.create("s")
        start_turn(crashed, 1)
        crashed.close()

    async def scenario() -> list[str]:
        async with await aio.open_store(postgres_url, clock=clock) as store:
            session = await store.open("s")
            assert wires(list(session.events)) == stored_events(postgres_url, "s")
            return [event.type for event in session.events]

    types = asyncio.run(scenario())
    assert types[-3:] == ["step/end", "turn/end", "session/end-seed"]


# --- the event loop, no threads ---------------------------------------------------------------


def test_postgresql_storage_runs_on_the_event_loop_without_threads(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``asyncio.to_thread`` and every executor refused, a whole session's life works,
    durably, and no thread is started; observers run on the loop's own thread."""

    def refused(*args: object, **kwargs: object) -> Any:
        raise AssertionError("storage work went to a thread")

    monkeypatch.setattr(asyncio, "to_thread", refused)
    observed: list[int] = []

    async def scenario() -> set[threading.Thread]:
        monkeypatch.setattr(asyncio.get_running_loop(), "run_in_executor", refused)
        before = set(threading.enumerate())
        async with await aio.open_store(postgres_url, clock=clock) as store:
            session = await store.create("s")
            session.add_observer(lambda _s, _e: observed.append(threading.get_ident()))
            await session.append("turn/start", {"turn": 1})
            assert len(stored_events(postgres_url, "s")) == 1  # durable on return
            async with session.batch():
                await replay(session, turn_events(1)[1:])
            await asyncio.gather(*(store.create(f"x{i}") for i in range(4)))
            await store.list()
            await store.fork("s", child_id="child")
            await session.close()
            await (await store.open("s")).close()
        return set(threading.enumerate()) - before

    assert asyncio.run(scenario()) == set()
    assert set(observed) == {threading.get_ident()}


def test_write_behind_queues_on_the_loop_and_flushes_on_a_timer(postgres_url: str) -> None:
    async def scenario() -> None:
        async with await aio.open_store(
            postgres_url, clock=clock, write_behind=True, batch_delay=600
        ) as store:
            session = await store.create("s")
            await replay(session, turn_events(1)[:2])
            assert not await store.list()  # queued only
            await session.flush()
            assert len(stored_events(postgres_url, "s")) == 2
        async with await aio.open_store(
            postgres_url, clock=clock, write_behind=True, batch_delay=0.05
        ) as store:
            session = await store.open("s")
            await session.append("turn/start", {"turn": 2})
            deadline = asyncio.get_running_loop().time() + 30
            while len(stored_events(postgres_url, "s")) < session.seq:
                assert asyncio.get_running_loop().time() < deadline, "never written"
                await asyncio.sleep(0.02)

    asyncio.run(scenario())


def test_read_only_and_unreachable_stores_fail_as_the_sync_store_does(postgres_url: str) -> None:
    with pytest.raises(StoreError) as no_store_sync:
        open_store(postgres_url, read_only=True)

    async def scenario() -> None:
        with pytest.raises(StoreError) as no_store:
            await aio.open_store(postgres_url, read_only=True)
        assert str(no_store.value) == str(no_store_sync.value)
        open_store(postgres_url).close()  # the schema is created
        async with await aio.open_store(postgres_url, read_only=True) as store:
            session = await store.create("s")
            with pytest.raises(StoreError) as refused:
                await session.append("user/message", m.user("hi"), surface_op="append")
            assert str(refused.value) == (
                f'store {postgres_url!r} is open read-only: session "s" cannot be written'
            )
            assert session.seq == 0
        with pytest.raises(StoreError, match="cannot reach the server"):
            await aio.open_store("postgresql://postgres@127.0.0.1:1/test?connect_timeout=2")

    asyncio.run(scenario())


def test_an_idle_async_writer_keeps_its_lease_by_an_asyncio_task(postgres_url: str) -> None:
    """With half-second leases, a session left idle for three lease times is still its
    writer's: the renewal runs as a task on the loop (no thread), and a sync worker is refused."""
    url = with_lease(postgres_url, 0.5)

    async def scenario() -> None:
        async with await aio.open_store(url, clock=clock) as store:
            session = await store.create("s")
            await session.append("turn/start", {"turn": 1})
            await asyncio.sleep(1.5)
            assert "agentlog-pg-leases" in {t.get_name() for t in asyncio.all_tasks()}
            with open_store(url) as sync, pytest.raises(SessionLocked):
                sync.open("s")
            await session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})

    asyncio.run(scenario())
    assert [e["type"] for e in stored_events(postgres_url, "s")] == ["turn/start", "turn/end"]
