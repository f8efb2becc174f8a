"""The compaction suite: what compaction writes and what it saves (issue 6; DESIGN.md targets).

A 10^4-turn agent session is built in 20 cycles of 500 turns (about 2,000 surface nodes and
360k estimated tokens each, more than a 200k-token context window holds) in a store; at the
end of every cycle, between turns, ``agentlog.compact(session, ExtractiveSummarizer())``
replaces everything on the surface but the newest node with a summary checkpoint.
On JSONL and on SQLite:

1. Bytes each compaction adds to the store against the JSON of the four events it appended
   (met when never more than that plus one 4 KiB page, as the stores suite's replace), against
   its summary and cited seqs, and against the JSON of the history it shadowed.
2. The time of one compaction, against deriving and serializing the request it shrinks.
3. ``derive_messages()`` after one append, and a cold ``store.open()`` + ``derive_messages()``
   in a fresh process, after k = 1, 5, 10 and 20 compactions, against the same turns never
   compacted (k = 0).

Run it with ``python -m benchmarks compaction``; docs/benchmarks.md explains every figure. The
cold opens run the stores suite's children, ``python -m benchmarks.stores cold open URL ID``.
"""

from __future__ import annotations

import asyncio
import gc
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from agentlog import (
    IMAGE_OFFLOAD,
    CompactionResult,
    ExtractiveSummarizer,
    Session,
    compact,
    open_store,
)
from agentlog import messages as m
from agentlog.plugins import Summarizer, Summary, SummaryRequest
from agentlog.plugins.compaction import DEFAULT_METER
from benchmarks._harness import Benchmark, Figure, fig, median, now_ns, quiet_gc
from benchmarks.core import prose
from benchmarks.stores import checkpoint, disk_bytes

__all__ = ["run"]

ROOT: Final = Path(__file__).resolve().parent.parent
SESSION: Final = "bench"  # the id the stores suite's cold child opens
BACKENDS: Final = ("jsonl", "sqlite")
TITLES: Final = {"jsonl": "JSONL", "sqlite": "SQLite"}
SEED: Final = 6

TURNS: Final = 10_000
CYCLES: Final = 20
CYCLE_TURNS: Final = TURNS // CYCLES
CHECKPOINTS: Final = (1, 5, 10, 20)
"""After how many compactions derive latency and cold opens are measured."""
PAGE: Final = 4096

DERIVE_WARMUP: Final = 10
DERIVE_ROUNDS: Final = 200
COLD_ROUNDS: Final = 7

PROVIDER, MODEL = "anthropic", "claude-sonnet-4"
TOOLS: Final = (
    {
        "name": "bash",
        "description": "Run a shell command and return its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
            "required": ["command"],
        },
    },
    {
        "name": "read_file",
        "description": "Read a UTF-8 text file with line numbers.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
)

Turn = list[tuple[str, dict[str, Any], str | None]]

# --- the agent loop -----------------------------------------------------------------------


