"""The writer the crash tests kill: a deterministic agent appending to a store until SIGKILL.

``agent_events(session, seed)`` plays an agent loop — turns of steps, a system prompt and request
header, user prompts, assistant messages calling tools, ``tool/call`` and ``tool/result`` pairs,
content rewrites and compactions — appending every event through the public API. It is
deterministic in its seed and the log it continues, so the test process replays it on an
in-memory session and knows exactly which events a killed writer appended, at which seq.

Run as a script, this module is a fork server: it imports agentlog once, then forks one writer
per JSON command line read from stdin (spawning a fresh interpreter per trial would cost more
than the trial). Each writer opens the store in a process of its own, creates or resumes the
session and appends until it is killed, reporting on stdout with one ``os.write`` per line:

``P <pid>``
    the writer started (the test needs the pid to kill it);
``A <seq>``
    events up to ``seq`` are acknowledged: the append of ``seq`` returned (durable mode),
    ``Session.flush()`` returned with ``seq`` the last appended event (write-behind mode), or
    the ``Session.batch()`` block that appended ``seq`` exited (``"batch"`` commands: blocks of
    1 to 12 events);
``K <point>``
    the writer is about to SIGKILL itself at a kill point of its append path;
``D``
    the writer appended all it was asked to and waits to be killed;
``E <error>``
    the writer failed (a bug): the test fails with the message.

The server reports ``X <pid> <wait status>`` once the writer is gone.

A command's ``"host"`` makes the writer name another host in its PostgreSQL lease (a worker of
another machine, whose lease only expires).

Kill points (``"kill"`` in the command) stop the writer from inside the append path, at the
``nth`` time the point is reached. File stores: ``write`` (a torn write: a ``fraction`` of the
buffer reaches the file, then SIGKILL), ``fdatasync``, ``fsync``, ``link``, ``ftruncate``
(SIGKILL just before the call). SQLite: ``insert`` (rows inserted, not committed),
``commit-before``, ``commit-after``. Every store: ``validator`` (before the event is
persisted) and ``observer`` (after it is, before the writer acknowledges it).

Before each acknowledgement a writer audits its store: a file store must have synced every
file and directory it wrote (see ``_AuditedOs``), a SQLite store must run WAL with
``synchronous=FULL``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import agentlog.stores._durable_files
import agentlog.stores.jsonl.backend
import agentlog.stores.jsonl.cut
import agentlog.stores.jsonl.lease
from agentlog import Event, Session, tool_pairing_balanced_after, tool_pairing_balanced_before
from agentlog import messages as m
from agentlog.errors import SessionNotFound
from agentlog.stores import Store, open_store
from agentlog.stores.sqlite import SqliteBackend

T0 = 1_700_000_000_000
"""Epoch ms of every header and marker; an appended event's time is ``T0 + seq``."""
PROVIDER, MODEL = "scripted", "crash-model"
_TOOLS = ("bash", "read", "grep")


def agent_clock(holder: list[Session]) -> Callable[[], int]:
    """The clock of a writer: ``T0`` until ``holder`` holds the session, then ``T0 + seq``.

    Distinct times per seq tell a repair closer (which takes the time of the last stored event)
    from the agent's own event at the same seq.
    """

    def clock() -> int:
        return T0 + holder[0].seq if holder else T0

    return clock


def agent_events(session: Session, seed: int, *, tag: str = "") -> Iterator[Event]:
    """Append an agent's events to ``session`` forever, yielding each one as it is committed.

    The session must not be inside a turn (a fresh or resumed session never is).
    """
    rng = random.Random(seed)
    turn = sum(1 for event in session.events if event.type == "turn/start")
    while True:
        turn += 1
        yield from _turn(session, rng, turn, tag)


