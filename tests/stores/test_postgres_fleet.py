"""A fleet on one PostgreSQL database: 8 worker processes × 4 threads (issue 13, DESIGN.md
"Reliability requirements").

Every worker (``fleet_child.py``) is a real process with its own store; its threads append
turns of ``crash_child``'s agent to their own sessions and to a few sessions all 32 threads
compete for, in ``batch()`` blocks and single durable appends; some threads holding a shared
session stall past the lease time mid-turn (their stores renew the lease meanwhile). The test
then checks:

* no lost event: every acknowledged event is stored, once, at its seq, as acknowledged;
* no duplicated or stray event: every stored event is an acknowledged one or a repair the
  store wrote when it opened the session (closers of an interrupted turn, an end-seed marker);
  no message is stored twice;
* every conflict reported: each refused open raised ``SessionLocked`` (or
  ``SessionAlreadyExists`` for a lost creation race), each refused write raised
  (``ConcurrentWriteError``, ``SessionLocked``) and none of its events is stored; the counts
  are printed, and the shared sessions were contended;
* every session's log valid and provider-valid: read with ``inspect`` and after a real
  reopen (``open`` writes the repairs), it passes the invariant companion and
  ``derive_messages()`` answers every tool call.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from agentlog import check_invariants, check_provider_history
from agentlog.stores import open_store
from tests.stores.pg import stored_events, with_lease
from tests.stores.test_concurrency import is_repair

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 8
THREADS = 4
ROUNDS = 6
SHARED = 3
LEASE = 0.5
"""Seconds of the fleet's leases: short, so stalled holders are taken over within the test."""
STALL = 1.5 * LEASE
Wire = dict[str, Any]


def run_fleet(url: str, tmp_path: Path) -> list[list[str]]:
    """Start every worker, let them go at once, and return each one's output lines."""
    go = tmp_path / "go"
    env = {**os.environ, "AGENTLOG_FLEET_STALL": str(STALL)}
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.stores.fleet_child",
                url,
                str(worker),
                str(THREADS),
                str(ROUNDS),
                str(SHARED),
                str(go),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for worker in range(WORKERS)
    ]
    time.sleep(0.2)
    go.touch()
    try:
        with ThreadPoolExecutor(WORKERS) as pool:
            outputs = list(pool.map(lambda p: p.communicate(timeout=120), processes))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    results = []
    for worker, (process, (out, err)) in enumerate(zip(processes, outputs, strict=True)):
        lines = out.decode().splitlines()
        failures = [line for line in lines if line.startswith("E ")]
        assert not failures, f"worker {worker} failed: {failures[0]}"
        assert process.returncode == 0, f"worker {worker} exited {process.returncode}: {err!r}"
        assert sum(line.startswith("D ") for line in lines) == THREADS, lines[-5:]
        results.append(lines)
    return results


def test_eight_workers_of_four_threads_lose_duplicate_and_hide_nothing(
    postgres_url: str, tmp_path: Path
) -> None:
    url = with_lease(postgres_url, LEASE)
    outputs = run_fleet(url, tmp_path)
    acked: dict[str, list[Wire]] = {}
    rejected: dict[str, list[Wire]] = {}
    conflicts: Counter[str] = Counter()
    stats: Counter[str] = Counter()
    for lines in outputs:
        for line in lines:
            kind, _, payload = line.partition(" ")
            fact = orjson.loads(payload)
            if kind == "A":
                acked.setdefault(fact["sid"], []).append(fact["event"])
            elif kind == "J":
                rejected.setdefault(fact["sid"], []).extend(fact["events"])
                conflicts[f"write: {fact['error']}"] += 1
            elif kind == "L":
                conflicts[f"open: {fact['error']}"] += 1
            elif kind == "S":
                conflicts[f"close after a failed write: {fact['error']}"] += 1
            elif kind == "D":
                stats.update(fact)
    print(f"fleet: {dict(stats)}; conflicts: {dict(conflicts)}")
    assert stats["turns"] + stats["refused"] == WORKERS * THREADS * ROUNDS, stats
    assert stats["turns"] >= WORKERS * THREADS * ROUNDS // 4, stats
    assert conflicts["open: SessionLocked"] > 0, "the shared sessions were never contended"
    refusals = {"SessionLocked", "SessionAlreadyExists", "ConcurrentWriteError"}
    assert {kind.partition(": ")[2] for kind in conflicts} <= refusals, conflicts
    assert stats["failed"] == sum(n for k, n in conflicts.items() if k.startswith("write: "))
    with open_store(url) as store:
        sids = {info.id for info in store.list()}
    assert sids == set(acked), "a session holds no acknowledged event, or is not listed"
    for sid in sorted(sids):
        check_session(url, sid, acked.get(sid, []), rejected.get(sid, []))


def check_session(url: str, sid: str, acked: list[Wire], rejected: list[Wire]) -> None:
    events = stored_events(url, sid)
    assert [event["seq"] for event in events] == list(range(len(events))), sid
    seqs = [event["seq"] for event in acked]
    assert len(seqs) == len(set(seqs)), f"{sid}: two writers were acknowledged one seq"
    for event in acked:
        assert event["seq"] < len(events), f"{sid}: acknowledged seq {event['seq']} lost"
        assert events[event["seq"]] == event, f"{sid}: seq {event['seq']} is not as acknowledged"
    by_seq = {event["seq"] for event in acked}
    strays = [e for e in events if e["seq"] not in by_seq and not is_repair(e)]
    assert not strays, f"{sid}: stored events no writer acknowledged: {strays[:2]}"
    for event in rejected:
        if event not in acked:
            assert event not in events, f"{sid}: a refused write's event is stored: {event}"
    appended = [e["data"] for e in events if e.get("surfaceOp") == "append"]
    ids = [data["message"]["id"] if "message" in data else data["id"] for data in appended]
    assert len(ids) == len(set(ids)), f"{sid}: a message is stored twice"
    with open_store(url) as store:
        view = store.inspect(sid)
        check_invariants(view.events)
        check_provider_history(view.derive_messages())
        with store.open(sid) as session:  # the repair made durable
            check_invariants(session.events)
            check_provider_history(session.derive_messages())
    assert stored_events(url, sid)[: len(events)] == events
