"""The peers suite: agentlog beside the session stores users pick instead, in one run (issue 11).

``python -m benchmarks peers`` needs the ``bench`` extra (``pip install 'agentlog[bench]'``:
``openai-agents`` and ``eventsourcing``); it installs nothing itself, and a peer whose package
is missing is listed under ``skipped`` with the command that installs it. Measured in the same
run, on the loop-shaped turn of ``benchmarks._loop`` (8 events, ~9 KB):

1. The durable turn, every turn timed alone over ``TURNS`` turns, all interleaved: raw JSONL +
   one fsync per turn (the baseline); agentlog JSONL and SQLite, one ``batch()`` per turn;
   ``agents.SQLiteSession.add_items`` of the turn's four items; an eventsourcing aggregate
   recording the turn's 8 events, saved once per turn.
2. The cold load of a 10^5-message session in a fresh process, with peak memory: reading the
   JSONL transcript and ``orjson.loads`` per line (the baseline); agentlog ``open()`` +
   ``derive_messages()``; ``SQLiteSession.get_items()``; ``repository.get`` of the aggregate.

No targets: these are the figures the README's comparison cites. docs/benchmarks.md explains
them. Cold children run as ``python -m benchmarks.peers cold MODE TARGET``.
"""

from __future__ import annotations

import gc
import importlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import orjson

from benchmarks._harness import (
    Benchmark,
    Figure,
    fig,
    measure_work,
    median,
    now_ns,
    round_robin,
)
from benchmarks._loop import MESSAGES_PER_TURN, Turn, loop_turns
from benchmarks._stores_loop import (
    LoopTurns,
    RawJsonl,
    build_loop_store,
    percentile,
    wire_turns,
)

__all__ = ["run"]

