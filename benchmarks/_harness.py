"""Shared machinery of the benchmark suites: timing, statistics, result records, output.

Every suite returns ``{"benchmarks": [Benchmark, ...]}`` from its ``run()``; the runner adds
the environment and writes ``benchmarks/results/<suite>.json``. A ``Benchmark`` carries the
absolute figure with its unit, the baseline measured in the same run, their ratio, the target
and whether it is met (``None`` when the benchmark has no target or the measurement
cannot decide), plus any further absolute figures.
"""

from __future__ import annotations

import cProfile
import gc
import math
import os
import platform
import pstats
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

import orjson
from rich.console import Console
from rich.table import Table

__all__ = [
    "Baseline",
    "Benchmark",
    "Figure",
    "SkipSuite",
    "Target",
    "bootstrap_interval",
    "environment",
    "fig",
    "gc_collections",
    "measure_work",
    "median",
    "memory",
    "p50_ratio",
    "round_robin",
    "now_ns",
    "quiet_gc",
    "render",
    "render_markdown",
    "reset_peak",
    "to_json",
]

now_ns = time.perf_counter_ns


class SkipSuite(Exception):
    """A suite cannot run on this machine (a server or an extra is missing); says why.

    The runner prints the reason and writes no results file, so the committed results stay.
    """


class Figure(TypedDict):
    value: float
    unit: str


class Baseline(TypedDict):
    name: str
    value: float
    unit: str


class Target(TypedDict):
    text: str
    max_ratio: float | None
    """The ratio the benchmark must not exceed, or ``None`` for a qualitative target."""


class Benchmark(TypedDict):
    id: str
    title: str
    statistic: str
    """How repeats were reduced to the figure, e.g. ``min over 200 batches of 1000``."""
    value: float
    unit: str
    baseline: Baseline | None
    ratio: float | None
    target: Target | None
    met: bool | None
    figures: dict[str, Figure]
    notes: str


def fig(value: float, unit: str) -> Figure:
    return {"value": _round(value), "unit": unit}


def _round(value: float) -> float:
    """Four significant digits: more would only record noise."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, 3 - math.floor(math.log10(abs(value))))


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def p50_ratio(samples: list[Sequence[float]]) -> float:
    """The subject's median over the baseline's: ``samples`` is ``[subject, baseline]``."""
    subject, baseline = samples
    return median(subject) / median(baseline)


def round_robin(
    subjects: Mapping[str, Callable[[int], int]], total: int, warmup: int
) -> dict[str, list[int]]:
    """Call every subject with each index in ``range(total)``, the order rotated per index so
    that no subject always runs first (or after the same one); the ns each returned, by name,
    without the first ``warmup`` indexes. The collector is quieted meanwhile."""
    names = list(subjects)
    timings: dict[str, list[int]] = {name: [] for name in names}
    with quiet_gc():
        for index in range(total):
            rotation = index % len(names)
            for name in names[rotation:] + names[:rotation]:
                elapsed = subjects[name](index)
                if index >= warmup:
                    timings[name].append(elapsed)
    return timings


def bootstrap_interval(
    statistic: Callable[[list[Sequence[float]]], float],
    samples: list[Sequence[float]],
    *,
    resamples: int = 400,
    seed: int = 0,
) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of ``statistic`` over independent sample sets."""
    rng = random.Random(seed)
    values = sorted(
        statistic([rng.choices(sample, k=len(sample)) for sample in samples])
        for _ in range(resamples)
    )
    return values[int(0.025 * resamples)], values[int(0.975 * resamples) - 1]


class quiet_gc:
    """Keep earlier work out of a measurement's garbage collections.

    Collects, then freezes every surviving object (``gc.freeze()``), so that the collector,
    which stays enabled inside because users pay for it too, walks only the objects the
    measurement creates, as it would in a process holding nothing else (not the fixtures the
    benchmark keeps). ``enabled=False`` turns the collector off inside instead.
    """

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled

    def __enter__(self) -> None:
        gc.collect()
        gc.freeze()
        if not self.enabled:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        gc.enable()
        gc.unfreeze()


def memory() -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (the resident set now and its high-water mark), in bytes."""
    values: dict[str, int] = {}
    with open("/proc/self/status", "rb") as file:
        for line in file:
            name, _, rest = line.partition(b":")
            if name in (b"VmRSS", b"VmHWM"):
                values[name.decode()] = int(rest.split()[0]) * 1024
    return values


def reset_peak() -> None:
    """Reset ``VmHWM`` to the current resident set (Linux 4.0+), so the peak is the work's."""
    with open("/proc/self/clear_refs", "w") as file:
        file.write("5")


