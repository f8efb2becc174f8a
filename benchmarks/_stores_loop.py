"""The stores suite's loop-shaped part: durable turns and the cold open, as the loop writes them.

Issue 11 / DESIGN.md "Performance targets". The turn is ``benchmarks._loop``'s 8-event tool
turn (~9 KB). Measured on JSONL and SQLite stores, in the same run as two baselines:

* raw JSONL: serialize the turn's 8 wire events, one ``os.write`` and one ``os.fdatasync``;
* raw SQLite (WAL, ``synchronous=FULL``): one ``BEGIN IMMEDIATE``, the 8 rows, ``COMMIT``.

Four ways to make turns durable, every turn timed alone over ``LOOP_TURNS`` turns, every subject
and baseline interleaved turn by turn:

(a) ``durable``: the default mode, each of the 8 appends durable before it returns;
(b) ``batch``: one ``session.batch()`` per turn (one write + fdatasync / one transaction);
(c) ``checkpoints``: the loop's three durable points per turn, one ``batch()`` each;
(d) ``write_behind``: ``write_behind=True`` and one ``flush()`` at the turn's end.

Then the cold open + ``derive_messages()`` of a loop-shaped session of 10^5 messages in a fresh
process, against reading the JSONL transcript and ``orjson.loads`` per line, with peak memory.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from agentlog import Session, open_store
from benchmarks._harness import (
    Benchmark,
    Figure,
    bootstrap_interval,
    fig,
    median,
    now_ns,
    p50_ratio,
    round_robin,
)
from benchmarks._loop import CHECKPOINTS, MESSAGES_PER_TURN, Turn, loop_turns

__all__ = [
    "LoopTurns",
    "RawJsonl",
    "RawSqlite",
    "bench_loop_cold",
    "bench_loop_turns",
    "build_loop_store",
    "percentile",
    "wire_turns",
]

SESSION: Final = "bench"
BACKENDS: Final = ("jsonl", "sqlite")
TITLES: Final = {"jsonl": "JSONL", "sqlite": "SQLite"}
MODES: Final = ("durable", "batch", "checkpoints", "write_behind")
MODE_TITLES: Final = {
    "durable": "(a) durable per append",
    "batch": "(b) one batch() per turn",
    "checkpoints": "(c) three durable points per turn",
    "write_behind": "(d) write-behind + one flush() per turn",
}

LOOP_TURNS: Final = 10_000
LOOP_WARMUP: Final = 20
BATCH_TARGET: Final = 1.2
"""Issue 11's acceptance and DESIGN.md's target for (b): p50 against raw JSONL."""
MAX_TARGET: Final = 2.0
"""The worst turn of (b) against the raw JSONL baseline's worst."""
CHECKPOINT_TARGET: Final = 3.3
"""(c) against one raw fsync per turn."""