ROOT: Final = Path(__file__).resolve().parent.parent
PEERS: Final = {"openai_agents": "openai-agents", "eventsourcing": "eventsourcing"}
"""Part module suffix → the package it needs (both in the ``bench`` extra)."""
TITLES: Final = {
    "raw": "raw JSONL + one fsync per turn",
    "agentlog.jsonl": "agentlog JSONL, one batch() per turn",
    "agentlog.sqlite": "agentlog SQLite, one batch() per turn",
    "openai_agents": "OpenAI Agents SQLiteSession.add_items",
    "eventsourcing": "eventsourcing aggregate (SQLite), one save per turn",
}
TURNS: Final = 10_000
WARMUP: Final = 20
COLD_MESSAGES: Final = 100_000
COLD_TURNS: Final = -(-COLD_MESSAGES // MESSAGES_PER_TURN)
COLD_BUILD_BATCH: Final = 100
COLD_ROUNDS: Final = 3


def _parts() -> tuple[dict[str, ModuleType], dict[str, str]]:
    parts: dict[str, ModuleType] = {}
    skipped: dict[str, str] = {}
    for part, package in PEERS.items():
        try:
            parts[part] = importlib.import_module(f"benchmarks._peer_{part}")
        except ImportError as exc:
            skipped[part] = f"{exc}; install it with: pip install 'agentlog[bench]' ({package})"
    return parts, skipped


# --- 1. the durable turn -------------------------------------------------------------------


def _peer_turns(part: str, module: ModuleType, directory: Path, turns: list[Turn]) -> Any:
    """A callable ``index -> ns`` appending turn ``index`` to the peer's store, and its closer."""
    if part == "openai_agents":
        items = [module.turn_items(turn) for turn in turns]
        store = module.Items(directory / "peer-agents.db", items)

        def add(index: int) -> int:
            start = now_ns()
            store.add(items[index])
            return now_ns() - start

        return add, store.close
    app = module.open_application(directory / "peer-eventsourcing.db")
    conversation = module.Conversation()

    def save(index: int) -> int:
        start = now_ns()
        module.record(conversation, turns[index])
        app.save(conversation)
        return now_ns() - start

    return save, app.close


def bench_turns(directory: Path, parts: dict[str, ModuleType]) -> list[Benchmark]:
    total = WARMUP + TURNS
    turns = loop_turns(total)
    wire = wire_turns(turns)
    raw = RawJsonl(directory / "peers-raw.jsonl", wire)
    subjects: dict[str, Callable[[int], int]] = {"raw": raw}
    closers: list[Callable[[], None]] = [raw.close]
    for backend in ("jsonl", "sqlite"):
        subject = LoopTurns(backend, "batch", directory, turns)
        subjects[f"agentlog.{backend}"] = subject
        closers.append(subject.close)
    for part, module in parts.items():
        call, close = _peer_turns(part, module, directory, turns)
        subjects[part] = call
        closers.append(close)
    names = list(subjects)
    timings = round_robin(subjects, total, WARMUP)
    for close in closers:
        close()
    base = timings["raw"]
    ours = timings["agentlog.jsonl"]
    benchmarks: list[Benchmark] = []
    for name in names[1:]:
        values = timings[name]
        p50, p99, worst = median(values), percentile(values, 0.99), max(values)
        benchmarks.append(
            {
                "id": f"peers.turn.{name}",
                "title": f"durable loop-shaped turn (~9 KB): {TITLES[name]}",
                "statistic": (
                    f"median (p50) of {TURNS:,} turns, each timed alone, after {WARMUP} untimed; "
                    "every system and the baseline interleaved turn by turn"
                ),
                "value": round(p50 / 1e6, 4),
                "unit": "ms/turn (p50)",
                "baseline": {
                    "name": TITLES["raw"] + " (orjson.dumps the 8 wire events, write, fdatasync)",
                    "value": round(median(base) / 1e6, 4),
                    "unit": "ms/turn",
                },
                "ratio": round(p50 / median(base), 3),
                "target": None,
                "met": None,
                "figures": {
                    "p99": fig(p99 / 1e6, "ms/turn"),
                    "max": fig(worst / 1e6, "ms/turn"),
                    "baseline p99": fig(percentile(base, 0.99) / 1e6, "ms/turn"),
                    "baseline max": fig(max(base) / 1e6, "ms/turn"),
                    "p99 ratio": fig(p99 / percentile(base, 0.99), "×"),
                    "max ratio": fig(worst / max(base), "×"),
                    "p50 against agentlog JSONL batch()": fig(p50 / median(ours), "×"),
                },
                "notes": _turn_note(name),
            }
        )
    return benchmarks


def _turn_note(name: str) -> str:
    return {
        "agentlog.jsonl": "Validated, frozen, surface maintained; one write + fdatasync per turn.",
        "agentlog.sqlite": "Validated, frozen, surface maintained; one transaction per turn "
        "(WAL, synchronous=FULL).",
        "openai_agents": "The turn's four items (user message, assistant message, function "
        "call, its output) in one add_items call: one transaction of its WAL-mode SQLite file, "
        "run on a worker thread as the library does.",
        "eventsourcing": "8 domain events recorded on a Conversation aggregate, then one "
        "Application.save: one transaction of eventsourcing's SQLite recorder (WAL mode).",
    }[name]


# --- 2. the cold load ----------------------------------------------------------------------


def _build_peer(part: str, module: ModuleType, directory: Path, turns: list[Turn]) -> str:
    """Store ``turns`` in the peer's store, in batches; the cold child's target."""
    if part == "openai_agents":
        path = directory / "cold-agents.db"
        store = module.Items(path, [])
        for first in range(0, len(turns), COLD_BUILD_BATCH):
            batch = turns[first : first + COLD_BUILD_BATCH]
            store.add([item for turn in batch for item in module.turn_items(turn)])
        store.close()
        return str(path)
    path = directory / "cold-eventsourcing.db"
    app = module.open_application(path)
    conversation = module.Conversation()
    for number, turn in enumerate(turns, 1):
        module.record(conversation, turn)
        if number % COLD_BUILD_BATCH == 0:
            app.save(conversation)
    app.save(conversation)
    app.close()
    return f"{path}#{conversation.id}"


def _run_cold(mode: str, target: str) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.peers", "cold", mode, target],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result: dict[str, Any] = orjson.loads(completed.stdout)
    return result


def bench_cold(directory: Path, parts: dict[str, ModuleType]) -> list[Benchmark]:
    turns = loop_turns(COLD_TURNS, seed=29)
    store = directory / "cold-agentlog"
    build_loop_store("jsonl", store, str(directory), turns)
    (transcript,) = (item for item in store.rglob("*.jsonl") if item.is_file())
    targets = {"raw-jsonl": str(transcript), "open": f"jsonl:///{store}"}
    for part, module in parts.items():
        targets[part] = _build_peer(part, module, directory, turns)
    del turns
    gc.collect()
    results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in targets}
    modes = list(targets)
    for round_ in range(COLD_ROUNDS):
        rotation = round_ % len(modes)
        for mode in modes[rotation:] + modes[:rotation]:
            results[mode].append(_run_cold(mode, targets[mode]))

    def seconds(mode: str) -> float:
        return median([result["seconds"] for result in results[mode]])

    def grown(mode: str) -> float:
        return median([r["peak"] - r["rss_before"] for r in results[mode]])

    names = {
        "open": "agentlog JSONL open() + derive_messages()",
        "openai_agents": "OpenAI Agents SQLiteSession.get_items()",
        "eventsourcing": "eventsourcing repository.get() (replays every event)",
    }
    benchmarks: list[Benchmark] = []
    for mode in modes[1:]:
        figures: dict[str, Figure] = {
            "peak memory growth": fig(grown(mode) / 2**20, "MiB"),
            "baseline peak memory growth": fig(grown("raw-jsonl") / 2**20, "MiB"),
            "peak memory ratio": fig(grown(mode) / grown("raw-jsonl"), "×"),
            "against agentlog open()": fig(seconds(mode) / seconds("open"), "×"),
            "items loaded": fig(results[mode][0]["items"], "items"),
        }
        benchmarks.append(
            {
                "id": f"peers.cold.{'agentlog' if mode == 'open' else mode}",
                "title": f"cold load of 10^5 loop-shaped messages: {names[mode]}",
                "statistic": f"median of {COLD_ROUNDS} fresh processes, interleaved",
                "value": round(seconds(mode), 3),
                "unit": "s",
                "baseline": {
                    "name": "fresh process: read the JSONL transcript, orjson.loads per line",
                    "value": round(seconds("raw-jsonl"), 3),
                    "unit": "s",
                },
                "ratio": round(seconds(mode) / seconds("raw-jsonl"), 3),
                "target": None,
                "met": None,
                "figures": figures,
                "notes": (
                    "The collector stays on in every child. Each store holds the same "
                    f"{COLD_TURNS:,} turns, written in batches of {COLD_BUILD_BATCH} turns."
                ),
            }
        )
    return benchmarks


