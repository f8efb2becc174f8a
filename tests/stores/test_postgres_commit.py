"""An append whose COMMIT outcome is unknown is retried exactly once (issue 13).

The store's connection is cut with ``pg_terminate_backend`` from a second connection at four
points of an append's transaction:

``inside``
    while its INSERT waits for a table lock the test holds (before the COMMIT is sent);
``before``
    with the COMMIT held back by a proxy (``pg_cut.py``), so the server never receives it;
``during``
    while the server runs the COMMIT, or the commit of the store's one-statement append (a
    deferred constraint trigger the test adds makes it wait for an advisory lock the test
    holds);
``after``
    once the server committed, with its answer held back by the proxy.

In every case the append returns (the store reads back what is stored at those seqs on a new
connection: the same rows mean it landed, none that it did not, and it sends it again), the
events are stored exactly once at their seqs, and the session goes on and reopens valid. Both
the creating append (the session row comes with it) and a later ``batch()`` of a whole turn
are cut.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from agentlog import Session, check_invariants, check_provider_history
from agentlog.errors import SessionLocked
from agentlog.stores import open_store
from agentlog.stores._pg_append import ONE_STATEMENT
from tests.stores.concurrency_child import one_turn
from tests.stores.pg import admin, schema_of, stored_events, waiting_on
from tests.stores.pg_cut import CuttingProxy

CUTS = ("inside", "before", "during", "after")


@pytest.fixture
def proxy() -> Iterator[CuttingProxy]:
    cutting = CuttingProxy()
    yield cutting
    cutting.close()


def rows(url: str, sid: str) -> tuple[int, int, int | None]:
    """Event rows, distinct seqs, and the session row's stored next seq."""
    schema = schema_of(url)
    with admin() as connection:
        count = connection.execute(
            f"SELECT count(*), count(DISTINCT seq) FROM {schema}.events WHERE session_id = %s",
            (sid,),
        ).fetchone()
        tail = connection.execute(
            f"SELECT next_seq FROM {schema}.sessions WHERE id = %s", (sid,)
        ).fetchone()
    assert count is not None
    return int(count[0]), int(count[1]), None if tail is None else int(tail[0])


def cut_in_background(
    url: str, cut: str, proxy: CuttingProxy, held: threading.Event, nth: int
) -> Callable[[], list[int]]:
    """Prepare ``cut`` of the ``nth`` COMMIT; return a function run beside the append that
    makes it (the server pids it ended)."""
    schema = schema_of(url)
    if cut in ("before", "after"):
        proxy.arm(cut, nth=nth)  # type: ignore[arg-type]  # one of the proxy's two cuts

        def by_proxy() -> list[int]:
            assert held.wait(30)
            deadline = time.monotonic() + 30
            while not proxy.cuts:
                assert time.monotonic() < deadline, "the proxy never cut"
                time.sleep(0.005)
            return [pid for _, pid in proxy.cuts]

        return by_proxy
    if cut == "inside":
        locker = admin()
        locker.execute("BEGIN")
        locker.execute(f"LOCK TABLE {schema}.events IN EXCLUSIVE MODE")

        def inside() -> list[int]:
            with admin() as watcher:
                deadline = time.monotonic() + 30
                while not (pids := waiting_on(watcher, url, "events")):
                    assert time.monotonic() < deadline, "the INSERT never waited"
                    time.sleep(0.005)
                watcher.execute("SELECT pg_terminate_backend(%s)", (pids[0],))
            locker.execute("ROLLBACK")
            locker.close()
            return pids[:1]

        return inside
    key = random.randrange(1, 2**31)
    blocker = admin()
    blocker.execute("SELECT pg_advisory_lock(%s)", (key,))
    with admin() as connection:
        connection.execute(
            f"CREATE FUNCTION {schema}.hold_commit() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN PERFORM pg_advisory_xact_lock_shared({key}); RETURN NULL; END $$"
        )
        connection.execute(
            f"CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON {schema}.events "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "
            f"{schema}.hold_commit()"
        )

    def during() -> list[int]:
        with admin() as watcher:
            deadline = time.monotonic() + 30
            while True:
                found = watcher.execute(
                    "SELECT l.pid, a.query FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
                    "WHERE l.locktype = 'advisory' AND l.objid = %s AND NOT l.granted",
                    (key,),
                ).fetchall()
                if found:
                    break
                assert time.monotonic() < deadline, "the COMMIT never waited"
                time.sleep(0.005)
            pid, query = found[0]
            # Stopped inside the COMMIT, or the one-statement append's own commit.
            assert "COMMIT" in query.upper() or query.startswith(ONE_STATEMENT), query
            watcher.execute("SELECT pg_terminate_backend(%s)", (pid,))
            # Unlock before dropping the trigger: the store's retry may already wait at its
            # COMMIT for this lock while holding the table, which DROP TRIGGER must wait for.
            blocker.execute("SELECT pg_advisory_unlock(%s)", (key,))
            blocker.close()
            watcher.execute(f"DROP TRIGGER hold_commit ON {schema}.events")
        return [pid]

    return during