COLD_MESSAGES: Final = 100_000
COLD_TURNS: Final = -(-COLD_MESSAGES // MESSAGES_PER_TURN)
COLD_BUILD_FLUSH: Final = 100
"""Turns per durable batch while building the cold-open stores (the bytes do not depend on it)."""
COLD_ROUNDS: Final = 3
COLD_TARGET: Final = 2.0
"""Issue 11's acceptance floor; DESIGN.md's target is ``COLD_DESIGN_TARGET``."""
COLD_DESIGN_TARGET: Final = 1.5

RunCold = Callable[[str, str, bool], dict[str, Any]]
"""``(mode, target, collect) -> result`` of one cold child (the stores suite's runner)."""


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _url(backend: str, path: Path) -> str:
    return f"{backend}:///{path}"


def _verdict(low: float, high: float, target: float) -> bool | None:
    return True if high <= target else False if low > target else None


# --- (a)-(d): durable turns ----------------------------------------------------------------


class LoopTurns:
    """An attached session in one mode; each call appends one turn and times it."""

    def __init__(self, backend: str, mode: str, directory: Path, turns: list[Turn]) -> None:
        path = directory / f"loop-{mode}-{backend}"
        self.store = open_store(
            _url(backend, path.with_suffix(".db") if backend == "sqlite" else path),
            write_behind=mode == "write_behind",
        )
        self.session = self.store.create(SESSION, cwd=str(directory))
        self.turns = turns
        self.mode = mode
        self.flushes: list[int] = []

    def __call__(self, index: int) -> int:
        session, turn = self.session, self.turns[index]
        append = session.append
        start = now_ns()
        if self.mode == "durable":
            for event_type, data, surface_op in turn:
                append(event_type, data, surface_op=surface_op)
        elif self.mode == "batch":
            with session.batch():
                for event_type, data, surface_op in turn:
                    append(event_type, data, surface_op=surface_op)
        elif self.mode == "checkpoints":
            for first, end in CHECKPOINTS:
                with session.batch():
                    for event_type, data, surface_op in turn[first:end]:
                        append(event_type, data, surface_op=surface_op)
        else:
            for event_type, data, surface_op in turn:
                append(event_type, data, surface_op=surface_op)
            flushing = now_ns()
            session.flush()
            end_ns = now_ns()
            self.flushes.append(end_ns - flushing)
            return end_ns - start
        return now_ns() - start

    def close(self) -> None:
        self.session.close()
        self.store.close()


class RawJsonl:
    """Raw JSONL: the turn's wire events serialized, one write, one fdatasync."""

    def __init__(self, path: Path, wire: list[list[dict[str, Any]]]) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        self.wire = wire

    def __call__(self, index: int) -> int:
        dumps, fd = orjson.dumps, self.fd
        start = now_ns()
        os.write(fd, b"".join([dumps(event) + b"\n" for event in self.wire[index]]))
        os.fdatasync(fd)
        return now_ns() - start

    def close(self) -> None:
        os.close(self.fd)


class RawSqlite:
    """Raw SQLite, WAL and ``synchronous=FULL``: one transaction inserting the turn's rows."""

    def __init__(self, path: Path, wire: list[list[dict[str, Any]]]) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")
        self.db.execute(
            "CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
            "data TEXT NOT NULL, PRIMARY KEY (session_id, seq))"
        )
        self.wire = wire

    def __call__(self, index: int) -> int:
        dumps, execute = orjson.dumps, self.db.execute
        start = now_ns()
        rows = [(SESSION, event["seq"], dumps(event).decode()) for event in self.wire[index]]
        execute("BEGIN IMMEDIATE")
        self.db.executemany("INSERT INTO events VALUES (?, ?, ?)", rows)
        execute("COMMIT")
        return now_ns() - start

    def close(self) -> None:
        self.db.close()


def wire_turns(turns: list[Turn]) -> list[list[dict[str, Any]]]:
    """The wire events a session appends for ``turns``, grouped by turn (the baselines' input)."""
    session = Session.create("wire")
    for turn in turns:
        for event_type, data, surface_op in turn:
            session.append(event_type, data, surface_op=surface_op)
    events = [event.to_wire() for event in session.events]
    return [events[8 * index : 8 * index + 8] for index in range(len(turns))]


def bench_loop_turns(directory: Path) -> list[Benchmark]:
    """(a)-(d) on both backends against both raw baselines, all interleaved turn by turn."""
    total = LOOP_WARMUP + LOOP_TURNS
    turns = loop_turns(total)
    wire = wire_turns(turns)
    turn_bytes = sum(len(orjson.dumps(event)) + 1 for turn in wire for event in turn) / total
    subjects: dict[str, Callable[[int], int]] = {
        "raw-jsonl": RawJsonl(directory / "loop-raw.jsonl", wire),
        "raw-sqlite": RawSqlite(directory / "loop-raw.db", wire),
    }
    for backend in BACKENDS:
        for mode in MODES:
            subjects[f"{mode}.{backend}"] = LoopTurns(backend, mode, directory, turns)
    timings = round_robin(subjects, total, LOOP_WARMUP)
    flushes = {
        name: subject.flushes[LOOP_WARMUP:]
        for name, subject in subjects.items()
        if isinstance(subject, LoopTurns) and subject.flushes
    }
    for subject in subjects.values():
        subject.close()  # type: ignore[attr-defined]  # every subject has close()
    raw, raw_sql = timings["raw-jsonl"], timings["raw-sqlite"]
    benchmarks: list[Benchmark] = []
    for backend in BACKENDS:
        for mode in MODES:
            name = f"{mode}.{backend}"
            benchmarks += _turn_records(
                mode, backend, timings[name], raw, raw_sql, flushes.get(name), turn_bytes
            )
    return benchmarks


def _ms(ns: float) -> float:
    return ns / 1e6


def _turn_records(
    mode: str,
    backend: str,
    subject: list[int],
    raw: list[int],
    raw_sql: list[int],
    flushes: list[int] | None,
    turn_bytes: float,
) -> list[Benchmark]:
    p50, p99, worst = median(subject), percentile(subject, 0.99), max(subject)
    raw50, raw99, raw_max = median(raw), percentile(raw, 0.99), max(raw)
    sql50, sql99, sql_max = median(raw_sql), percentile(raw_sql, 0.99), max(raw_sql)
    low, high = bootstrap_interval(p50_ratio, [subject, raw])
    target = {"batch": BATCH_TARGET, "checkpoints": CHECKPOINT_TARGET}.get(mode)
    figures: dict[str, Figure] = {
        "p99": fig(_ms(p99), "ms/turn"),
        "max": fig(_ms(worst), "ms/turn"),
        "raw JSONL p50": fig(_ms(raw50), "ms/turn"),
        "raw JSONL p99": fig(_ms(raw99), "ms/turn"),
        "raw JSONL max": fig(_ms(raw_max), "ms/turn"),
        "raw SQLite p50": fig(_ms(sql50), "ms/turn"),
        "raw SQLite p99": fig(_ms(sql99), "ms/turn"),
        "raw SQLite max": fig(_ms(sql_max), "ms/turn"),
        "p50 ratio to raw JSONL, 95% bootstrap interval, low": fig(low, "×"),
        "p50 ratio to raw JSONL, 95% bootstrap interval, high": fig(high, "×"),
        "p99 ratio to raw JSONL": fig(p99 / raw99, "×"),
        "max ratio to raw JSONL": fig(worst / raw_max, "×"),
        "p50 ratio to raw SQLite": fig(p50 / sql50, "×"),
        "p99 ratio to raw SQLite": fig(p99 / sql99, "×"),
        "max ratio to raw SQLite": fig(worst / sql_max, "×"),
        "JSON per turn (mean)": fig(turn_bytes, "bytes"),
    }
    if flushes:
        figures |= {
            "flush() p50": fig(_ms(median(flushes)), "ms"),
            "flush() p99": fig(_ms(percentile(flushes, 0.99)), "ms"),
            "flush() max": fig(_ms(max(flushes)), "ms"),
            "flush() p99 / raw JSONL p99": fig(percentile(flushes, 0.99) / raw99, "×"),
        }
    ident = f"loop_turn.{mode}.{backend}"
    how = {
        "durable": "8 appends, each durable before it returns (8 writes + fdatasyncs / 8 "
        "transactions)",
        "batch": "8 appends in one session.batch(): one write + fdatasync / one transaction",
        "checkpoints": "three session.batch() blocks per turn (3 + 2 + 3 events): 3 durable writes",
        "write_behind": "write_behind=True (batch_delay 0.2 s), 8 appends, then flush(): the "
        "flush writes the turn on the calling thread",
    }[mode]
    records: list[Benchmark] = [
        {
            "id": ident,
            "title": f"loop-shaped turn (8 events, ~9 KB), {MODE_TITLES[mode]}, {TITLES[backend]}",
            "statistic": (
                f"median (p50) of {LOOP_TURNS:,} turns, each timed alone, after {LOOP_WARMUP} "
                "untimed; 8 subjects and both baselines interleaved turn by turn"
            ),
            "value": round(_ms(p50), 4),
            "unit": "ms/turn (p50)",
            "baseline": {
                "name": "raw JSONL: orjson.dumps the 8 wire events, one os.write + os.fdatasync",
                "value": round(_ms(raw50), 4),
                "unit": "ms/turn",
            },
            "ratio": round(p50 / raw50, 3),
            "target": (
                None
                if target is None
                else {
                    "text": f"≤ {target:g}× raw JSONL + one fsync per turn"
                    + (
                        " (design target)"
                        if mode == "batch"
                        else " (design target: 3 durable points)"
                    ),
                    "max_ratio": target,
                }
            ),
            "met": None if target is None else _verdict(low, high, target),
            "figures": figures,
            "notes": (
                f"{how}. The collector stays on (fixtures frozen). The verdict needs the 95% "
                f"bootstrap interval of the p50 ratio on one side of the target: [{low:.3g}×, "
                f"{high:.3g}×]."
            ),
        }
    ]
    if mode == "batch":
        ratio = worst / raw_max
        records.append(
            {
                "id": f"{ident}.max",
                "title": f"worst loop-shaped turn of {LOOP_TURNS:,}, one batch() per turn, "
                f"{TITLES[backend]}",
                "statistic": f"max over {LOOP_TURNS:,} turns (the same run as {ident})",
                "value": round(_ms(worst), 3),
                "unit": "ms (max)",
                "baseline": {
                    "name": "raw JSONL + one fsync per turn, its worst turn",
                    "value": round(_ms(raw_max), 3),
                    "unit": "ms",
                },
                "ratio": round(ratio, 3),
                "target": {
                    "text": f"≤ {MAX_TARGET:g}× the raw baseline's worst (no collector stalls)",
                    "max_ratio": MAX_TARGET,
                },
                "met": ratio <= MAX_TARGET,
                "figures": {
                    "p99.9": fig(_ms(percentile(subject, 0.999)), "ms/turn"),
                    "raw JSONL p99.9": fig(_ms(percentile(raw, 0.999)), "ms/turn"),
                    "turns over 2× the raw max": fig(
                        sum(1 for value in subject if value > 2 * raw_max), "turns"
                    ),
                },
                "notes": (
                    "One slow fsync decides a max on either side: this figure is only as quiet "
                    "as the machine. The collector stays on; frozen events are not tracked, so "
                    "no full collection walks the growing log."
                ),
            }
        )
    return records


# --- the cold open of a loop-shaped session -------------------------------------------------


def build_loop_store(backend: str, path: Path, cwd: str, turns: list[Turn]) -> None:
    """A stored session of ``turns``, written write-behind in batches of turns."""
    with open_store(_url(backend, path), write_behind=True, batch_delay=3600) as store:
        session = store.create(SESSION, cwd=cwd)
        for number, turn in enumerate(turns, 1):
            for event_type, data, surface_op in turn:
                session.append(event_type, data, surface_op=surface_op)
            if number % COLD_BUILD_FLUSH == 0:
                session.flush()
        session.close()
    with open_store(_url(backend, path)) as store:
        store.open(SESSION).close()  # the session/end-seed marker, once: later opens write nothing


def _transcript(root: Path) -> Path:
    (path,) = (item for item in root.rglob("*.jsonl") if item.is_file())
    return path


def bench_loop_cold(directory: Path, run_cold: RunCold) -> list[Benchmark]:
    """Open + derive of 10^5 loop-shaped messages, JSONL and SQLite, against the raw parse."""
    turns = loop_turns(COLD_TURNS, seed=29)
    paths = {"jsonl": directory / "cold-loop", "sqlite": directory / "cold-loop.db"}
    for backend, path in paths.items():
        build_loop_store(backend, path, str(directory), turns)
    del turns
    transcript = _transcript(paths["jsonl"])
    runs: list[tuple[str, str, str, bool]] = [
        ("raw-jsonl", "baseline", str(transcript), True),
        ("open", "jsonl", _url("jsonl", paths["jsonl"]), True),
        ("open", "sqlite", _url("sqlite", paths["sqlite"]), True),
        ("raw-jsonl", "baseline", str(transcript), False),
        ("open", "jsonl", _url("jsonl", paths["jsonl"]), False),
        ("open", "sqlite", _url("sqlite", paths["sqlite"]), False),
    ]
    results: dict[tuple[str, str, bool], list[dict[str, Any]]] = {
        (mode, backend, collect): [] for mode, backend, _, collect in runs
    }
    for round_ in range(COLD_ROUNDS):
        rotation = round_ * 2 % len(runs)
        for mode, backend, target, collect in runs[rotation:] + runs[:rotation]:
            results[mode, backend, collect].append(run_cold(mode, target, collect))

    def seconds(key: tuple[str, str, bool]) -> float:
        return median([result["seconds"] for result in results[key]])

    def grown(key: tuple[str, str, bool]) -> float:
        return median([r["peak"] - r["rss_before"] for r in results[key]])

    base, base_off = ("raw-jsonl", "baseline", True), ("raw-jsonl", "baseline", False)
    json_bytes = transcript.stat().st_size
    benchmarks: list[Benchmark] = []
    for backend in BACKENDS:
        key, off = ("open", backend, True), ("open", backend, False)
        value, ratio = seconds(key), seconds(key) / seconds(base)
        peak, base_peak = grown(key), grown(base)
        time_met, memory_met = ratio <= COLD_TARGET, peak <= base_peak
        off_ratio = seconds(off) / seconds(base_off)
        benchmarks.append(
            {
                "id": f"cold_loop.open.{backend}",
                "title": f"cold open() + derive_messages(), 10^5 loop-shaped messages "
                f"({8 * COLD_TURNS:,} events), {TITLES[backend]}",
                "statistic": (
                    f"median of {COLD_ROUNDS} fresh processes, interleaved with the "
                    "baseline's; timed from open_store() to the returned list"
                ),
                "value": round(value, 3),
                "unit": "s",
                "baseline": {
                    "name": "fresh process: read the JSONL transcript, orjson.loads per line",
                    "value": round(seconds(base), 3),
                    "unit": "s",
                },
                "ratio": round(ratio, 3),
                "target": {
                    "text": f"≤ {COLD_TARGET:g}× (floor; design target ≤ {COLD_DESIGN_TARGET:g}×), "
                    "peak memory ≤ baseline's",
                    "max_ratio": COLD_TARGET,
                },
                "met": time_met and memory_met,
                "figures": {
                    "peak memory growth": fig(peak / 2**20, "MiB"),
                    "baseline peak memory growth": fig(base_peak / 2**20, "MiB"),
                    "peak memory ratio": fig(peak / base_peak, "×"),
                    "collector disabled: open + derive": fig(seconds(off), "s"),
                    "collector disabled: baseline": fig(seconds(base_off), "s"),
                    "collector disabled: ratio": fig(off_ratio, "×"),
                    "collector disabled: peak memory growth": fig(grown(off) / 2**20, "MiB"),
                    "garbage collections during the work": fig(
                        results[key][0]["collections"], "collections"
                    ),
                    "baseline garbage collections": fig(
                        results[base][0]["collections"], "collections"
                    ),
                    "min over rounds": fig(min(r["seconds"] for r in results[key]), "s"),
                    "baseline min over rounds": fig(min(r["seconds"] for r in results[base]), "s"),
                    "messages derived": fig(results[key][0]["items"], "messages"),
                    "JSON size of the log": fig(json_bytes / 1e6, "MB"),
                },
                "notes": (
                    f"Time {'met' if time_met else 'MISSED'} ({ratio:.2f}× against "
                    f"≤ {COLD_TARGET:g}×; design target {COLD_DESIGN_TARGET:g}× "
                    f"{'met' if ratio <= COLD_DESIGN_TARGET else 'missed'}; with the collector "
                    f"off in both processes {off_ratio:.2f}×); peak memory "
                    f"{'met' if memory_met else 'MISSED'} ({peak / 2**20:.0f} MiB against "
                    f"{base_peak / 2**20:.0f} MiB of growth). Steady state: the session was "
                    "opened once before (which wrote its end-seed marker). The baseline reads "
                    "the JSONL store's transcript of the same log for both backends."
                ),
            }
        )
    return benchmarks