def agent_turn(rng: random.Random, turn: int) -> Turn:
    """One turn as an agent loop logs it: 11 events, 4 surface nodes, ~2.9 KB of JSON on average.

    A user prompt (150–600 characters), a tool step (a short remark with one ``bash`` or
    ``read_file`` call; its result of 300–3,000 characters, an error one turn in 16), and an
    answer step (200–900 characters). Turn 1's first step logs the request header.
    """
    call_id = f"call-{turn:06d}"
    path = f"src/app/module_{rng.randrange(60):02d}.py"
    if rng.random() < 0.5:
        name, arguments = "read_file", orjson.dumps({"path": path}).decode()
    else:
        command = f"pytest -q tests/test_module_{rng.randrange(60):02d}.py"
        name, arguments = "bash", orjson.dumps({"command": command, "timeout": 60}).decode()
    usage = {"inputTokens": 20_000 + 40 * (turn % 500), "outputTokens": 180}
    head: Turn = [
        ("turn/start", {"turn": turn}, None),
        ("user/message", dict(m.user(prose(rng, rng.randint(150, 600)))), "append"),
        ("step/start", {"turn": turn, "step": 1}, None),
    ]
    if turn == 1:
        header = {"config": {"provider": PROVIDER, "model": MODEL}, "tools": list(TOOLS)}
        head.append(("request/header", {"header": header, "reason": "initial"}, None))
    return [
        *head,
        (
            "assistant/message",
            m.assistant(
                [m.text(prose(rng, rng.randint(60, 200))), m.tool_call(call_id, name, arguments)],
                provider=PROVIDER,
                model=MODEL,
                turn=turn,
                step=1,
                usage=usage,
            ),
            "append",
        ),
        (
            "tool/call",
            {"turn": turn, "step": 1, "callId": call_id, "name": name, "arguments": arguments},
            None,
        ),
        (
            "tool/result",
            m.tool_result(
                call_id,
                prose(rng, rng.randint(300, 3000)),
                turn=turn,
                step=1,
                is_error=True if rng.randrange(16) == 0 else None,
            ),
            "append",
        ),
        ("step/end", {"turn": turn, "step": 1}, None),
        ("step/start", {"turn": turn, "step": 2}, None),
        (
            "assistant/message",
            m.assistant(
                [m.text(prose(rng, rng.randint(200, 900)))],
                provider=PROVIDER,
                model=MODEL,
                turn=turn,
                step=2,
                usage=usage,
            ),
            "append",
        ),
        ("step/end", {"turn": turn, "step": 2}, None),
        ("turn/end", {"turn": turn, "reason": {"kind": "completed"}}, None),
    ]


def _append_turn(session: Session, turn: Turn) -> None:
    for event_type, data, surface_op in turn:
        session.append(event_type, data, surface_op=surface_op)


def _url(backend: str, path: Path) -> str:
    return f"{backend}:///{path}"  # an absolute path: four slashes


def _store_path(directory: Path, backend: str, name: str) -> Path:
    return directory / (f"{name}.db" if backend == "sqlite" else name)


def _settled_bytes(backend: str, path: Path) -> int:
    """Bytes of the store's files; SQLite's WAL folded in first, so sizes are whole pages."""
    if backend == "sqlite":
        checkpoint(path)
    return disk_bytes(path)


def _snapshot(backend: str, path: Path, target: Path) -> None:
    """A copy of the store as it is now (its writer flushed and idle)."""
    if backend == "sqlite":
        source, copy = sqlite3.connect(path), sqlite3.connect(target)
        try:
            source.backup(copy)
        finally:
            source.close()
            copy.close()
    else:
        shutil.copytree(path, target)


def _line(event: Any) -> int:
    """Bytes of one event's JSON line (its wire form, citations as a plain list)."""
    return len(orjson.dumps(event.to_wire())) + 1


def _json(value: Any) -> int:
    return len(orjson.dumps(value))


# --- building: the compacted session and its never-compacted twin -------------------------


class _TimedSummarizer:
    """The extractive summarizer, timed: the summarizer's own share of a compaction."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.elapsed_ns = 0
        self.messages = 0

    async def __call__(self, request: SummaryRequest) -> Summary:
        start = now_ns()
        summary = await self.inner(request)
        self.elapsed_ns = now_ns() - start
        self.messages = len(request.messages)
        return summary


async def _timed_compact(
    session: Session, summarizer: Summarizer
) -> tuple[CompactionResult | None, int]:
    start = now_ns()
    result = await compact(session, summarizer)
    return result, now_ns() - start


@dataclass
class Cycle:
    """What one compaction wrote and cost."""

    cycle: int
    turns: int
    events_before: int
    store_before: int
    written: int
    """Bytes the store grew by."""
    own_json: int
    """JSON lines of the four appended events."""
    event_json: dict[str, int]
    summary_json: int
    """The summary text blocks, as JSON."""
    cited_json: int
    """The replacement's ``sourceEventSeqs``, as a JSON list."""
    shadowed_nodes: int
    shadowed_nodes_json: int
    shadowed_range_json: int
    """JSON lines of every event from the first shadowed seq to the last."""
    shadowed_tokens: int
    compact_ns: int
    summarizer_ns: int
    request_ns: int
    """derive_messages() + orjson.dumps of the surface the compaction replaces."""
    meter_ns: int
    derive_before_ns: int
    derive_after_ns: int
    messages_after: int


