"""One writer per session, with two real processes (DESIGN.md decision 7, "Reliability").

Every file store locks a session with ``flock`` (JSONL: ``session.lock`` beside the transcript;
SQLite: a per-session file in ``<database>.locks/``): while one process holds it, another
process (or another ``Store`` in the same process) gets ``SessionLocked``, and a killed holder's
lock is gone at once. Two processes taking turns on one session (each opening it as soon as the
other closes it) win each seq exactly once. In every store, of two processes creating one
session exactly one materializes it (for JSONL even when they create it in different cwds,
hence under different project directories with different lock files); the other gets
``SessionAlreadyExists`` or ``SessionLocked``.

Every test checks the final log against what each writer acknowledged: each acknowledged event
is stored exactly once at its seq, nothing else is stored but the repairs ``Store.open`` writes,
and the log passes the invariant companion and derives a provider-valid history. The writers
are ``concurrency_child.py``.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

from agentlog import Session, check_invariants, check_provider_history, thaw
from agentlog.errors import SessionAlreadyExists, SessionLocked
from agentlog.stores import open_backend, open_store
from agentlog.values import loads
from tests.stores.concurrency_child import one_turn
from tests.stores.crash_child import T0, agent_clock, agent_events

ROOT = Path(__file__).resolve().parents[2]
JSONL_SCHEMES = ("jsonl", "jsonl+zstd")
SCHEMES = (*JSONL_SCHEMES, "sqlite")
Wire = dict[str, Any]


class Writer:
    """A ``concurrency_child`` process, read line by line."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.stores.concurrency_child", *args],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def read_until(self, *prefixes: str) -> str:
        """Read lines until one starts with one of ``prefixes``; return it."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith(prefixes):
                return self.lines[-1]
        pytest.fail(f"writer ended without {prefixes}: {self.lines[-5:]}, {self.finish()}")

    def finish(self) -> int:
        """Let the writer end; collect its remaining lines; return its exit code.

        The rest is read through ``stdout`` itself, not ``communicate()``: that reads the raw
        pipe and would miss lines ``read_until`` already pulled into the file's buffer.
        """
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        self.lines += self.process.stdout.read().splitlines()
        return self.process.wait(timeout=120)

    def acks(self) -> list[Wire]:
        return [loads(line[2:]) for line in self.lines if line.startswith("A {")]

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)


@contextmanager
def writer(*args: str) -> Iterator[Writer]:
    process = Writer(*args)
    try:
        yield process
    finally:
        process.kill()


def stored_events(url: str, sid: str) -> list[Wire]:
    """The committed events as the backend reads them, with no repair."""
    backend = open_backend(url)
    try:
        log = backend.read(sid)
    finally:
        backend.close()
    assert log.torn is None
    return [thaw(event) for event in log.events]


def check_final(url: str, sid: str, acknowledged: Sequence[Wire]) -> list[Wire]:
    """Every acknowledged event stored exactly once at its seq; a valid log; return it."""
    events = stored_events(url, sid)
    seqs = [event["seq"] for event in acknowledged]
    assert len(seqs) == len(set(seqs)), "two writers were acknowledged the same seq"
    for event in acknowledged:
        assert event["seq"] < len(events), f"acknowledged seq {event['seq']} lost"
        assert events[event["seq"]] == event, f"seq {event['seq']} is not what was acknowledged"
    appended = [e["data"] for e in events if e.get("surfaceOp") == "append"]  # not rewrites
    ids = [data["message"]["id"] if "message" in data else data["id"] for data in appended]
    assert len(ids) == len(set(ids)), "a message is stored twice"
    with open_store(url, clock=lambda: T0) as store:
        view = store.inspect(sid)
        check_invariants(view.events)
        check_provider_history(view.derive_messages())
    return events


def is_repair(event: Mapping[str, Any]) -> bool:
    """An event ``Store.open`` writes: an end-seed marker, or a closer of an interrupted turn."""
    data = event["data"]
    return (
        event["type"] in ("session/end-seed", "step/end")
        or (event["type"] == "turn/end" and data["reason"] == {"kind": "interrupted"})
        or (event["type"] == "tool/result" and data["message"].get("isError") is True)
    )


def url_for(scheme: str, tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/sessions.db" if scheme == "sqlite" else f"{scheme}:///{tmp_path}"


# --- the writer lock, and creating a session --------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
def test_second_process_is_locked_out_while_the_first_holds_the_session(
    scheme: str, tmp_path: Path
) -> None:
    url = url_for(scheme, tmp_path)
    with writer("hold", url, "s") as first:
        first.read_until("H")
        held = stored_events(url, "s")
        with writer("try-open", url, "s", "second ", "5") as second:
            assert second.read_until("L", "O") == "L"
            assert second.finish() == 0
        with open_store(url) as store:
            with pytest.raises(SessionLocked, match='session "s" is open for writing'):
                store.open("s")
            with pytest.raises(SessionAlreadyExists):
                store.create("s")
        assert stored_events(url, "s") == held, "a locked-out writer changed the log"
        first.send("close")
        first.read_until("C")
        assert first.finish() == 0
    with writer("try-open", url, "s", "second ", "12") as second:
        opened = second.read_until("L", "O")
        assert second.finish() == 0
    acknowledged = second.acks()
    assert opened == f"O {len(held) + 1}"  # the first turn was complete: only the marker added
    events = check_final(url, "s", acknowledged)
    assert events[: len(held)] == held
    assert events[len(held)]["type"] == "session/end-seed"
    assert events[len(held) + 1 :] == acknowledged


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_lock_of_a_killed_writer_is_released(scheme: str, tmp_path: Path) -> None:
    url = url_for(scheme, tmp_path)
    with writer("hold", url, "s") as first:
        first.read_until("H")
        held = stored_events(url, "s")
        first.kill()
    with writer("try-open", url, "s", "second ", "4") as second:
        assert second.read_until("L", "O") == f"O {len(held) + 1}"
        assert second.finish() == 0
    events = check_final(url, "s", second.acks())
    assert events[: len(held)] == held


@pytest.mark.parametrize("scheme", [*JSONL_SCHEMES, "sqlite"])
@pytest.mark.parametrize("cwds", [("/work", "/work"), ("/work/a", "/work/b")], ids=str)
def test_of_two_processes_creating_one_session_exactly_one_materializes_it(
    scheme: str, cwds: tuple[str, str], tmp_path: Path
) -> None:
    """Also when they create it in different cwds, so under different project directories."""
    url = url_for(scheme, tmp_path)
    errors: dict[str, int] = {}
    with (
        writer("race-create", url, "A ", cwds[0]) as a,
        writer("race-create", url, "B ", cwds[1]) as b,
    ):
        for round_ in range(30):
            sid = f"s{round_}"
            a.send(f"go {sid}")
            b.send(f"go {sid}")
            results = {"A ": a.read_until("W ", "L "), "B ": b.read_until("W ", "L ")}
            winners = [tag for tag, line in results.items() if line.startswith("W ")]
            assert len(winners) == 1, results
            for line in results.values():
                kind, _, error = line.split(" ")
                if kind == "L":
                    assert error in ("SessionLocked", "SessionAlreadyExists"), line
                    errors[error] = errors.get(error, 0) + 1
            for process in (a, b):
                process.send("end")
                process.read_until("C")
            # The winner's turn is stored, exactly and only.
            holder: list[Session] = []
            replica = Session.create(sid, clock=agent_clock(holder))
            holder.append(replica)
            expected = [event.to_wire() for event in one_turn(replica, 3, winners[0])]
            assert results[winners[0]] == f"W {sid} {len(expected)}"
            assert stored_events(url, sid) == expected
        assert a.finish() == 0
        assert b.finish() == 0
    assert sum(errors.values()) == 30, errors
    with open_store(url) as store:
        assert len(store.list()) == 30
    assert len(list(tmp_path.rglob("session.v4.jsonl*"))) == (0 if scheme == "sqlite" else 30)
    assert not list(tmp_path.rglob("*.tmp")), "a losing writer left a temporary file"


@pytest.mark.parametrize("scheme", JSONL_SCHEMES)
def test_one_id_gets_one_log_when_two_writers_create_it_in_different_cwds(
    scheme: str, tmp_path: Path
) -> None:
    """Their ``session.lock`` files differ (one per project directory): both leases succeed."""
    backend = open_backend(url_for(scheme, tmp_path))
    leases = [backend.lease("s") for _cwd in ("/a", "/b")]
    headers = [
        {"version": 4, "id": "s", "createdAt": T0, "cwd": cwd, "isSeeded": False}
        for cwd in ("/a", "/b")
    ]
    event = {"type": "turn/start", "seq": 0, "time": T0, "data": {"turn": 1}}
    backend.append(leases[0], headers[0], [event], next_seq=0)
    with pytest.raises(SessionAlreadyExists, match=r'already has a log at ".*--a--'):
        backend.append(leases[1], headers[1], [event], next_seq=0)
    for lease in leases:
        lease.release()
    assert backend.read("s").header["cwd"] == "/a"
    assert len(list(tmp_path.rglob("session.v4.jsonl*"))) == 1
    backend.close()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_two_stores_in_one_process_exclude_each_other(scheme: str, tmp_path: Path) -> None:
    """``flock`` belongs to an open file description, so it fences stores of one process too."""
    url = url_for(scheme, tmp_path)
    with open_store(url, clock=lambda: T0) as first, open_store(url, clock=lambda: T0) as second:
        a = first.create("s")
        early = second.create("s")  # nothing is on disk until the first append
        a.append("turn/start", {"turn": 1})
        with pytest.raises(SessionLocked):
            early.append("turn/start", {"turn": 1})
        assert early.seq == 0
        early.close()
        with pytest.raises(SessionLocked):
            second.open("s")
        with pytest.raises(SessionAlreadyExists):
            second.create("s")
        a.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        a.close()
        b = second.open("s")
        assert [event.type for event in b.events] == ["turn/start", "turn/end", "session/end-seed"]
        with pytest.raises(SessionLocked):
            first.open("s")
        b.close()
    assert [e["type"] for e in stored_events(url, "s")] == [
        "turn/start",
        "turn/end",
        "session/end-seed",
    ]


# --- two processes taking turns -------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
def test_two_processes_taking_turns_on_one_session_win_each_seq_once(
    scheme: str, tmp_path: Path
) -> None:
    """Each opens the session as soon as the other closes it: the loser of each race for the
    lock gets ``SessionLocked``; every acknowledged event is stored once, at its seq."""
    url = url_for(scheme, tmp_path)
    holder: list[Session] = []
    with open_store(url, clock=agent_clock(holder)) as store:
        session = store.create("s")
        holder.append(session)
        first = [event.to_wire() for event in islice(agent_events(session, 0), 5)]
        session.close()
    rounds = "12"
    with (
        writer("take-turns", url, "s", "A ", rounds) as a,
        writer("take-turns", url, "s", "B ", rounds) as b,
    ):
        a.read_until("R")
        b.read_until("R")
        a.send("go")
        b.send("go")
        # Both are read at once: a writer blocked on a full pipe while it holds the session
        # would keep the other from ever getting in.
        with ThreadPoolExecutor(2) as pool:
            assert list(pool.map(Writer.finish, (a, b))) == [0, 0]
    acknowledged = a.acks() + b.acks()
    lines = a.lines + b.lines
    assert sum(line.startswith("O ") for line in lines) == 24
    refusals = sum(int(line[2:]) for line in lines if line.startswith("L "))
    assert refusals > 0, "the writers never raced for the lock"
    events = check_final(url, "s", acknowledged)
    assert events[:5] == first
    acked = {event["seq"] for event in acknowledged}
    others = [event for event in events[5:] if event["seq"] not in acked]
    assert all(is_repair(event) for event in others), others