def append_cut(
    url: str, proxy: CuttingProxy, cut: str, append: Callable[[], Any], *, nth: int = 1
) -> tuple[Any, list[int]]:
    """Run ``append`` while the connection is cut at ``cut``; its result and the ended pids.

    ``nth``: the append's COMMIT is the nth the store sends from now (the first append of a
    new session takes its lease in a transaction of its own first).
    """
    held = threading.Event()
    make_cut = cut_in_background(url, cut, proxy, held, nth)
    ended: list[int] = []
    failures: list[BaseException] = []

    def cutter() -> None:
        try:
            ended.extend(make_cut())
        except BaseException as exc:  # asserted below
            failures.append(exc)

    results: list[Any] = []

    def appender() -> None:
        try:
            results.append(append())
        except BaseException as exc:  # asserted below
            failures.append(exc)

    thread = threading.Thread(target=cutter)
    thread.start()
    held.set()
    writer = threading.Thread(target=appender, daemon=True)  # a hung append fails the test
    writer.start()
    writer.join(60)
    thread.join(60)
    assert not writer.is_alive(), "the append hung"
    assert not failures, failures
    (result,) = results
    assert ended, "no connection was cut"
    with admin() as connection:  # the cut connection is gone from the server
        alive = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (ended,)
        ).fetchone()
    assert alive == (0,)
    return result, ended


@pytest.mark.parametrize("cut", CUTS)
def test_a_creating_append_cut_around_commit_is_stored_once(
    postgres_url: str, proxy: CuttingProxy, cut: str
) -> None:
    url = proxy.url(postgres_url)
    with open_store(url) as store:
        session = store.create("s")
        event, _ = append_cut(
            url, proxy, cut, lambda: session.append("turn/start", {"turn": 1}), nth=2
        )
        assert event.seq == 0
        assert stored_events(postgres_url, "s") == [event.to_wire()]
        assert rows(postgres_url, "s") == (1, 1, 1)
        rest = [e.to_wire() for e in one_turn_rest(session)]
        session.close()
    assert stored_events(postgres_url, "s") == [event.to_wire(), *rest]
    check_reopens(postgres_url, "s")


@pytest.mark.parametrize("cut", CUTS)
def test_a_batch_cut_around_commit_is_stored_once(
    postgres_url: str, proxy: CuttingProxy, cut: str
) -> None:
    url = proxy.url(postgres_url)
    with open_store(url) as store:
        session = store.create("s")
        first = [e.to_wire() for e in one_turn(session, 1, "first ")]

        def a_turn_in_one_batch() -> list[dict[str, Any]]:
            with session.batch():
                return [e.to_wire() for e in one_turn(session, 2, "second ")]

        second, _ = append_cut(url, proxy, cut, a_turn_in_one_batch)
        assert stored_events(postgres_url, "s") == [*first, *second]
        count = len(first) + len(second)
        assert rows(postgres_url, "s") == (count, count, count)
        third = [e.to_wire() for e in one_turn(session, 3, "third ")]
        session.close()
    assert stored_events(postgres_url, "s") == [*first, *second, *third]
    if cut in ("before", "after"):
        assert proxy.commits >= 2, "the cut append was never sent again"
    check_reopens(postgres_url, "s")


def one_turn_rest(session: Session) -> Iterator[Any]:
    """The rest of a turn whose ``turn/start`` is stored (a user prompt, an answer, the end)."""
    from agentlog import messages as m

    yield session.append("step/start", {"turn": 1, "step": 1})
    yield session.append("user/message", m.user("hello", id="u-1"), surface_op="append")
    reply = m.assistant([m.text("hi")], provider="scripted", model="m", turn=1, step=1, id="a-1")
    yield session.append("assistant/message", reply, surface_op="append")
    yield session.append("step/end", {"turn": 1, "step": 1})
    yield session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})


def check_reopens(url: str, sid: str) -> None:
    with open_store(url) as store, store.open(sid) as session:
        check_invariants(session.events)
        check_provider_history(session.derive_messages())


def test_the_proxy_passes_everything_when_unarmed(postgres_url: str, proxy: CuttingProxy) -> None:
    """The proof's own instrument: through the proxy, the store works as directly."""
    with psycopg.connect(proxy.url(postgres_url).split("?")[0] + "?sslmode=disable") as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    with open_store(proxy.url(postgres_url)) as store:
        session = store.create("plain")
        events = [e.to_wire() for e in one_turn(session, 1, "")]
        session.close()
    assert stored_events(postgres_url, "plain") == events
    assert proxy.cuts == []


@pytest.mark.parametrize("cut", ["before", "after"])
def test_a_lease_whose_commit_is_cut_is_held_once(
    postgres_url: str, proxy: CuttingProxy, cut: str
) -> None:
    """The first append of a session takes its lease in a transaction of its own; with that
    COMMIT cut, ``after`` the lease landed (read back and found this writer's) and ``before``
    it did not (taken again): either way the append goes on at once, and the session is this
    writer's alone."""
    url = proxy.url(postgres_url)
    with open_store(url) as store:
        session = store.create("s")
        event, _ = append_cut(
            url, proxy, cut, lambda: session.append("turn/start", {"turn": 1}), nth=1
        )
        assert event.seq == 0
        assert stored_events(postgres_url, "s") == [event.to_wire()]
        with open_store(postgres_url) as other, pytest.raises(SessionLocked):
            other.open("s")
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