@dataclass
class Built:
    """One backend's session over the 20 cycles: compacted after each, or never (k = 0)."""

    cycles: list[Cycle] = field(default_factory=list)
    """What each compaction wrote and cost (empty when never compacted)."""
    snapshots: dict[int, str] = field(default_factory=dict)
    """k → URL of the store copied right after the k-th cycle."""
    prefix: dict[int, int] = field(default_factory=dict)
    """k → how many events the log held right after the k-th cycle."""
    events: Sequence[Any] = ()


def build(backend: str, directory: Path, name: str, *, compacting: bool) -> Built:
    """20 cycles of 500 turns (write-behind, flushed), each ended by one measured compaction
    when ``compacting``; the store is copied after the cycles in ``CHECKPOINTS``."""
    built = Built()
    path = _store_path(directory, backend, f"{name}-{backend}")
    store = open_store(_url(backend, path), write_behind=True, batch_delay=3600)
    session = store.create(SESSION, cwd=str(directory))
    rng = random.Random(SEED)
    turn = 0
    for cycle in range(1, CYCLES + 1):
        for _ in range(CYCLE_TURNS):
            turn += 1
            _append_turn(session, agent_turn(rng, turn))
            if compacting:
                session.derive_messages()  # an agent loop derives its request every step
        session.flush()
        if compacting:
            built.cycles.append(_compact_once(backend, path, session, cycle, turn))
        if cycle in CHECKPOINTS:
            built.prefix[cycle] = session.seq
            target = _store_path(directory, backend, f"{name}-{backend}-k{cycle}")
            _snapshot(backend, path, target)
            built.snapshots[cycle] = _url(backend, target)
    built.events = session.events
    session.close()
    store.close()
    return built


def _compact_once(backend: str, path: Path, session: Session, cycle: int, turns: int) -> Cycle:
    with quiet_gc():
        start = now_ns()
        derived = session.derive_messages()
        derive_before = now_ns() - start
        start = now_ns()
        orjson.dumps(derived)
        request = derive_before + now_ns() - start
        del derived
        start = now_ns()
        DEFAULT_METER.measure(session)  # the catch-up an agent loop's per-step check does
        meter = now_ns() - start
    before = _settled_bytes(backend, path)
    first = session.seq
    summarizer = _TimedSummarizer(ExtractiveSummarizer())
    with quiet_gc():
        result, elapsed = asyncio.run(_timed_compact(session, summarizer))
        start = now_ns()
        messages = session.derive_messages()
        derive_after = now_ns() - start
    if result is None:
        raise RuntimeError(f"compaction {cycle} found nothing to compact")
    written = _settled_bytes(backend, path) - before
    appended = session.events[first:]
    if [event.type for event in appended] != [
        "compaction/start",
        "compaction/summary",
        "user/message",
        "compaction/end",
    ]:
        raise RuntimeError(f"compaction {cycle} appended {[e.type for e in appended]}")
    summary_event, replacement = appended[1], appended[2]
    shadowed = result.shadowed_seqs
    events = session.events
    return Cycle(
        cycle=cycle,
        turns=turns,
        events_before=first,
        store_before=before,
        written=written,
        own_json=sum(_line(event) for event in appended),
        event_json={event.type: _line(event) for event in appended},
        summary_json=_json(summary_event.data["summary"]),
        cited_json=_json(replacement.to_wire()["sourceEventSeqs"]),
        shadowed_nodes=len(shadowed),
        shadowed_nodes_json=sum(_line(events[seq]) for seq in shadowed),
        shadowed_range_json=sum(_line(events[seq]) for seq in range(shadowed[0], shadowed[-1] + 1)),
        shadowed_tokens=result.shadowed_token_count,
        compact_ns=elapsed,
        summarizer_ns=summarizer.elapsed_ns,
        request_ns=request,
        meter_ns=meter,
        derive_before_ns=derive_before,
        derive_after_ns=derive_after,
        messages_after=len(messages),
    )