def gc_collections() -> int:
    """How many collections the cyclic garbage collector has run so far, all generations."""
    return sum(generation["collections"] for generation in gc.get_stats())


def measure_work(
    work: Callable[[], tuple[int, object]], *, collect: bool = True, profile: bool = False
) -> dict[str, Any]:
    """Time ``work`` in this (fresh) process, with the memory high-water mark it reaches.

    ``work`` returns how many items it produced and what it loaded, which is kept alive until
    the resident set has been read. ``collect=False`` disables the garbage collector first;
    ``profile`` prints a cProfile report to stderr.
    """
    gc.collect()
    if not collect:
        gc.disable()
    reset_peak()
    before = memory()
    collections = gc_collections()
    profiler = cProfile.Profile() if profile else None
    start = now_ns()
    if profiler is not None:
        profiler.enable()
    items, loaded = work()
    if profiler is not None:
        profiler.disable()
    elapsed = now_ns() - start
    after = memory()
    del loaded
    if profiler is not None:
        stats = pstats.Stats(profiler, stream=sys.stderr)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(25)
    return {
        "seconds": elapsed / 1e9,
        "items": items,
        "rss_before": before["VmRSS"],
        "peak": after["VmHWM"],
        "rss_after": after["VmRSS"],
        "collections": gc_collections() - collections,
    }


def _git(*args: str) -> str | None:
    root = Path(__file__).resolve().parent.parent
    try:
        completed = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return completed.stdout.strip()


def environment() -> dict[str, Any]:
    """Where and on what the suite ran, including the commit and whether ``src/`` had edits."""
    from agentlog.values import _snapshot

    status = _git("status", "--porcelain", "--", "src")
    return {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": _git("rev-parse", "HEAD"),
        "src_modified": None if status is None else bool(status),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "c_accelerator": _snapshot.c_snapshot is not None,
        "load_average_1min": _load(),
    }


def _load() -> float | None:
    """The 1-minute load average before the run: other processes on the cores disturb timings."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def to_json(document: dict[str, Any]) -> bytes:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


# --- output ------------------------------------------------------------------------------


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if magnitude < 100 else f"{value:.0f}"


def _verdict(met: bool | None, target: Target | None) -> str:
    if target is None:
        return "no target"
    return {True: "met", False: "MISSED", None: "undecided"}[met]


def _rows(document: dict[str, Any]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for bench in document["benchmarks"]:
        baseline = bench["baseline"]
        target = bench["target"]
        rows.append(
            (
                bench["title"],
                f"{_number(bench['value'])} {bench['unit']}",
                f"{_number(baseline['value'])} {baseline['unit']}" if baseline else "-",
                f"{_number(bench['ratio'])}×" if bench["ratio"] is not None else "-",
                target["text"] if target else "-",
                _verdict(bench["met"], target),
            )
        )
    return rows


_HEADER = ("Benchmark", "Measured", "Baseline", "Ratio", "Target", "Verdict")


def render(document: dict[str, Any], console: Console | None = None) -> None:
    """Print a suite's results: the verdict table, then every absolute figure."""
    console = console or (Console() if sys.stdout.isatty() else Console(width=150))
    env = document["environment"]
    table = Table(
        title=f"agentlog benchmarks: {document['suite']}",
        caption=(
            f"Python {env['python']} on {env['platform']}, {env['cpu_count']} CPUs, "
            f"C accelerator {'on' if env['c_accelerator'] else 'off'}"
        ),
    )
    for column in _HEADER:
        table.add_column(column, overflow="fold")
    for row in _rows(document):
        table.add_row(*row)
    console.print(table)
    details = Table(title="Figures", show_lines=False)
    for column in ("Benchmark", "Figure", "Value"):
        details.add_column(column, overflow="fold")
    for bench in document["benchmarks"]:
        for name, figure in bench["figures"].items():
            details.add_row(bench["id"], name, f"{_number(figure['value'])} {figure['unit']}")
    console.print(details)
    for bench in document["benchmarks"]:
        if bench["notes"]:
            console.print(f"[bold]{bench['id']}[/bold] ({bench['statistic']}): {bench['notes']}")


def render_markdown(document: dict[str, Any]) -> str:
    """The verdict table of a results document as Markdown (for ``docs/benchmarks.md``)."""
    lines = [
        "| " + " | ".join(_HEADER) + " |",
        "|" + "---|" * len(_HEADER),
    ]
    lines += [
        "| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
        for row in _rows(document)
    ]
    return "\n".join(lines) + "\n"
