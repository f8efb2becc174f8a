"""The ``postgresql://`` store: the contract, then what is PostgreSQL's own.

Every test runs against the real server at 127.0.0.1:5432 in a schema of its own
(``postgres_url`` in ``tests/conftest.py``). PostgreSQL's own scenarios: the schema is created
once, versioned and refused when it is not this build's; appends are fenced by the expected
seq and by the writer's lease; an append whose COMMIT outcome is unknown (the connection cut by
``pg_terminate_backend``) is recognised when it landed and never written twice; leases expire
and are taken over; followers wake up on ``NOTIFY``; no psycopg exception leaks.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agentlog import Event, aio
from agentlog.errors import SessionLocked, StoreError
from agentlog.stores import Backend, Store, open_backend, open_store
from agentlog.stores.postgres import CHANNEL
from tests.conftest import POSTGRES_SERVER
from tests.stores.contract import StoreContract, clock, one_turn, start_turn, wire


def schema_of(url: str) -> str:
    return url.rsplit("schema=", 1)[1].split("&", 1)[0]


def admin() -> psycopg.Connection[Any]:
    return psycopg.connect(POSTGRES_SERVER, autocommit=True)


def dump(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the store's schema (a lease without its moving expiry)."""
    schema = schema_of(url)
    with admin() as connection:
        tables = [
            row[0]
            for row in connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (schema,),
            )
        ]
        state: dict[str, list[tuple[Any, ...]]] = {}
        for table in sorted(tables):
            columns = "session_id, host, pid, token" if table == "leases" else "*"
            state[table] = [
                tuple(row)
                for row in connection.execute(
                    f"SELECT {columns} FROM {schema}.{table} ORDER BY 1, 2"
                )
            ]
        return state


class TestPostgres(StoreContract):
    url: str

    @pytest.fixture(autouse=True)
    def _schema(self, postgres_url: str) -> None:
        self.url = postgres_url

    def store_url(self, tmp_path: Path) -> str:
        return self.url

    def raw_location(self, tmp_path: Path, session_id: str) -> str:
        return self.url

    def make_store(self, tmp_path: Path, **options: Any) -> Store:
        return open_store(self.url, **options)

    def make_backend(self, tmp_path: Path) -> Backend:
        return open_backend(self.url)

    def stored_state(self, tmp_path: Path) -> object:
        return dump(self.url)

    def damage(self, tmp_path: Path, session_id: str, seq: int) -> bool:
        with admin() as connection:
            connection.execute(
                f"UPDATE {schema_of(self.url)}.events SET data = '{{not json'::bytea "
                "WHERE session_id = %s AND seq = %s",
                (session_id, seq),
            )
        return True

    def assert_names_lock(self, refused: SessionLocked) -> None:
        assert "(lease of " in str(refused)
        assert " pid " in str(refused)

    def kept_copy_exists(self, saved_to: str) -> bool:
        stamp = int(saved_to.rsplit("cut_time ", 1)[1])
        with admin() as connection:
            row = connection.execute(
                f"SELECT count(*) FROM {schema_of(self.url)}.cuts WHERE cut_time = %s", (stamp,)
            ).fetchone()
        return row is not None and row[0] > 0

    def test_torn_tail_is_dropped_only_when_opened(
        self, tmp_path: Path, stores: Any, store: Store
    ) -> None:
        """No torn tail exists on PostgreSQL: each append is one transaction, so a writer that
        crashed mid-turn left whole appends only, and its log reads with nothing torn."""
        crashed = self.crashed_in_turn_two(store)
        backend = self.make_backend(tmp_path)
        try:
            stored = backend.read("crashed")
        finally:
            backend.close()
        assert stored.torn is None
        assert wire(stored.events) == wire(crashed.events)

    def test_a_full_disk_fails_the_append_names_the_cause_and_changes_nothing(
        self, tmp_path: Path, stores: Any
    ) -> None:
        """The server's own ``disk_full`` (SQLSTATE 53100), raised inside the append's
        transaction by a trigger: the append fails naming the cause and the session, nothing
        of it is stored, and once the cause is gone the same session appends again."""
        schema = schema_of(self.url)
        store = stores()
        session = store.create("s1")
        one_turn(session, 1)
        before = dump(self.url)
        with admin() as connection:
            connection.execute(
                f"CREATE FUNCTION {schema}.disk_is_full() RETURNS trigger LANGUAGE plpgsql AS $$ "
                "BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' "
                "USING ERRCODE = 'disk_full'; END $$"
            )
            connection.execute(
                f"CREATE TRIGGER disk_is_full BEFORE INSERT ON {schema}.events "
                f"FOR EACH ROW EXECUTE FUNCTION {schema}.disk_is_full()"
            )
        seq = session.seq
        with pytest.raises(StoreError) as failed:
            session.append("turn/start", {"turn": 2})
        assert str(failed.value).startswith(f"PostgreSQL store '{POSTGRES_SERVER}")
        assert 'session "s1"' in str(failed.value)
        assert ": disk full (" in str(failed.value)
        assert not isinstance(failed.value.__cause__, StoreError)
        assert session.seq == seq
        assert dump(self.url) == before
        with admin() as connection:
            connection.execute(f"DROP TRIGGER disk_is_full ON {schema}.events")
        session.append("turn/start", {"turn": 2})
        session.close()
        assert [e.type for e in stores().inspect("s1").events][seq] == "turn/start"
        assert wire(stores().inspect("s1").events)[:seq] == wire(session.events)[:seq]