def _turn(s: Session, rng: random.Random, turn: int, tag: str) -> Iterator[Event]:
    yield s.append("turn/start", {"turn": turn})
    if rng.random() < 0.25:
        yield from _rewrite_tool_result(s, rng)
    for step in range(1, rng.randint(1, 3) + 1):
        yield from _step(s, rng, turn, step, tag)
    yield s.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    if rng.random() < 0.2:
        yield from _compact(s, rng)


def _step(s: Session, rng: random.Random, turn: int, step: int, tag: str) -> Iterator[Event]:
    yield s.append("step/start", {"turn": turn, "step": step})
    if step == 1:
        reason = "initial" if turn == 1 else "resume"
        header = {"header": {"config": {"provider": PROVIDER, "model": MODEL}}, "reason": reason}
        yield s.append("request/header", header)
        if turn == 1:
            system = m.system("be brief", turn=turn, step=step, id=f"s-{s.seq}")
            yield s.append("system/message", system, surface_op="append")
        prompt = m.user(f"{tag}prompt {turn}: fix the bug — é✓🙂", id=f"u-{s.seq}")
        yield s.append("user/message", prompt, surface_op="append")
    if rng.random() < 0.15:
        yield s.append("assistant/attempt", {"turn": turn, "step": step, "stream": []})
    calls = [(f"call-{s.seq}-{i}", rng.choice(_TOOLS)) for i in range(rng.randint(0, 3))]
    content: list[dict[str, Any]] = [m.text(f"{tag}reply {turn}.{step}")]
    content += [m.tool_call(call_id, name, '{"path": "x"}') for call_id, name in calls]
    reply = m.assistant(
        content, provider=PROVIDER, model=MODEL, turn=turn, step=step, id=f"a-{s.seq}"
    )
    yield s.append("assistant/message", reply, surface_op="append")
    for call_id, name in calls:
        call = s.append(
            "tool/call",
            {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": "{}"},
        )
        yield call
        # Mostly small outputs; some large enough to span pages and be stored compressed.
        size = rng.choice((20, 200, 2_000, 9_000))
        output = "".join(rng.choice("abcdefgh \n") for _ in range(size))
        result = m.tool_result(call_id, output, turn=turn, step=step, id=f"r-{s.seq}")
        yield s.append("tool/result", result, surface_op="append", source_event_seqs=[call.seq])
    yield s.append("step/end", {"turn": turn, "step": step})


def _rewrite_tool_result(s: Session, rng: random.Random) -> Iterator[Event]:
    """A content-only rewrite of a visible tool result (what a pruner appends)."""
    results = [seq for seq in s.surface.nodes if s.event_at(seq).type == "tool/result"]
    if not results:
        return
    target = s.event_at(rng.choice(results))
    data = dict(target.data)
    data["message"] = {**target.data["message"], "content": [m.text("[pruned]")]}
    op = {"op": "replace", "startSeq": target.seq, "endSeq": target.seq}
    yield s.append("tool/result", data, surface_op=op, source_event_seqs=[target.seq])


def _compact(s: Session, rng: random.Random) -> Iterator[Event]:
    """Replace a pairing-balanced range after the system head with a summary."""
    nodes = s.surface.nodes
    starts = [i for i in range(1, len(nodes)) if tool_pairing_balanced_before(s, nodes[i])]
    if not starts:
        return
    start = rng.choice(starts)
    ends = [j for j in range(start, len(nodes)) if tool_pairing_balanced_after(s, nodes[j])]
    end = rng.choice(ends)
    shadowed = list(nodes[start : end + 1])
    summary = m.user(
        f"summary of {len(shadowed)} messages",
        id=f"sum-{s.seq}",
        source={"kind": "compact-checkpoint"},
    )
    op = {"op": "replace", "startSeq": nodes[start], "endSeq": nodes[end]}
    yield s.append("user/message", summary, surface_op=op, source_event_seqs=shadowed)


# --- the writer process -------------------------------------------------------------------


def report(line: str) -> None:
    """One line to the test, in one ``write`` (atomic on a pipe up to PIPE_BUF bytes)."""
    os.write(1, (line[:3000] + "\n").encode("utf-8", "replace"))


class _Tripwire:
    """Counts arrivals at one kill point; the ``nth`` arrival SIGKILLs the process."""

    def __init__(self, point: str, nth: int, fraction: float) -> None:
        self.point = point
        self.remaining = nth
        self.fraction = fraction

    def arrive(self, point: str) -> bool:
        if point != self.point:
            return False
        self.remaining -= 1
        return self.remaining == 0

    def check(self, point: str) -> None:
        if self.arrive(point):
            die(point)


def die(point: str) -> None:
    """SIGKILL this process, as a crash would (no cleanup, no flush)."""
    report(f"K {point}")
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)  # not reached: SIGKILL cannot be caught


