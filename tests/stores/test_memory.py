"""The ``memory:`` store: the contract, plus what only an in-process store promises.

Each test's "location" is one ``MemoryBackend``: every store the contract opens for the test
shares it, as stores opened on one file share the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentlog import thaw
from agentlog.errors import ConcurrentWriteError, SessionAlreadyExists, SessionLocked
from agentlog.stores import Backend, Store, open_store
from agentlog.stores.memory import MemoryBackend
from tests.stores.contract import StoreContract, clock, one_turn, wire


class TestMemory(StoreContract):
    _backend: MemoryBackend | None = None

    def make_backend(self, tmp_path: Path) -> Backend:
        if self._backend is None:
            self._backend = MemoryBackend()
        return self._backend

    def make_store(self, tmp_path: Path, **options: Any) -> Store:
        return Store(self.make_backend(tmp_path), **options)

    def stored_state(self, tmp_path: Path) -> object:
        backend = self.make_backend(tmp_path)
        state = {}
        for info in backend.list():
            stored = backend.read(info.id)
            state[info.id] = (thaw(dict(stored.header)), wire(stored.events))
        return state


def test_memory_stores_are_independent_and_touch_no_disk(tmp_path: Path) -> None:
    with open_store("memory:", clock=clock) as first, open_store("memory:") as second:
        with first.create("s1", cwd=str(tmp_path)) as session:
            one_turn(session)
        assert [info.id for info in first.list()] == ["s1"]
        assert second.list() == []
        assert first.list()[0].location is None
    assert list(tmp_path.iterdir()) == []


def test_memory_store_shares_the_immutable_events_it_was_given() -> None:
    """Nothing is copied or re-encoded: the stored events are the session's own objects."""
    with open_store("memory:", clock=clock) as store:
        with store.create("s1") as session:
            one_turn(session)
        reopened = store.inspect("s1")
        assert all(a is b for a, b in zip(reopened.events, session.events, strict=False))
        assert wire(reopened.events)[: session.seq] == wire(session.events)


def test_the_memory_backend_enforces_contiguous_appends() -> None:
    """What SQLite's stored-tail check does, the memory backend does too (one writer wins)."""
    backend = MemoryBackend()
    header = {"version": 4, "id": "s1", "createdAt": 0, "isSeeded": False, "delegationDepth": 0}
    lease = backend.lease("s1")
    event = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}
    backend.append(lease, header, [event], next_seq=0)
    with pytest.raises(SessionAlreadyExists):
        backend.append(lease, header, [event], next_seq=0)
    with pytest.raises(ConcurrentWriteError) as refused:
        backend.append(lease, header, [{**event, "seq": 5}], next_seq=5)
    assert (refused.value.expected_seq, refused.value.stored_seq) == (5, 1)
    with pytest.raises(SessionLocked):
        backend.lease("s1")
    lease.release()
    lease.release()  # idempotent
    backend.lease("s1").release()
    assert len(backend.read("s1").events) == 1
