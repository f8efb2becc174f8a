"""Crashed and stalled PostgreSQL writers (issue 13, DESIGN.md "Reliability requirements").

A writer process (``crash_child.py``, forked per trial) appends a deterministic agent to a
PostgreSQL session in ``batch()`` blocks of 1 to 12 events, acknowledging each block's exit. The
test SIGKILLs it — after a random delay, or while its block's transaction waits for a table
lock the test holds (so the kill lands inside the transaction, after its rows were sent and
before its COMMIT) — and checks:

* no partial batch: what is stored is a prefix of what the writer appended that ends at a
  block's boundary, and holds every acknowledged block;
* after the lease: a writer of another host holds its lease until it expires (``open`` gets
  ``SessionLocked`` until then), a dead writer of this host is taken over at once; the taker's
  ``open`` writes the repair closers of the interrupted turn (exactly those ``open_turn_closers``
  gives), the log passes the invariant companion and derives a provider-valid history, and the
  taker continues the session with a turn of its own;
* a SIGSTOP'd holder (alive, its lease no longer renewed) is taken over only once its lease
  expired; when it resumes, its next write fails (``ConcurrentWriteError`` or
  ``SessionLocked``) and nothing it sent after the takeover is stored.

Trials chain on one session id: each writer resumes what the last taker left. A bounded
number of trials runs by default; ``-m slow`` runs the larger campaign.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import accumulate
from typing import Any

import pytest

from agentlog import Session, check_invariants, check_provider_history
from agentlog.errors import SessionLocked
from agentlog.stores import Store, open_backend, open_store
from tests.stores.concurrency_child import one_turn
from tests.stores.crash_child import T0
from tests.stores.pg import admin, schema_of, stored_events, waiting_on, with_lease
from tests.stores.test_crash import (
    WRITER_EVENTS,
    Chain,
    ForkServer,
    expected_stream,
    repaired,
)

LEASE = 0.5
"""Seconds: the shortest lease the store accepts, so that expiry happens within the test."""
TRIALS = 8
SLOW_TRIALS = 48
ELSEWHERE = "another-host.invalid"
Wire = dict[str, Any]


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    fork_server = ForkServer()
    yield fork_server
    fork_server.close()


@dataclass(slots=True)
class Writer:
    """One forked writer as the test sees it."""

    pid: int = 0
    acked: int = -1
    """The highest acknowledged seq."""
    acks: int = 0
    """How many blocks were acknowledged."""
    finished: bool = False
    errors: list[str] = field(default_factory=list)
    status: int | None = None

    def take(self, line: str) -> None:
        kind, _, rest = line.partition(" ")
        if kind == "A":
            self.acked = max(self.acked, int(rest))
            self.acks += 1
        elif kind == "D":
            self.finished = True
        elif kind == "E":
            self.errors.append(rest)
        elif kind == "X":
            self.status = int(rest.split()[1])


def start(server: ForkServer, command: dict[str, Any]) -> Writer:
    server.send(command)
    first = server.line(timeout=30)
    assert first is not None
    assert first.startswith("P "), first
    return Writer(pid=int(first.split()[1]))


def read_until(server: ForkServer, writer: Writer, done: Any, timeout: float = 30) -> None:
    """Take the writer's lines until ``done(writer)`` or it ended."""
    deadline = time.monotonic() + timeout
    while not done(writer) and writer.status is None:
        line = server.line(timeout=max(0.0, deadline - time.monotonic()))
        assert line is not None, f"the writer went silent: {writer}"
        writer.take(line)


def kill(server: ForkServer, writer: Writer) -> None:
    if writer.status is None:
        os.kill(writer.pid, signal.SIGKILL)
    read_until(server, writer, lambda w: False)
    assert not writer.errors, writer.errors
    assert writer.status is not None
    assert os.WIFSIGNALED(writer.status), writer


def boundaries(chain: Chain, stream: list[Wire], seed: int) -> set[int]:
    """Every stored length a whole number of the writer's writes can leave."""
    resumed = len(stream) - WRITER_EVENTS  # the stored log, its closers and its marker
    sizes = random.Random(seed + 2)
    blocks: list[int] = []
    while sum(blocks) < WRITER_EVENTS:
        blocks.append(min(WRITER_EVENTS - sum(blocks), sizes.randint(1, 12)))
    return {len(chain.stored), resumed, *(resumed + n for n in accumulate(blocks))}