class _AuditedOs:
    """``os`` as the JSONL store's modules see it: kill points, and an audit of its syncs.

    The audit tracks which files and directories hold writes (or new links) not yet synced;
    ``check_synced()`` fails if an acknowledgement would leave any, so the tests also prove
    what a SIGKILL cannot show: that acknowledged bytes were handed to ``fsync``/``fdatasync``.
    """

    def __init__(self, wire: _Tripwire | None) -> None:
        self._wire = wire
        self._paths: dict[int, str] = {}
        self._unsynced: set[str] = set()
        self._lock = threading.Lock()  # write-behind writes on a background thread

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def _arrive(self, point: str) -> bool:
        return self._wire is not None and self._wire.arrive(point)

    def _dirty(self, fd: int) -> None:
        with self._lock:
            self._unsynced.add(self._paths.get(fd, f"fd {fd}"))

    def check_synced(self) -> None:
        with self._lock:
            if self._unsynced:
                raise AssertionError(f"acknowledged with unsynced writes to {self._unsynced}")

    def open(self, path: Any, flags: int, mode: int = 0o777) -> int:
        fd = os.open(path, flags, mode)
        with self._lock:
            self._paths[fd] = str(path)
        return fd

    def close(self, fd: int) -> None:
        os.close(fd)
        with self._lock:
            self._paths.pop(fd, None)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        self._dirty(fd)
        if self._arrive("write"):
            assert self._wire is not None
            view = memoryview(data)
            cut = int(len(view) * self._wire.fraction)
            if cut:
                os.write(fd, view[:cut])  # a torn write: only part of the buffer lands
            die("write")
        return os.write(fd, data)

    def ftruncate(self, fd: int, length: int) -> None:
        if self._arrive("ftruncate"):
            die("ftruncate")
        self._dirty(fd)
        os.ftruncate(fd, length)

    def link(self, source: Any, target: Any) -> None:
        if self._arrive("link"):
            die("link")
        os.link(source, target)
        with self._lock:
            self._unsynced.add(str(Path(target).parent))  # the new name needs a directory fsync
            if str(source) in self._unsynced:
                self._unsynced.add(str(target))

    def fdatasync(self, fd: int) -> None:
        if self._arrive("fdatasync"):
            die("fdatasync")
        os.fdatasync(fd)
        self._synced(fd)

    def fsync(self, fd: int) -> None:
        if self._arrive("fsync"):
            die("fsync")
        os.fsync(fd)
        self._synced(fd)

    def _synced(self, fd: int) -> None:
        with self._lock:
            self._unsynced.discard(self._paths.get(fd, f"fd {fd}"))


class _KillingDb:
    """A SQLite connection with the tripwire around inserts and commits."""

    def __init__(self, db: Any, wire: _Tripwire) -> None:
        self._db = db
        self._wire = wire

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def execute(self, sql: str, *args: Any) -> Any:
        if sql != "COMMIT":
            return self._db.execute(sql, *args)
        self._wire.check("commit-before")
        result = self._db.execute(sql, *args)
        self._wire.check("commit-after")
        return result

    def executemany(self, sql: str, rows: Any) -> Any:
        result = self._db.executemany(sql, rows)
        self._wire.check("insert")
        return result