# --- 1. bytes written per compaction ------------------------------------------------------


def bench_bytes(backend: str, cycles: list[Cycle]) -> list[Benchmark]:
    count = len(cycles)
    written = [c.written for c in cycles]
    own = [c.own_json for c in cycles]
    excess = [c.written - c.own_json for c in cycles]
    cited = [c.summary_json + c.cited_json for c in cycles]
    history = [c.shadowed_range_json for c in cycles]
    by_summary = [w / s for w, s in zip(written, cited, strict=True)]
    by_history = [w / h for w, h in zip(written, history, strict=True)]
    met = all(c.written <= c.own_json + PAGE for c in cycles)
    worst = max(cycles, key=lambda c: c.written / c.own_json)
    mean_written = sum(written) / count
    sqlite_note = (
        " SQLite stores payloads of 4 KiB or more zstd-compressed (the summary and the "
        "checkpoint here) and the citation list as JSON text; its size is whole 4 KiB pages, "
        "measured after a WAL checkpoint."
        if backend == "sqlite"
        else " JSONL writes each event's line as its wire JSON (runs of 3+ consecutive cited "
        "seqs as [start, end] pairs: none here, the shadowed nodes are not consecutive)."
    )
    common: dict[str, Figure] = {
        "bytes written per compaction, median": fig(median(written), "bytes"),
        "bytes written per compaction, min": fig(min(written), "bytes"),
        "bytes written per compaction, max": fig(max(written), "bytes"),
        "shadowed nodes per compaction, median": fig(
            median([c.shadowed_nodes for c in cycles]), "nodes"
        ),
        "shadowed tokens per compaction, median": fig(
            median([c.shadowed_tokens for c in cycles]), "tokens"
        ),
    }
    last = cycles[-1]
    tokens = int(round(median([c.shadowed_tokens for c in cycles]), -3))
    return [
        {
            "id": f"bytes.{backend}",
            "title": f"bytes a compaction writes, {CYCLES} compactions of a 10^4-turn session, "
            f"{TITLES[backend]}",
            "statistic": f"mean over {count} compactions, store size after each against before",
            "value": round(mean_written),
            "unit": "bytes/compaction",
            "baseline": {
                "name": "JSON of the 4 events it appended (start, summary, checkpoint, end)",
                "value": round(sum(own) / count),
                "unit": "bytes",
            },
            "ratio": round(sum(written) / sum(own), 4),
            "target": {
                "text": "≤ its own events' JSON + one 4 KiB page, every compaction",
                "max_ratio": None,
            },
            "met": met,
            "figures": {
                **common,
                "worst compaction: written / own JSON": fig(worst.written / worst.own_json, "×"),
                "worst compaction: written − own JSON": fig(max(excess), "bytes"),
                "compactions within own JSON + 4 KiB": fig(
                    sum(c.written <= c.own_json + PAGE for c in cycles), "compactions"
                ),
                "last compaction: compaction/summary JSON": fig(
                    last.event_json["compaction/summary"], "bytes"
                ),
                "last compaction: checkpoint user/message JSON": fig(
                    last.event_json["user/message"], "bytes"
                ),
                "last compaction: compaction/start + compaction/end JSON": fig(
                    last.event_json["compaction/start"] + last.event_json["compaction/end"],
                    "bytes",
                ),
            },
            "notes": (
                f"Each of the {CYCLES} cycles appends {CYCLE_TURNS} turns (write-behind, one "
                "flush), then compact() replaces every surface node but the newest (about 2,000 "
                f"nodes and {tokens:,} estimated tokens, the previous checkpoint included) and "
                "flushes "
                "before it returns. Met when no compaction grows the store by more than the JSON "
                "lines of the events it appended plus one 4 KiB page." + sqlite_note
            ),
        },
        {
            "id": f"bytes_vs_summary.{backend}",
            "title": f"bytes a compaction writes against its summary + cited seqs, "
            f"{TITLES[backend]}",
            "statistic": f"mean over {count} compactions",
            "value": round(mean_written),
            "unit": "bytes/compaction",
            "baseline": {
                "name": "JSON of the summary text blocks + JSON of the cited seq list",
                "value": round(sum(cited) / count),
                "unit": "bytes",
            },
            "ratio": round(sum(written) / sum(cited), 3),
            "target": None,
            "met": None,
            "figures": {
                "ratio, min over compactions": fig(min(by_summary), "×"),
                "ratio, max over compactions": fig(max(by_summary), "×"),
                "summary JSON, median": fig(median([c.summary_json for c in cycles]), "bytes"),
                "cited seq list JSON, median": fig(median([c.cited_json for c in cycles]), "bytes"),
            },
            "notes": (
                "O(summary + cited seqs) shows as a ratio that stays put from the first "
                "compaction to the last while the log grows 20-fold. The summary text is "
                "stored three times (compaction/summary's summary and rawOutput, and the "
                "checkpoint's content, framed) and the seqs twice (shadowedSeqs and the "
                "checkpoint's sourceEventSeqs), so the ratio is about 2–3 by construction."
            ),
        },
        {
            "id": f"bytes_vs_history.{backend}",
            "title": f"bytes a compaction writes against the history it shadows, {TITLES[backend]}",
            "statistic": f"mean over {count} compactions",
            "value": round(mean_written),
            "unit": "bytes/compaction",
            "baseline": {
                "name": "JSON of the shadowed history (every event from its first seq to its last)",
                "value": round(sum(history) / count),
                "unit": "bytes",
            },
            "ratio": round(sum(written) / sum(history), 4),
            "target": None,
            "met": None,
            "figures": {
                "ratio, max over compactions": fig(max(by_history), "×"),
                "JSON of the shadowed nodes alone, median": fig(
                    median([c.shadowed_nodes_json for c in cycles]), "bytes"
                ),
                "store size before the last compaction": fig(cycles[-1].store_before, "bytes"),
                "last compaction: written / store size before it": fig(
                    cycles[-1].written / cycles[-1].store_before, "×"
                ),
            },
            "notes": (
                "Never a copy of history: far below 1×. The shadowed range includes the "
                "previous compaction's events and every log-only event between the nodes."
            ),
        },
    ]


