"""``Store``, the coordinator every backend shares: ids, leases, repair, inspect, close.

Run on the ``memory:`` backend (wrapped to fail on demand); what must hold for every backend is
in the contract (``contract.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from agentlog import AgentlogError, EventRejected, SeedRejected, check_invariants
from agentlog.errors import CorruptLog, FormatVersionError, SessionLocked, StoreError
from agentlog.stores import Lease, Store
from agentlog.stores.memory import MemoryBackend
from agentlog.values import JsonValue
from tests.stores.contract import (
    CLOCK,
    clock,
    end_seed,
    foreign_header,
    foreign_turn,
    one_turn,
    start_turn,
    wire,
)


class FlakyBackend(MemoryBackend):
    """A memory backend whose next appends fail with the errors queued in ``failures``."""

    def __init__(self) -> None:
        super().__init__("memory:")
        self.failures: list[Exception] = []

    def append(
        self,
        lease: Lease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        if self.failures:
            raise self.failures.pop(0)
        super().append(lease, header, events, next_seq=next_seq)


def write(backend: MemoryBackend, header: dict[str, Any], events: list[dict[str, Any]]) -> None:
    lease = backend.lease(header["id"])
    backend.append(lease, header, events, next_seq=0)
    lease.release()


def test_a_store_names_its_url() -> None:
    with Store(MemoryBackend("memory:")) as store:
        assert store.url == "memory:"
        assert repr(store) == "Store('memory:')"


def test_create_without_an_id_makes_a_uuid() -> None:
    with Store(MemoryBackend(), clock=clock) as store:
        session = store.create()
        assert str(uuid.UUID(session.id)) == session.id
        assert session.header["createdAt"] == CLOCK
        assert session.attached


def test_a_refused_cwd_reserves_nothing() -> None:
    with Store(MemoryBackend(), clock=clock) as store:
        with pytest.raises(SeedRejected, match="cwd must be an absolute path"):
            store.create("s1", cwd="relative/dir")
        store.create("s1", cwd="/abs").close()


def test_a_closed_store_refuses_everything() -> None:
    store = Store(MemoryBackend())
    store.close()
    for operation in (store.create, store.open, store.inspect, store.fork):
        with pytest.raises(AgentlogError, match=r"^store 'memory:' is closed$"):
            operation("s1")
    with pytest.raises(AgentlogError, match="is closed"):
        store.list()
    store.close()


def test_a_refused_open_releases_the_session() -> None:
    backend = MemoryBackend()
    write(backend, foreign_header("newer", version=5), foreign_turn())
    with Store(backend) as store:
        for _ in range(2):  # not SessionLocked the second time
            with pytest.raises(FormatVersionError):
                store.open("newer")
    assert backend._leases == set()


def test_a_failed_repair_write_leaves_the_log_as_it_was() -> None:
    backend = FlakyBackend()
    with Store(backend, clock=clock) as store:
        with store.create("s1") as session:
            start_turn(session, 1)
        backend.failures.append(StoreError("disk full"))
        with pytest.raises(StoreError, match="disk full"):
            store.open("s1")
        assert wire(backend.read("s1").events) == wire(session.events)
        with store.open("s1") as resumed:  # the lease was released; the repair is retried
            assert resumed.event_at(session.seq + 1).data["reason"] == {"kind": "interrupted"}


def test_an_invalid_stored_event_is_corruption_located_by_seq() -> None:
    backend = MemoryBackend()
    bad = {"type": "user/message", "time": CLOCK, "data": {"role": "user"}, "surfaceOp": "append"}
    write(backend, foreign_header("bad"), foreign_turn(bad))
    with Store(backend) as store, pytest.raises(CorruptLog) as refused:
        store.inspect("bad")
    assert str(refused.value).startswith('stored session "bad" failed validation at seq 1: ')
    assert refused.value.session_id == "bad"
    assert str(refused.value).endswith("lacks an identified message")
    assert isinstance(refused.value.__cause__, (EventRejected, SeedRejected))


def test_inspect_of_an_open_session_shows_it_closed_in_memory_only() -> None:
    backend = MemoryBackend()
    with Store(backend, clock=clock) as store:
        session = store.create("s1")
        one_turn(session)
        start_turn(session, 2)
        view = store.inspect("s1")
        n = session.seq
        assert wire(view.events)[:n] == wire(session.events)
        assert [e.type for e in view.events][n:] == ["step/end", "turn/end", "session/end-seed"]
        check_invariants(view.events)
        assert len(backend.read("s1").events) == n
        assert not view.attached
        session.append("step/end", {"turn": 2, "step": 1})  # the live session is unaffected


def test_flush_makes_every_open_session_durable() -> None:
    backend = MemoryBackend()
    with Store(backend, write_behind=True, batch_delay=3600, clock=clock) as store:
        first, second = store.create("a"), store.create("b")
        one_turn(first)
        second.append("turn/start", {"turn": 1})
        assert backend.list() == []
        store.flush()
        assert len(backend.read("a").events) == first.seq
        assert len(backend.read("b").events) == second.seq


def test_close_releases_every_session_even_when_a_flush_fails() -> None:
    backend = FlakyBackend()
    store = Store(backend, write_behind=True, batch_delay=3600, clock=clock)
    session = store.create("s1")
    session.append("turn/start", {"turn": 1})
    backend.failures.append(StoreError("disk full"))
    with pytest.raises(StoreError, match="disk full"):
        store.close()
    assert backend._leases == set()
    with pytest.raises(AgentlogError, match="is closed"):
        store.list()
    store.close()


def test_forking_without_a_child_id_makes_a_uuid() -> None:
    with Store(MemoryBackend(), clock=clock) as store:
        with store.create("src") as source:
            one_turn(source)
        child = store.fork("src")
        assert str(uuid.UUID(child.id)) == child.id
        assert child.inherited_event_count == source.seq
        with pytest.raises(SessionLocked):
            store.open(child.id)
        one_turn(child, 2)
        child.close()
        reopened = store.open(child.id)
        assert wire(reopened.events)[: child.seq] == wire(child.events)
        assert wire(reopened.events)[child.seq :] == [end_seed(child.seq)]


@pytest.mark.parametrize("now", [1.5, -1, 2**53])
def test_a_bad_creation_time_is_refused_without_reserving_the_id(now: Any) -> None:
    """spec/persistence.md §8 row 3, for a store whose clock gives the creation time."""
    times = iter([now, CLOCK])
    with Store(MemoryBackend(), clock=lambda: next(times)) as store:
        with pytest.raises(SeedRejected, match=r"createdAt|not losslessly JSON-serializable"):
            store.create("s1")
        assert store.create("s1").header["createdAt"] == CLOCK