def _arm(store: Store, wire: _Tripwire | None) -> Callable[[], None]:
    """Plant the tripwire and the sync audit in the store; return the audit's check."""
    backend = store._backend  # the test reaches into its own store's backend on purpose
    if isinstance(backend, SqliteBackend):
        synchronous = backend._db.execute("PRAGMA synchronous").fetchone()[0]
        journal = backend._db.execute("PRAGMA journal_mode").fetchone()[0]
        if (synchronous, journal) != (2, "wal"):
            raise AssertionError(f"SQLite runs synchronous={synchronous} journal={journal}")
        if wire is not None:
            backend._db = _KillingDb(backend._db, wire)  # type: ignore[assignment]  # a proxy
        return lambda: None
    audited = _AuditedOs(wire)
    # The modules' global ``os``, for this process: the backend and its durable-file steps.
    for module in (
        agentlog.stores.jsonl.backend,
        agentlog.stores.jsonl.cut,
        agentlog.stores.jsonl.lease,
        agentlog.stores._durable_files,
    ):
        vars(module)["os"] = audited
    return audited.check_synced


def run_writer(command: dict[str, Any]) -> None:
    """One trial's writer: open or create the session, then append and acknowledge."""
    report(f"P {os.getpid()}")
    if "host" in command:
        # A worker of another machine (PostgreSQL leases name their host): its lease outlives
        # it until it expires, where a dead process of this host is taken over at once.
        socket.gethostname = lambda: command["host"]
    kill = command.get("kill")
    wire = _Tripwire(kill["point"], kill["nth"], kill["fraction"]) if kill else None
    write_behind = command["write_behind"]
    holder: list[Session] = []
    store = open_store(
        command["url"],
        write_behind=write_behind,
        batch_delay=command.get("batch_delay", 0.2),
        clock=agent_clock(holder),
    )
    check_synced = _arm(store, wire)
    try:
        session = store.open(command["session"])
    except SessionNotFound:
        session = store.create(command["session"])
    holder.append(session)
    if wire is not None:
        session.add_validator(lambda _session, _event: wire.check("validator"))
        session.add_observer(lambda _session, _event: wire.check("observer"))
    flushes = random.Random(command["seed"] + 1)
    events = agent_events(session, command["seed"])
    if command.get("batch"):
        _append_in_batches(session, events, command, check_synced)
        return
    for _ in range(command["events"]):
        event = next(events)
        if not write_behind:
            check_synced()
            report(f"A {event.seq}")
        elif flushes.random() < 0.15:
            session.flush()
            check_synced()
            report(f"A {event.seq}")
    session.flush()
    check_synced()
    report(f"A {session.seq - 1}")
    report("D")
    time.sleep(60)  # wait to be killed


def _append_in_batches(
    session: Session,
    events: Iterator[Event],
    command: dict[str, Any],
    check_synced: Callable[[], None],
) -> None:
    """Append in group commits of 1 to 12 events, acknowledging each block's exit."""
    sizes = random.Random(command["seed"] + 2)
    remaining = command["events"]
    while remaining > 0:
        block = min(remaining, sizes.randint(1, 12))
        with session.batch():
            for _ in range(block):
                next(events)
        remaining -= block
        check_synced()
        report(f"A {session.seq - 1}")
    report("D")
    time.sleep(60)  # wait to be killed


def serve() -> None:
    """Fork one writer per command line on stdin; report each writer's end."""
    with contextlib.suppress(ImportError):  # the postgres extra, imported once for every fork
        import agentlog.stores.postgres  # noqa: F401
    for line in sys.stdin:
        command = json.loads(line)
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                run_writer(command)
            except BaseException as exc:
                text = "".join(traceback.format_exception(exc)).replace("\n", " | ")
                report(f"E {type(exc).__name__}: {exc} | {text}")
                status = 3
            os._exit(status)
        _, status = os.waitpid(pid, 0)
        report(f"X {pid} {status}")


if __name__ == "__main__":
    serve()