# --- 2. the time of one compaction --------------------------------------------------------


def bench_time(backend: str, cycles: list[Cycle]) -> Benchmark:
    compact_ms = [c.compact_ns / 1e6 for c in cycles]
    request_ms = [c.request_ns / 1e6 for c in cycles]
    summarizer_ms = [c.summarizer_ns / 1e6 for c in cycles]
    engine_ms = [(c.compact_ns - c.summarizer_ns) / 1e6 for c in cycles]
    value, base = median(compact_ms), median(request_ms)
    return {
        "id": f"compact_time.{backend}",
        "title": f"one compact() of ~2,000 nodes "
        f"(~{median([c.shadowed_tokens for c in cycles]) / 1000:.0f}k tokens), "
        f"durable on return, {TITLES[backend]}",
        "statistic": f"median of {len(cycles)} compactions, each timed alone (collector frozen)",
        "value": round(value, 3),
        "unit": "ms",
        "baseline": {
            "name": "derive_messages() + orjson.dumps of the surface it replaces (the next "
            "request, serialized)",
            "value": round(base, 3),
            "unit": "ms",
        },
        "ratio": round(value / base, 2),
        "target": None,
        "met": None,
        "figures": {
            "compact(), min": fig(min(compact_ms), "ms"),
            "compact(), max": fig(max(compact_ms), "ms"),
            "ExtractiveSummarizer's share, median": fig(median(summarizer_ms), "ms"),
            "compact() without the summarizer, median": fig(median(engine_ms), "ms"),
            "messages in the summary request, median": fig(
                median([c.shadowed_nodes + 1 for c in cycles]), "messages"
            ),
            "TokenMeter catch-up of the cycle's 5,500 events (untimed above)": fig(
                median([c.meter_ns / 1e6 for c in cycles]), "ms"
            ),
            "derive_messages() before the compaction (~2,000 messages)": fig(
                median([c.derive_before_ns / 1e3 for c in cycles]), "µs"
            ),
            "first derive_messages() after the compaction": fig(
                median([c.derive_after_ns / 1e3 for c in cycles]), "µs"
            ),
        },
        "notes": (
            "From the call to compact() to its return: measuring the surface, selecting the span, "
            "the prelude (span checks, compaction/start), pricing the span, deriving its "
            "messages into the summary request, ExtractiveSummarizer (deterministic, offline: a "
            "model call would take seconds instead), framing, the stability check, the commit "
            "(3 appends) and the flush that makes it durable (write-behind: one batch of 4 "
            "events). The shared TokenMeter was brought up to date just before, untimed, as an "
            "agent loop that checks pressure before each step keeps it. No target: the "
            "baseline is what the agent pays per request anyway for the surface compaction "
            "removes."
        ),
    }