# --- LISTEN / NOTIFY ----------------------------------------------------------------------


def test_each_committed_append_sends_one_notification(postgres_url: str) -> None:
    """Three durable appends and one ``batch()``: four commits, four notifications."""
    schema = schema_of(postgres_url)
    with admin() as listener, open_store(postgres_url, clock=clock) as store:
        listener.execute(f"LISTEN {CHANNEL}")
        session = store.create("s1")
        start_turn(session, 1)  # three durable appends
        with session.batch():
            session.append("step/end", {"turn": 1, "step": 1})
            session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        # Other tests' schemas notify on the same channel: only this schema's count.
        received = [
            n.payload for n in listener.notifies(timeout=1.0) if n.payload.startswith(schema)
        ]
    assert received == [f"{schema} s1"] * 4


def test_a_follower_wakes_up_on_notify_not_on_its_interval(postgres_url: str) -> None:
    """``Store.follow`` with a 30 s interval still yields an append at once: the backend's
    ``wait_for_append`` returns on the session's ``NOTIFY``."""
    with open_store(postgres_url, clock=clock) as writer_store:
        session = writer_store.create("s1")
        session.append("turn/start", {"turn": 1})
        seen: list[tuple[float, Event]] = []

        def follow() -> None:
            with open_store(postgres_url, read_only=True) as reader:
                for event in reader.follow("s1", interval=30.0):
                    seen.append((time.monotonic(), event))
                    if event.seq == 1:
                        return

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        deadline = time.monotonic() + 10
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # the follower is waiting on LISTEN now
        appended = time.monotonic()
        session.append("step/start", {"turn": 1, "step": 1})
        follower.join(10)
        assert not follower.is_alive()
        assert [event.seq for _, event in seen] == [0, 1]
        assert seen[1][0] - appended < 3.0
        session.close()


# --- agentlog.aio ---------------------------------------------------------------------------


def test_async_sessions_on_postgresql_append_concurrently_without_blocking_the_loop(
    postgres_url: str,
) -> None:
    """Ten tasks, each with its own session, append turns through ``agentlog.aio``; the event
    loop keeps ticking meanwhile, and a second store is refused every live session."""

    async def scenario() -> tuple[int, list[list[str]]]:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        async def worker(store: aio.AsyncStore, index: int) -> None:
            session = await store.create(f"s{index}")
            for turn in (1, 2):
                await session.append("turn/start", {"turn": turn})
                async with session.batch():
                    await session.append("step/start", {"turn": turn, "step": 1})
                    await session.append("step/end", {"turn": turn, "step": 1})
                await session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})

        async with await aio.open_store(postgres_url, clock=clock) as store:
            tick = asyncio.create_task(ticker())
            await asyncio.gather(*(worker(store, index) for index in range(10)))
            async with await aio.open_store(postgres_url) as other:
                with pytest.raises(SessionLocked):
                    await other.open("s3")
            stop.set()
            await tick
        async with await aio.open_store(postgres_url, clock=clock) as store:
            views = [await store.inspect(f"s{index}") for index in range(10)]
        return ticks, [[event.type for event in view.events] for view in views]

    ticks, logs = asyncio.run(scenario())
    turn = ["turn/start", "step/start", "step/end", "turn/end"]
    assert logs == [[*turn, *turn, "session/end-seed"]] * 10
    assert ticks > 10
