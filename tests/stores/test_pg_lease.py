"""Writer leases on PostgreSQL: one writer per session across hosts, and takeover after a crash.

A "worker on another host" is a lease row whose owner names another host: that is all another
host's worker leaves in the database. Against the real server (``postgres_url``).
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
import pytest

from agentlog import check_provider_history
from agentlog.errors import SessionLocked
from agentlog.stores import open_store
from tests.conftest import POSTGRES_SERVER
from tests.stores.contract import clock, start_turn, wire


def schema_of(url: str) -> str:
    return url.rsplit("schema=", 1)[1].split("&", 1)[0]


def set_lease(url: str, session_id: str, *, host: str, expires_in: float) -> None:
    """Make the session's lease another host's worker's, expiring in ``expires_in`` seconds."""
    with psycopg.connect(POSTGRES_SERVER, autocommit=True) as connection:
        updated = connection.execute(
            f"UPDATE {schema_of(url)}.leases SET host = %s, pid = 1, "
            "expires_at = now() + make_interval(secs => %s) WHERE session_id = %s",
            (host, expires_in, session_id),
        ).rowcount
    assert updated == 1


def events_of(url: str, session_id: str) -> list[Any]:
    with open_store(url, clock=clock) as store:
        return wire(store.inspect(session_id).events)


def test_a_live_lease_of_another_host_refuses_the_session(postgres_url: str) -> None:
    with open_store(postgres_url) as first:
        session = first.create("s1")
        start_turn(session, 1)
        set_lease(postgres_url, "s1", host="worker-7.example", expires_in=3600)
        with open_store(postgres_url) as second, pytest.raises(SessionLocked) as refused:
            second.open("s1")
        assert str(refused.value).startswith('session "s1" is open for writing by another writer')
        assert "(lease of worker-7.example pid 1, expires in " in str(refused.value)
        assert refused.value.session_id == "s1"


def test_an_expired_lease_is_taken_over_with_repair_closers_and_the_old_writer_is_fenced(
    postgres_url: str,
) -> None:
    first = open_store(postgres_url)
    crashed = first.create("s1")
    start_turn(crashed, 1)
    # The writer's host went away: its lease is another host's, and it has run out.
    set_lease(postgres_url, "s1", host="gone.example", expires_in=-1)
    with open_store(postgres_url) as second, second.open("s1") as taken:
        closers = wire(taken.events)[crashed.seq : -1]
        assert [event["type"] for event in closers] == ["step/end", "turn/end"]
        assert taken.events[-1].type == "session/end-seed"
        check_provider_history(taken.derive_messages())
        after_takeover = events_of(postgres_url, "s1")
        # The old writer comes back: its append is refused and writes nothing.
        with pytest.raises(SessionLocked):
            crashed.append("step/end", {"turn": 1, "step": 1})
        assert events_of(postgres_url, "s1") == after_takeover
        assert after_takeover[: crashed.seq] == wire(crashed.events)
    first.close()


def test_a_live_writer_keeps_renewing_its_lease(postgres_url: str) -> None:
    url = f"{postgres_url}&lease_seconds=0.6"
    with open_store(url) as first:
        session = first.create("s1")
        start_turn(session, 1)
        time.sleep(1.5)  # well past one lease time: only renewals keep it
        with open_store(url) as second, pytest.raises(SessionLocked):
            second.open("s1")
        session.close()
        with open_store(url) as second, second.open("s1") as resumed:
            assert resumed.events[-1].type == "session/end-seed"


def test_releasing_a_session_frees_its_lease_at_once(postgres_url: str) -> None:
    with open_store(postgres_url) as store:
        store.create("s1").close()  # never written: nothing stored, no lease kept
        session = store.create("s2")
        start_turn(session, 1)
        session.close()
    with psycopg.connect(POSTGRES_SERVER, autocommit=True) as connection:
        left = connection.execute(f"SELECT count(*) FROM {schema_of(postgres_url)}.leases")
        assert left.fetchone() == (0,)


def test_a_hung_transaction_ends_when_its_lease_could_be_taken_over(postgres_url: str) -> None:
    """Every pooled connection has ``idle_in_transaction_session_timeout`` = the lease time."""
    with open_store(f"{postgres_url}&lease_seconds=2.5") as store:
        backend: Any = store._backend  # the pool's connection settings are the point
        with backend._connection() as connection:
            timeout = connection.execute("SHOW idle_in_transaction_session_timeout").fetchone()
            path = connection.execute("SHOW search_path").fetchone()
    assert timeout == ("2500ms",)
    assert path == (schema_of(postgres_url),)
