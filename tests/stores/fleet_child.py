"""A fleet worker: ``python -m tests.stores.fleet_child URL WORKER THREADS ROUNDS SHARED GO``.

One process of the fleet test (``test_postgres_fleet.py``): ``THREADS`` threads share one
``Store`` (one process, one connection pool, as an agent worker runs) and each plays
``ROUNDS`` turns of ``crash_child``'s agent. Each turn goes to the thread's own session
(``w<WORKER>t<THREAD>``) or, every other turn or so, to one of ``SHARED`` sessions every
thread of every worker competes for. A turn is written in ``batch()`` blocks of 1 to 6 events
or one durable append at a time; now and then a thread holding a shared session stalls in the
middle of a turn for longer than the lease (``$AGENTLOG_FLEET_STALL`` seconds): its process is
alive, so its store keeps renewing the lease and the session stays its own — and if a takeover
happened anyway (a renewal late on a loaded machine), its next write must fail, reported.

The threads wait for the file ``GO`` to exist, so all workers start together. Every fact is
one line on stdout (written whole under a lock):

``A {"sid", "event"}``
    an acknowledged event: its append, or the ``batch()`` block holding it, returned;
``J {"sid", "error", "events"}``
    a write that raised: the block's events (empty for a single durable append, whose event
    the session never holds), with the error class;
``L {"sid", "error"}``
    ``open``/``create`` refused (``SessionLocked``, ``SessionAlreadyExists``);
``S {"sid", "error"}``
    the session could not be closed after a failed write: its store keeps it registered
    (refusing to open it again) and drops its queued events when the store closes. When the
    close does write the failed block, its events are acknowledged then (``A`` lines);
``D {stats}``
    the thread is done;
``E text``
    the thread failed (a bug): the test fails with the text.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from typing import Any

import orjson

from agentlog import Event, Session
from agentlog.errors import SessionAlreadyExists, SessionLocked, SessionNotFound, StoreError
from agentlog.stores import Store, open_store
from tests.stores.concurrency_child import one_turn

_lock = threading.Lock()


def say(kind: str, payload: Any) -> None:
    text = payload if isinstance(payload, str) else orjson.dumps(payload).decode()
    line = f"{kind} {text}\n".encode()
    with _lock:
        view = memoryview(line)
        while view:
            view = view[os.write(1, view) :]


def acquire(store: Store, sid: str) -> Session | None:
    """Open ``sid`` (creating it if it does not exist), or ``None`` after reporting a refusal."""
    try:
        try:
            return store.open(sid)
        except SessionNotFound:
            return store.create(sid)
    except (SessionLocked, SessionAlreadyExists) as exc:
        say("L", {"sid": sid, "error": type(exc).__name__})
        return None


def play_turn(
    session: Session, rng: random.Random, tag: str, stall: float | None
) -> tuple[str | None, list[Event]]:
    """Append one turn; return the error that ended it early and the block it did not write."""
    sid = session.id
    events: Iterator[Event] = one_turn(session, rng.randrange(2**32), tag)
    blocks = 0
    while True:
        size = rng.randint(1, 6)
        block: list[Event] = []
        try:
            if size == 1:  # a durable append: the session holds the event only once it is stored
                event = next(events, None)
                if event is None:
                    return None, []
                block.append(event)
            else:
                with session.batch():
                    for _ in range(size):
                        event = next(events, None)
                        if event is None:
                            break
                        block.append(event)
        except StoreError as exc:
            say(
                "J",
                {"sid": sid, "error": type(exc).__name__, "events": [e.to_wire() for e in block]},
            )
            return type(exc).__name__, block
        for event in block:
            say("A", {"sid": sid, "event": event.to_wire()})
        blocks += 1
        if len(block) < size:
            return None, []
        if stall is not None and blocks == 1:
            time.sleep(stall)  # hold the session past its lease, mid-turn


def finish(session: Session, error: str | None, unwritten: list[Event]) -> None:
    """Close the session; after a failed write, report whether the close wrote the block."""
    try:
        session.close()
    except StoreError as exc:
        if error is None:
            raise
        say("S", {"sid": session.id, "error": type(exc).__name__})
        return
    # The close wrote a failed block after all (its error was transient): acknowledged now.
    for event in unwritten:
        say("A", {"sid": session.id, "event": event.to_wire()})


def work(store: Store, worker: int, thread: int, rounds: int, shared: int, go: str) -> None:
    rng = random.Random(f"{worker}/{thread}")
    stall_seconds = float(os.environ.get("AGENTLOG_FLEET_STALL", "0"))
    stats = {"turns": 0, "refused": 0, "failed": 0, "stalls": 0}
    while not os.path.exists(go):
        time.sleep(0.005)
    for round_ in range(rounds):
        own = rng.random() < 0.5 or not shared
        sid = f"w{worker}t{thread}" if own else f"shared{rng.randrange(shared)}"
        session = acquire(store, sid)
        if session is None:
            stats["refused"] += 1
            time.sleep(rng.uniform(0, 0.02))
            continue
        stall = None
        if not own and stall_seconds and rng.random() < 0.15:
            stall = stall_seconds
            stats["stalls"] += 1
        error, unwritten = play_turn(session, rng, f"w{worker}t{thread}r{round_} ", stall)
        stats["turns"] += 1
        if error is not None:
            stats["failed"] += 1
        finish(session, error, unwritten)
    say("D", stats)


def main(argv: list[str]) -> None:
    url, worker, threads, rounds, shared, go = argv
    store = open_store(url)

    def run(thread: int) -> None:
        try:
            work(store, int(worker), thread, int(rounds), int(shared), go)
        except BaseException as exc:
            say("E", "".join(traceback.format_exception(exc)).replace("\n", " | "))

    pool = [threading.Thread(target=run, args=(n,)) for n in range(int(threads))]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    try:
        store.close()
    except StoreError as exc:  # a session left open by a failed write (reported in S)
        say("S", {"sid": "*", "error": type(exc).__name__})


if __name__ == "__main__":
    main(sys.argv[1:])