# --- 3. derive latency after k compactions ------------------------------------------------


def _probe(session: Session, rounds: int, label: str, out: list[int] | None) -> int:
    """``rounds`` of: append one user message, time ``derive_messages()``; the last length."""
    length = 0
    for index in range(rounds):
        question = m.user("And what about the other file?", id=f"{label}-{index}")
        session.append("user/message", question, surface_op="append")
        start = now_ns()
        result = session.derive_messages()
        elapsed = now_ns() - start
        if out is not None:
            out.append(elapsed)
        length = len(result)
        del result
    return length


def bench_derive(built: Built, baseline: Built) -> list[Benchmark]:
    """Sessions replayed from the log prefixes; compacted and twin rounds interleaved."""
    benchmarks: list[Benchmark] = []
    results: dict[int, dict[str, Any]] = {}
    for k in CHECKPOINTS:
        compacted = Session.from_events(
            f"compacted-{k}", built.events[: built.prefix[k]], projections=(IMAGE_OFFLOAD,)
        )
        twin = Session.from_events(
            f"twin-{k}", baseline.events[: baseline.prefix[k]], projections=(IMAGE_OFFLOAD,)
        )
        samples: dict[str, list[int]] = {"compacted": [], "twin": []}
        lengths: dict[str, int] = {}
        with quiet_gc():
            for name, session in (("compacted", compacted), ("twin", twin)):
                _probe(session, DERIVE_WARMUP, f"warm-{name}", None)
            for block in range(DERIVE_ROUNDS // 10):
                order = (("compacted", compacted), ("twin", twin))
                for name, session in order if block % 2 == 0 else order[::-1]:
                    lengths[name] = _probe(session, 10, f"{name}-{block}", samples[name])
        results[k] = {
            "samples": samples,
            "lengths": lengths,
            "surface": {"compacted": len(compacted.surface.nodes), "twin": len(twin.surface.nodes)},
            "events": {"compacted": built.prefix[k], "twin": baseline.prefix[k]},
        }
        del compacted, twin
        gc.collect()
    first = median(results[CHECKPOINTS[0]]["samples"]["compacted"])
    for k, result in results.items():
        value = median(result["samples"]["compacted"])
        base = median(result["samples"]["twin"])
        benchmarks.append(
            {
                "id": f"derive.k_{k}",
                "title": f"derive_messages() after one append, after {k} compaction"
                f"{'s' if k > 1 else ''} ({k * CYCLE_TURNS:,} turns)",
                "statistic": f"median of {DERIVE_ROUNDS} rounds each, after {DERIVE_WARMUP} "
                "untimed; compacted and never-compacted sessions alternate in blocks of 10",
                "value": round(value / 1e3, 3),
                "unit": "µs",
                "baseline": {
                    "name": "k = 0: the same turns never compacted",
                    "value": round(base / 1e3, 3),
                    "unit": "µs",
                },
                "ratio": round(value / base, 4),
                "target": None,
                "met": None,
                "figures": {
                    "messages derived (last round)": fig(
                        result["lengths"]["compacted"], "messages"
                    ),
                    "baseline messages derived (last round)": fig(
                        result["lengths"]["twin"], "messages"
                    ),
                    "events in the log": fig(result["events"]["compacted"], "events"),
                    "baseline events in the log": fig(result["events"]["twin"], "events"),
                    f"relative to after {CHECKPOINTS[0]} compaction": fig(value / first, "×"),
                },
                "notes": (
                    "In memory (Session.from_events of the stored log's prefix, backend-"
                    "independent). Each round appends one user message then times "
                    "derive_messages(), whose returned list is a copy as long as the surface: "
                    "after a compaction the surface is the checkpoint, the newest node and the "
                    "messages appended since."
                ),
            }
        )
    return benchmarks


# --- 4. cold open + derive after k compactions --------------------------------------------


def _settle(url: str) -> None:
    """Open once, untimed: the first open of a copied live log writes its end-seed marker."""
    with open_store(url) as store:
        store.open(SESSION).close()


def _cold(url: str) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.stores", "cold", "open", url, SESSION],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result: dict[str, Any] = orjson.loads(completed.stdout)
    return result


def _path_of(url: str) -> Path:
    return Path(url.split(":///", 1)[1])


def bench_cold(backend: str, built: Built, baseline: Built) -> list[Benchmark]:
    runs: list[tuple[int, str, str]] = []
    for k in CHECKPOINTS:
        runs += [(k, "compacted", built.snapshots[k]), (k, "twin", baseline.snapshots[k])]
    for _, _, url in runs:
        _settle(url)
    sizes = {(k, kind): _settled_bytes(backend, _path_of(url)) for k, kind, url in runs}
    results: dict[tuple[int, str], list[dict[str, Any]]] = {(k, kind): [] for k, kind, _ in runs}
    for round_ in range(COLD_ROUNDS):
        rotation = round_ * 3 % len(runs)
        for k, kind, url in runs[rotation:] + runs[:rotation]:
            results[k, kind].append(_cold(url))
    benchmarks: list[Benchmark] = []
    for k in CHECKPOINTS:
        mine, twin = results[k, "compacted"], results[k, "twin"]
        expected = {"compacted": 2, "twin": 4 * k * CYCLE_TURNS}
        for kind, got in (("compacted", mine), ("twin", twin)):
            if any(r["items"] != expected[kind] for r in got):
                raise RuntimeError(
                    f"cold open of the {kind} log at k={k} derived {got[0]['items']} messages, "
                    f"expected {expected[kind]}"
                )
        value = median([r["seconds"] for r in mine])
        base = median([r["seconds"] for r in twin])
        peak = median([r["peak"] - r["rss_before"] for r in mine])
        base_peak = median([r["peak"] - r["rss_before"] for r in twin])
        benchmarks.append(
            {
                "id": f"cold.k_{k}.{backend}",
                "title": f"cold open() + derive_messages() after {k} compaction"
                f"{'s' if k > 1 else ''} ({k * CYCLE_TURNS:,} turns), {TITLES[backend]}",
                "statistic": f"median of {COLD_ROUNDS} fresh processes, interleaved with the "
                "baseline's",
                "value": round(value, 4),
                "unit": "s",
                "baseline": {
                    "name": "k = 0: the same turns never compacted, opened the same way",
                    "value": round(base, 4),
                    "unit": "s",
                },
                "ratio": round(value / base, 3),
                "target": None,
                "met": None,
                "figures": {
                    "messages derived": fig(mine[0]["items"], "messages"),
                    "baseline messages derived": fig(twin[0]["items"], "messages"),
                    "store size": fig(sizes[k, "compacted"], "bytes"),
                    "baseline store size": fig(sizes[k, "twin"], "bytes"),
                    "fastest round": fig(min(r["seconds"] for r in mine), "s"),
                    "baseline fastest round": fig(min(r["seconds"] for r in twin), "s"),
                    "slowest round": fig(max(r["seconds"] for r in mine), "s"),
                    "baseline slowest round": fig(max(r["seconds"] for r in twin), "s"),
                    "peak memory growth": fig(peak / 2**20, "MiB"),
                    "baseline peak memory growth": fig(base_peak / 2**20, "MiB"),
                },
                "notes": (
                    "A fresh child (python -m benchmarks.stores cold open) times open_store(), "
                    "store.open() and derive_messages() of a copy of the store taken right after "
                    "the k-th compaction (or at the same turn, never compacted), opened once "
                    "untimed before. Compaction deletes nothing: the compacted log holds every "
                    "event of the baseline plus 4 per compaction, and reads them all."
                ),
            }
        )
    return benchmarks


# --- the suite ----------------------------------------------------------------------------


def _cycle_record(cycle: Cycle) -> dict[str, Any]:
    return {
        "cycle": cycle.cycle,
        "turns": cycle.turns,
        "events_before": cycle.events_before,
        "store_before": cycle.store_before,
        "bytes_written": cycle.written,
        "own_json": cycle.own_json,
        "event_json": cycle.event_json,
        "summary_json": cycle.summary_json,
        "cited_json": cycle.cited_json,
        "shadowed_nodes": cycle.shadowed_nodes,
        "shadowed_nodes_json": cycle.shadowed_nodes_json,
        "shadowed_range_json": cycle.shadowed_range_json,
        "shadowed_tokens": cycle.shadowed_tokens,
        "compact_ms": round(cycle.compact_ns / 1e6, 3),
        "summarizer_ms": round(cycle.summarizer_ns / 1e6, 3),
        "request_ms": round(cycle.request_ns / 1e6, 3),
        "meter_catch_up_ms": round(cycle.meter_ns / 1e6, 3),
        "derive_before_us": round(cycle.derive_before_ns / 1e3, 1),
        "derive_after_us": round(cycle.derive_after_ns / 1e3, 1),
        "messages_after": cycle.messages_after,
    }


def run() -> dict[str, Any]:
    directory = Path(tempfile.mkdtemp(prefix="agentlog-bench-compaction-"))
    benchmarks: list[Benchmark] = []
    cycles: dict[str, list[dict[str, Any]]] = {}
    derive: list[Benchmark] = []
    try:
        for backend in BACKENDS:
            built = build(backend, directory, "compacted", compacting=True)
            twin = build(backend, directory, "twin", compacting=False)
            benchmarks += bench_bytes(backend, built.cycles)
            benchmarks.append(bench_time(backend, built.cycles))
            cycles[backend] = [_cycle_record(cycle) for cycle in built.cycles]
            if not derive:
                derive = bench_derive(built, twin)
            built.events = twin.events = ()
            gc.collect()
            benchmarks += bench_cold(backend, built, twin)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return {"benchmarks": [*benchmarks, *derive], "cycles": cycles}
