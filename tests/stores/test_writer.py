"""The sink of an attached session: durable appends, and write-behind batches with a barrier.

The writer is driven directly against a recording backend, so each test sees exactly which
batches reached storage and when (spec/persistence.md §2.4 and §8 rows 44-46). Timing is
checked with generous margins: a deadline is "not before the delay, and eventually".
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from agentlog import Event, Session
from agentlog.errors import SessionNotFound, StoreError
from agentlog.stores import Backend, Lease, RepairResult, SessionInfo, StoredLog
from agentlog.stores.writer import Batcher, Writer
from agentlog.values import JsonValue
from tests.stores.contract import clock


class RecordingLease(Lease):
    def __init__(self) -> None:
        self.released = 0

    def release(self) -> None:
        self.released += 1


class RecordingBackend(Backend):
    """Stores nothing; records each batch (its seqs) and fails on demand."""

    url = "recording:"

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.failures: list[Exception] = []
        self.leases: list[RecordingLease] = []
        self.written = threading.Event()

    def exists(self, session_id: str) -> bool:
        return False

    def read(self, session_id: str, from_seq: int = 0) -> StoredLog:
        raise SessionNotFound(f'session "{session_id}" not found')

    def lease(self, session_id: str) -> Lease:
        lease = RecordingLease()
        self.leases.append(lease)
        return lease

    def append(
        self,
        lease: Lease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        assert lease in self.leases
        if self.failures:
            raise self.failures.pop(0)
        assert next_seq == sum(len(batch) for batch in self.batches)
        assert [event["seq"] for event in events] == list(range(next_seq, next_seq + len(events)))
        self.batches.append([event["seq"] for event in events])
        self.written.set()

    def delete(self, lease: Lease, session_id: str) -> None:
        raise SessionNotFound(f'session "{session_id}" not found')

    def cut(self, lease: Lease, session_id: str, *, cut_at: int) -> RepairResult:
        raise SessionNotFound(f'session "{session_id}" not found')

    def list(self) -> list[SessionInfo]:
        return []


def events(count: int) -> list[Event]:
    """``count`` valid events: a turn with steps (the invariant companion watches)."""
    session = Session.create("s", clock=clock)
    session.append("turn/start", {"turn": 1})
    step = 0
    while session.seq < count:
        if session.event_at(session.seq - 1).type == "step/start":
            session.append("step/end", {"turn": 1, "step": step})
        else:
            step += 1
            session.append("step/start", {"turn": 1, "step": step})
    return list(session.events)


def make_writer(
    backend: RecordingBackend, batcher: Batcher | None = None, **options: Any
) -> Writer:
    return Writer(
        backend, "s", {"id": "s"}, lambda: backend.lease("s"), 0, batcher=batcher, **options
    )


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def batcher() -> Any:
    batcher = Batcher(0.05)
    yield batcher
    batcher.stop()


# --- durable mode ---------------------------------------------------------------------------


def test_durable_mode_writes_each_event_before_returning() -> None:
    backend = RecordingBackend()
    writer = make_writer(backend)
    assert backend.leases == []  # the lease is taken at the first write
    for event in events(3):
        writer.persist(event)
        assert backend.batches[-1] == [event.seq]
    assert writer.stored == 3
    assert len(backend.leases) == 1


def test_a_failed_durable_write_raises_and_stores_nothing() -> None:
    backend = RecordingBackend()
    writer = make_writer(backend)
    first, second = events(2)
    writer.persist(first)
    backend.failures.append(StoreError("disk full"))
    with pytest.raises(StoreError, match="disk full"):
        writer.persist(second)
    assert writer.stored == 1
    writer.persist(second)  # the retry
    assert backend.batches == [[0], [1]]


def test_catch_up_writes_only_what_is_not_stored() -> None:
    backend = RecordingBackend()
    writer = make_writer(backend)
    log = events(5)
    writer.persist(log[0])
    writer.catch_up(log)
    writer.catch_up(log)
    assert backend.batches == [[0], [1, 2, 3, 4]]


def test_close_flushes_releases_once_and_refuses_more() -> None:
    backend = RecordingBackend()
    closed: list[bool] = []
    writer = make_writer(backend, on_close=lambda: closed.append(True))
    log = events(2)
    writer.persist(log[0])
    writer.close()
    writer.close()
    assert backend.leases[0].released == 1
    assert closed == [True]
    with pytest.raises(StoreError, match=r'^session "s" is closed$'):
        writer.persist(log[1])


def test_abandon_releases_without_writing() -> None:
    backend = RecordingBackend()
    batcher = Batcher(3600)
    try:
        writer = make_writer(backend, batcher)
        log = events(2)
        writer.persist(log[0])
        writer.flush()
        writer.persist(log[1])
        writer.abandon()
        assert backend.batches == [[0]]
        assert backend.leases[0].released == 1
    finally:
        batcher.stop()


# --- write-behind ---------------------------------------------------------------------------


def test_events_queued_within_the_delay_are_one_batch() -> None:
    """spec/persistence.md §8 row 46: later events join the window without resetting it."""
    backend = RecordingBackend()
    batcher = Batcher(0.5)
    try:
        writer = make_writer(backend, batcher)
        started = time.monotonic()
        for event in events(10):
            writer.persist(event)
            time.sleep(0.01)
        assert backend.batches == []
        wait_for(lambda: bool(backend.batches))
        assert time.monotonic() - started >= 0.45
        assert backend.batches == [list(range(10))]
        assert writer.stored == 10
    finally:
        batcher.stop()


def test_flush_writes_at_once_and_later_events_open_a_new_window() -> None:
    backend = RecordingBackend()
    batcher = Batcher(3600)
    try:
        writer = make_writer(backend, batcher)
        log = events(5)
        for event in log[:3]:
            writer.persist(event)
        writer.flush()
        assert backend.batches == [[0, 1, 2]]
        writer.flush()  # nothing queued: no write
        assert backend.batches == [[0, 1, 2]]
        for event in log[3:]:
            writer.persist(event)
        writer.close()
        assert backend.batches == [[0, 1, 2], [3, 4]]
    finally:
        batcher.stop()


class CountingBatcher(Batcher):
    """A batcher that counts the wake-ups writers ask it for."""

    def __init__(self, delay: float) -> None:
        super().__init__(delay)
        self.scheduled = 0

    def schedule(self, writer: Writer, when: float) -> None:
        self.scheduled += 1
        super().schedule(writer, when)


def test_a_loop_flushing_sooner_than_the_delay_never_meets_the_background_thread() -> None:
    """Every batch is written by the flushing thread itself, and the batcher wakes up once per
    delay at most, not at every flush: nothing to hand off, nothing to wait for."""
    backend = RecordingBackend()
    writers: list[str] = []
    append = backend.append

    def recording_thread(*args: Any, **kwargs: Any) -> None:
        writers.append(threading.current_thread().name)
        append(*args, **kwargs)

    backend.append = recording_thread  # type: ignore[method-assign]  # who writes each batch
    batcher = CountingBatcher(0.1)
    try:
        writer = make_writer(backend, batcher)
        log = events(60)
        started = time.monotonic()
        for first in range(0, 60, 2):
            writer.persist(log[first])
            writer.persist(log[first + 1])
            time.sleep(0.005)
            writer.flush()
        elapsed = time.monotonic() - started
        assert elapsed > 0.1  # the loop outlived the delay
        assert backend.batches == [[n, n + 1] for n in range(0, 60, 2)]
        assert set(writers) == {threading.current_thread().name}
        # One wake-up per delay at most (the thread finds a later deadline and sleeps on),
        # never one per batch: 30 batches were flushed.
        assert batcher.scheduled <= 2 + elapsed / 0.1
    finally:
        batcher.stop()


def test_a_flush_with_nothing_queued_neither_writes_nor_waits() -> None:
    backend = RecordingBackend()
    batcher = Batcher(3600)
    try:
        writer = make_writer(backend, batcher)
        writer.persist(events(1)[0])
        writer.flush()
        # A write in progress elsewhere holds the writer's I/O lock; an empty flush ignores it.
        with writer._io_lock:  # the test holds the writer's own lock on purpose
            started = time.monotonic()
            writer.flush()
            assert time.monotonic() - started < 1.0
        assert backend.batches == [[0]]
    finally:
        batcher.stop()


def test_a_background_failure_warns_once_keeps_the_batch_and_flush_retries(
    batcher: Batcher, caplog: pytest.LogCaptureFixture
) -> None:
    """spec/persistence.md §8 row 45."""
    backend = RecordingBackend()
    writer = make_writer(backend, batcher)
    log = events(4)
    backend.failures += [StoreError("disk full"), StoreError("still full")]
    with caplog.at_level(logging.WARNING, logger="agentlog.stores"):
        writer.persist(log[0])
        writer.persist(log[1])
        wait_for(lambda: len(backend.failures) == 1)  # the first background write failed
        writer.persist(log[2])  # re-arms a window: the automatic retry fails again
        wait_for(lambda: not backend.failures)
        time.sleep(0.2)  # and no further automatic retry is attempted
        assert backend.batches == []
        writer.persist(log[3])
        writer.flush()
    assert backend.batches == [[0, 1, 2, 3]]  # in order, exactly once
    assert caplog.messages == [
        'background write for session "s" failed (buffered events retained): StoreError: disk full'
    ]


def test_a_failed_flush_raises_and_keeps_the_queue(caplog: pytest.LogCaptureFixture) -> None:
    backend = RecordingBackend()
    batcher = Batcher(3600)
    try:
        writer = make_writer(backend, batcher)
        log = events(2)
        writer.persist(log[0])
        backend.failures.append(StoreError("disk full"))
        with pytest.raises(StoreError, match="disk full"):
            writer.flush()
        backend.failures.append(StoreError("disk full"))
        with pytest.raises(StoreError, match="disk full"):
            writer.close()  # a close whose flush fails releases nothing
        assert backend.leases[0].released == 0
        writer.persist(log[1])
        writer.close()
        assert backend.batches == [[0, 1]]
        assert backend.leases[0].released == 1
        assert caplog.messages == []  # a flush raises; only background failures are logged
    finally:
        batcher.stop()


def test_a_stopped_batcher_leaves_the_events_with_their_writer() -> None:
    backend = RecordingBackend()
    batcher = Batcher(0.05)
    writer = make_writer(backend, batcher)
    batcher.stop()
    writer.persist(events(1)[0])
    time.sleep(0.2)
    assert backend.batches == []
    writer.flush()
    assert backend.batches == [[0]]


@pytest.mark.parametrize("delay", [0, -1, 3601])
def test_the_batch_delay_must_be_positive_and_at_most_an_hour(delay: float) -> None:
    with pytest.raises(
        ValueError, match=rf"batch_delay must be in \(0, 3600\] seconds, got {delay}"
    ):
        Batcher(delay)