def lease_row(url: str, sid: str) -> tuple[str, datetime] | None:
    """The host and expiry (server time) of the lease row of ``sid``, if it has one."""
    with admin() as connection:
        row = connection.execute(
            f"SELECT host, expires_at FROM {schema_of(url)}.leases WHERE session_id = %s", (sid,)
        ).fetchone()
    return None if row is None else (str(row[0]), row[1])


def assert_taken_after_expiry(url: str, sid: str, before: datetime, trial: str) -> None:
    """The taker's lease (taken at ``expires_at - lease``) began after ``before`` expired."""
    row = lease_row(url, sid)
    assert row is not None, f"{trial}: the taker holds no lease"
    taken_at = row[1] - timedelta(seconds=LEASE)
    assert taken_at >= before, f"{trial}: taken over at {taken_at}, the lease ran to {before}"


def wait_out_lease(url: str, sid: str) -> None:
    """Take and release the lease of ``sid`` as soon as it can be taken."""
    backend = open_backend(url)
    try:
        deadline = time.monotonic() + 10 * LEASE + 5
        while True:
            try:
                backend.lease(sid).release()
                return
            except SessionLocked:
                assert time.monotonic() < deadline, "the lease never expired"
                time.sleep(0.02)
    finally:
        backend.close()


def take_over(store: Store, sid: str) -> tuple[Session, int, float]:
    """Open ``sid`` as soon as its lease allows; the session, the refusals and seconds waited."""
    started = time.monotonic()
    refusals = 0
    while True:
        try:
            session = store.open(sid)
        except SessionLocked:
            refusals += 1
            assert time.monotonic() - started < 10 * LEASE + 5, "the lease never expired"
            time.sleep(0.02)
            continue
        return session, refusals, time.monotonic() - started


def header_of(url: str, sid: str) -> dict[str, Any]:
    backend = open_backend(url)
    try:
        return {k: v for k, v in backend.read(sid).header.items() if k != "type"}
    finally:
        backend.close()


def continue_as_taker(url: str, sid: str, stored: list[Wire], trial: str) -> None:
    """Take the session over, check its repair, append a turn of the taker's, close."""
    expected = repaired(sid, stored, header_of(url, sid))
    dead = lease_row(url, sid)
    with open_store(url, clock=lambda: T0) as store:
        session, refusals, _ = take_over(store, sid)
        if dead is not None and dead[0] == ELSEWHERE:  # a live lease of another host: expired
            assert refusals > 0, f"{trial}: a live lease was taken over"
            assert_taken_after_expiry(url, sid, dead[1], trial)
        else:  # a dead writer of this host: taken over at once
            assert refusals == 0, f"{trial}: a dead writer of this host blocked the takeover"
        assert [event.to_wire() for event in session.events] == expected, f"{trial}: repair"
        check_invariants(session.events)
        check_provider_history(session.derive_messages())
        taker_turn = [event.to_wire() for event in one_turn(session, 99, "taker ")]
        session.close()
    assert stored_events(url, sid) == [*expected, *taker_turn], trial
    with open_store(url) as check:
        view = check.inspect(sid)
        check_invariants(view.events)
        check_provider_history(view.derive_messages())


def trial_kill(server: ForkServer, url: str, chain: Chain, rng: random.Random, trial: str) -> str:
    """One writer, killed as the trial's roll says; returns how it was killed."""
    seed = rng.randrange(2**32)
    command: dict[str, Any] = {
        "url": url,
        "session": chain.session_id,
        "seed": seed,
        "write_behind": False,
        "batch": True,
        "events": WRITER_EVENTS,
    }
    if rng.random() < 0.5:
        command["host"] = ELSEWHERE
    stream = expected_stream(chain, seed)
    allowed = boundaries(chain, stream, seed)
    writer = start(server, command)
    how = "lock" if rng.random() < 0.6 else "sleep"
    if how == "lock":
        acks = rng.randint(0, 4)
        read_until(server, writer, lambda w: w.acks >= acks)
        with admin() as locker, admin() as watcher:
            locker.execute("BEGIN")
            locker.execute(f"LOCK TABLE {schema_of(url)}.events IN EXCLUSIVE MODE")
            deadline = time.monotonic() + 20
            while not waiting_on(watcher, url, "events"):
                if writer.finished or writer.status is not None:
                    how = "lock missed"  # the writer wrote everything first
                    break
                assert time.monotonic() < deadline, f"{trial}: the writer never blocked"
                line = server.line(timeout=0.01)
                if line is not None:
                    writer.take(line)
            kill(server, writer)  # its block's transaction is open, its rows sent
            locker.execute("ROLLBACK")
    else:
        time.sleep(rng.uniform(0, 0.3))
        kill(server, writer)
    trial = f"{trial}: {command} killed by {how}"
    backend = open_backend(url)
    try:
        exists = backend.exists(chain.session_id)
    finally:
        backend.close()
    if not exists:
        assert writer.acked < 0, f"{trial}: acknowledged seq {writer.acked}, no session"
        wait_out_lease(url, chain.session_id)  # a dead writer of another host may hold it
        return how
    stored = stored_events(url, chain.session_id)
    assert len(stored) > writer.acked, f"{trial}: acknowledged seq {writer.acked} lost"
    assert stored == stream[: len(stored)], f"{trial}: stored events are not what was appended"
    assert len(stored) in allowed, f"{trial}: {len(stored)} events stored: a partial batch"
    continue_as_taker(url, chain.session_id, stored, trial)
    chain.stored = stored_events(url, chain.session_id)
    chain.header = header_of(url, chain.session_id)
    return how