# --- the suite -----------------------------------------------------------------------------


def run() -> dict[str, Any]:
    parts, skipped = _parts()
    for part, why in skipped.items():
        print(f"peers: skipping {part}: {why}", file=sys.stderr)
    directory = Path(tempfile.mkdtemp(prefix="agentlog-bench-peers-"))
    try:
        benchmarks = bench_turns(directory, parts)
        gc.collect()
        benchmarks += bench_cold(directory, parts)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return {"benchmarks": benchmarks, "skipped": skipped}


def _cold_work(mode: str, target: str) -> Callable[[], tuple[int, object]]:
    if mode in ("raw-jsonl", "open"):
        from benchmarks.stores import cold_work

        return cold_work(mode, target, "bench")
    module = importlib.import_module(f"benchmarks._peer_{mode}")
    return lambda: module.cold_work(target)  # the part's contract: cold_work(target)


def _child() -> None:
    """``python -m benchmarks.peers cold MODE TARGET``: time one cold load, JSON out."""
    arguments = sys.argv[1:]
    if len(arguments) != 3 or arguments[0] != "cold":
        raise SystemExit("usage: python -m benchmarks.peers cold MODE TARGET")
    result = measure_work(_cold_work(arguments[1], arguments[2]))
    sys.stdout.buffer.write(orjson.dumps(result))


if __name__ == "__main__":
    _child()