def run_campaign(server: ForkServer, postgres_url: str, trials: int) -> dict[str, int]:
    url = with_lease(postgres_url, LEASE)
    rng = random.Random(f"pg-crash-{trials}")
    tally: dict[str, int] = {}
    chain = Chain("")
    for number in range(trials):
        if number % 4 == 0:
            chain = Chain(f"s{number // 4}")
        how = trial_kill(server, url, chain, rng, f"trial {number}")
        tally[how] = tally.get(how, 0) + 1
        tally["resumed"] = tally.get("resumed", 0) + bool(chain.stored)
    return tally


def test_a_writer_killed_mid_batch_leaves_whole_batches_and_is_taken_over(
    server: ForkServer, postgres_url: str
) -> None:
    tally = run_campaign(server, postgres_url, TRIALS)
    assert tally.get("lock", 0) >= 2, tally


@pytest.mark.slow
def test_a_campaign_of_killed_writers(server: ForkServer, postgres_url: str) -> None:
    tally = run_campaign(server, postgres_url, SLOW_TRIALS)
    assert tally.get("lock", 0) >= SLOW_TRIALS // 3, tally


@pytest.mark.parametrize("host", ["this", ELSEWHERE])
def test_a_stopped_holder_is_taken_over_after_its_lease_and_cannot_write_again(
    server: ForkServer, postgres_url: str, host: str
) -> None:
    url = with_lease(postgres_url, LEASE)
    chain = Chain("stopped")
    seed = 7
    stream = expected_stream(chain, seed)
    command: dict[str, Any] = {
        "url": url,
        "session": "stopped",
        "seed": seed,
        "write_behind": False,
        "batch": True,
        "events": WRITER_EVENTS,
    }
    if host != "this":
        command["host"] = host
    writer = start(server, command)
    read_until(server, writer, lambda w: w.acks >= 3)
    os.kill(writer.pid, signal.SIGSTOP)
    try:
        time.sleep(0.2)  # a COMMIT the writer sent before it stopped is done by now
        stored = stored_events(url, "stopped")
        assert len(stored) > writer.acked
        assert stored == stream[: len(stored)]
        held = lease_row(url, "stopped")
        assert held is not None
        with open_store(url, clock=lambda: T0) as store:
            session, refusals, _ = take_over(store, "stopped")
            # Alive, on this host or another: its lease had to expire.
            assert refusals > 0, "the lease of a live writer was taken over"
            assert_taken_after_expiry(url, "stopped", held[1], "stopped holder")
            expected = repaired("stopped", stored, header_of(url, "stopped"))
            assert [event.to_wire() for event in session.events] == expected
            taken = [*expected, *(event.to_wire() for event in one_turn(session, 5, "taker "))]
            session.close()
    finally:
        os.kill(writer.pid, signal.SIGCONT)
    read_until(server, writer, lambda w: False)
    assert writer.status is not None
    assert os.WIFEXITED(writer.status), writer
    assert os.WEXITSTATUS(writer.status) == 3, writer
    (error,) = writer.errors
    assert error.startswith(("ConcurrentWriteError", "SessionLocked")), error
    assert stored_events(url, "stopped") == taken, "the stopped writer wrote after the takeover"
    with open_store(url) as check:
        view = check.inspect("stopped")
        check_invariants(view.events)
        check_provider_history(view.derive_messages())
