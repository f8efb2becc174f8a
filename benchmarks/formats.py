"""The formats suite: reading and migrating dsh logs of format 0 (issue 5).

A deterministic agent loop of ~10^5 logical format-0 events (streamed chunks packed into rows,
as format-0 writers stored them) is written as a real ``session.jsonl``, then measured in fresh
child processes, each against reading the same file and ``orjson.loads`` per line:

1. ``load_file`` + ``derive_messages()`` of the format-0 file (read, expand, migrate, validate,
   build);
2. ``migrate()`` alone, on an artifact parsed (untimed) in the same child;
3. migrate-on-continue: ``store.open()`` of the format-0 log, which writes ``session.v4.jsonl``;
4. ``load_file`` + ``derive_messages()`` of that format-4 file: the cost once migrated.

Run it with ``python -m benchmarks formats``; docs/benchmarks.md explains every figure. The
children are ``python -m benchmarks.formats child MODE PATH``; add ``--profile`` to one by hand
to print where its time goes.
"""

from __future__ import annotations

import gc
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from agentlog import load_file, open_store
from agentlog.formats import (
    CHAIN,
    ROW_TYPES,
    Artifact,
    decode_storage_record,
    migrate,
    pack_chunk_runs,
)
from agentlog.stores.jsonl.layout import session_dir
from benchmarks._harness import (
    Benchmark,
    Figure,
    fig,
    measure_work,
    median,
    now_ns,
)
from benchmarks.core import prose

__all__ = ["run"]

ROOT: Final = Path(__file__).resolve().parent.parent
SESSION: Final = "legacy-bench"
CWD: Final = "/work/legacy-project"
EVENTS: Final = 100_000
TIME0: Final = 1_700_000_000_000
PROVIDER: Final = "anthropic"
MODEL: Final = "claude-sonnet-4"
ROUNDS: Final = 7
RESUME_EVERY: Final = 10
"""Turns between restarts of the agent loop (each logs a ``resume`` request header)."""
PROMPT_EVERY: Final = 40
"""Turns between system prompt changes (each logs a ``change`` request header)."""
TOOLS: Final = ("bash", "read_file", "write_file", "grep")

# --- the workload: a format-0 agent loop -------------------------------------------------


@dataclass(slots=True)
class LegacyLog:
    """A format-0 log as its writer held it: the header and the logical (unpacked) events."""

    header: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    roles: dict[str, int] = field(default_factory=dict)
    """How many messages of each role ``derive_messages()`` of the migrated log must return."""
    time: int = TIME0

    def add(self, event_type: str, data: dict[str, Any], *, gap: int, **envelope: Any) -> int:
        """Append one event ``gap`` ms after the previous one; returns its seq."""
        self.time += gap
        seq = len(self.events)
        self.events.append(
            {"type": event_type, "seq": seq, "time": self.time, "data": data, **envelope}
        )
        return seq

    def expect(self, role: str) -> None:
        """Count one message ``derive_messages()`` must return."""
        self.roles[role] = self.roles.get(role, 0) + 1


def _tokens(rng: random.Random, text: str) -> list[str]:
    """``text`` cut into the 1–7 character pieces a model streams it in."""
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = start + rng.randint(1, 7)
        pieces.append(text[start:end])
        start = end
    return pieces


def _system_prompt(revision: int) -> str:
    """A ~4 KB system prompt that changes every ``PROMPT_EVERY`` turns (a new date line)."""
    return prose(random.Random(7), 4000) + f" The current date is day {revision}."


def _tool_schemas() -> list[dict[str, Any]]:
    rng = random.Random(8)
    return [
        {
            "name": name,
            "description": prose(rng, 200),
            "parameters": {
                "type": "object",
                "properties": {"input": {"type": "string", "description": prose(rng, 60)}},
                "required": ["input"],
            },
        }
        for name in TOOLS
    ]


def _attempt(
    log: LegacyLog, rng: random.Random, turn: int, step: int, *, final: bool
) -> tuple[list[int], list[dict[str, Any]], tuple[str, str, str] | None]:
    """One streamed model attempt: its chunk seqs, the message content, the tool call if any."""
    seqs: list[int] = []
    content: list[dict[str, Any]] = []

    def chunk(payload: dict[str, Any], gap: int) -> None:
        seqs.append(
            log.add("assistant/chunk", {"turn": turn, "step": step, "chunk": payload}, gap=gap)
        )

    def block(index: int, block_type: str, text: str) -> None:
        delta = "text-delta" if block_type == "text" else "reasoning-delta"
        chunk({"type": "block-start", "index": index, "blockType": block_type}, rng.randint(1, 5))
        for piece in _tokens(rng, text):
            chunk({"type": delta, "index": index, "text": piece}, rng.randint(0, 40))
        whole = {"type": block_type, "text": text}
        chunk({"type": "block-end", "index": index, "block": whole}, rng.randint(0, 5))
        content.append(whole)

    block(0, "reasoning", prose(rng, rng.randint(80, 600)))
    if final or rng.random() < 0.5:
        block(1, "text", prose(rng, rng.randint(300, 1500) if final else rng.randint(40, 300)))
    call: tuple[str, str, str] | None = None
    if not final:
        index = len(content)
        call_id = f"toolu_{turn:05d}_{step:02d}"
        name = rng.choice(TOOLS)
        arguments = orjson.dumps({"input": prose(rng, rng.randint(20, 160))}).decode()
        chunk({"type": "block-start", "index": index, "blockType": "tool-call"}, 2)
        for piece in _tokens(rng, arguments):
            delta = {"type": "tool-call-delta", "index": index, "id": call_id, "name": name}
            chunk({**delta, "argumentsDelta": piece}, rng.randint(0, 30))
        whole = {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}
        chunk({"type": "block-end", "index": index, "block": whole}, 1)
        content.append(whole)
        call = (call_id, name, arguments)
    usage = {
        "inputTokens": 6000 + (400 * turn) % 90_000,
        "outputTokens": 40 + len(seqs),
        "cacheReadTokens": 5000,
        "reasoningTokens": 30,
    }
    chunk({"type": "usage", "usage": usage}, 1)
    reason = "stop" if final else "tool-calls"
    chunk({"type": "finish", "reason": {"kind": reason}}, 1)
    return seqs, content, call


def _turn(log: LegacyLog, rng: random.Random, turn: int, tools: list[dict[str, Any]]) -> None:
    """One turn: a legacy user message, 1–5 steps (each but the last calling a tool)."""
    log.add(
        "turn/start", {"turn": turn, "trigger": {"kind": "message"}}, gap=rng.randint(5_000, 90_000)
    )
    # A pre-identity user message (no id, no role): format 0 → 1 names it.
    user = {
        "content": [{"type": "text", "text": prose(rng, rng.randint(40, 600))}],
        "source": {"kind": "user"},
    }
    log.add("user/message", user, gap=3, surfaceOp="append")
    log.expect("user")
    steps = 1 + min(rng.randint(0, 4), rng.randint(0, 4))
    for step in range(1, steps + 1):
        log.add("step/start", {"turn": turn, "step": step}, gap=1)
        if step == 1 and (turn - 1) % RESUME_EVERY == 0:
            # The loop logs a header when it starts (``initial``, or ``resume`` after a restart)
            # and when the header changes (spec/core.md §7.4), not for every request.
            header = {
                "config": {"provider": PROVIDER, "model": MODEL, "maxTokens": 32_000},
                "system": _system_prompt((turn - 1) // PROMPT_EVERY),
                "tools": tools,
            }
            reason = (
                "initial" if turn == 1 else "change" if (turn - 1) % PROMPT_EVERY == 0 else "resume"
            )
            log.add("request/header", {"header": header, "reason": reason}, gap=1)
        final = step == steps
        seqs, content, call = _attempt(log, rng, turn, step, final=final)
        message = {
            "id": f"msg_{turn:05d}_{step:02d}",
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", "provider": PROVIDER, "model": MODEL},
        }
        log.add(
            "assistant/message",
            {"turn": turn, "step": step, "message": message},
            gap=2,
            surfaceOp="append",
            sourceEventSeqs=seqs,
        )
        log.expect("assistant")
        if call is not None:
            call_id, name, arguments = call
            log.add(
                "tool/call",
                {
                    "turn": turn,
                    "step": step,
                    "callId": call_id,
                    "name": name,
                    "arguments": arguments,
                },
                gap=1,
            )
            output = prose(rng, rng.randint(100, 4000))
            result = {
                "id": f"tool_{turn:05d}_{step:02d}",
                "role": "user",
                "source": {"kind": "tool", "callId": call_id},
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": call_id,
                        "content": [{"type": "text", "text": output}],
                        "isError": False,
                    }
                ],
            }
            log.add(
                "tool/result",
                {"turn": turn, "step": step, "message": result},
                gap=rng.randint(10, 3000),
                surfaceOp="append",
            )
            log.expect("tool")  # format 3 → 4 gives tool results their own role
        log.add("step/end", {"turn": turn, "step": step}, gap=1)
    log.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}}, gap=1)


def legacy_log(events: int = EVENTS, seed: int = 5) -> LegacyLog:
    """Whole turns of a format-0 agent loop until the log holds at least ``events`` events."""
    rng = random.Random(seed)
    header = {
        "type": "session",
        "version": 0,
        "id": SESSION,
        "createdAt": TIME0,
        "cwd": CWD,
        "delegationDepth": 0,
    }
    log = LegacyLog(header=header)
    log.expect("system")  # the system prompt: one surface node from format 3 on, replaced
    tools = _tool_schemas()
    turn = 0
    while len(log.events) < events:
        turn += 1
        _turn(log, rng, turn, tools)
    return log


def write_log(root: Path, log: LegacyLog) -> Path:
    """Write ``log`` as a format-0 JSONL store would hold it, chunk runs packed into rows."""
    directory = session_dir(root, SESSION, CWD)
    directory.mkdir(parents=True)
    path = directory / "session.jsonl"
    records = [log.header, *pack_chunk_runs(log.events)]
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return path


# --- the children ------------------------------------------------------------------------

_MODES: Final = ("raw", "load", "migrate", "continue")


def _read(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """The header record and every stored record (events and packed rows), as parsed."""
    with path.open("rb") as file:
        header = orjson.loads(file.readline())
        records = [orjson.loads(line) for line in file]
    return header, records


def _expand(header: dict[str, Any], records: list[Any]) -> Artifact:
    """The artifact a reader hands to ``migrate``: packed chunk rows expanded into events."""
    events = [event for record in records for event in decode_storage_record(record)]
    return Artifact(header={k: v for k, v in header.items() if k != "type"}, events=events)


def _parse(path: Path) -> Artifact:
    return _expand(*_read(path))


Work = Callable[[], tuple[int, object]]


def child_work(mode: str, target: str) -> tuple[Work, dict[str, Any], Callable[[], Any] | None]:
    """What one child times, what it measured (untimed) to prepare it, and a diagnostic.

    The work returns how many items it produced (records, messages or migrated events) and what
    it loaded, which the child keeps alive while it measures the memory held. The diagnostic,
    if any, runs after the measurement.
    """
    loads = orjson.loads
    path = Path(target)

    def raw() -> tuple[int, object]:
        with path.open("rb") as file:
            file.readline()  # the header
            records = [loads(line) for line in file]
        return len(records), records

    def load() -> tuple[int, object]:
        session = load_file(path)
        messages = session.derive_messages()
        return len(messages), (session, messages)

    def resume() -> tuple[int, object]:
        store = open_store(f"jsonl:///{path}")  # an absolute path: four slashes
        session = store.open(SESSION)
        messages = session.derive_messages()
        return len(messages), (store, session, messages)

    prepared: dict[str, Any] = {}
    if mode != "migrate":
        return {"raw": raw, "load": load, "continue": resume}[mode], prepared, None
    # The reading, timed on its own with the collector paused, as a store's reader runs it.
    gc.collect()
    gc.disable()
    start = now_ns()
    header, records = _read(path)
    parsed = now_ns()
    artifact = _expand(header, records)
    expanded = now_ns()
    gc.enable()
    del records
    prepared |= {
        "parse_seconds": (parsed - start) / 1e9,
        "expand_seconds": (expanded - parsed) / 1e9,
        "parsed_events": len(artifact.events),
    }

    def migrated() -> tuple[int, object]:
        result = migrate(artifact)
        return len(result.events), result

    def steps() -> dict[str, float]:
        """Each step of the chain timed alone, in a second pass over the same artifact."""
        seconds: dict[str, float] = {}
        current = artifact
        for step in CHAIN.plan(current.version):
            start = now_ns()
            current = step.migrate(current)
            seconds[step.name] = (now_ns() - start) / 1e9
        return seconds

    return migrated, prepared, steps


def child(mode: str, target: str, *, collect: bool = True, profile: bool = False) -> dict[str, Any]:
    """Time one piece of work in this fresh process, with its memory high-water mark."""
    work, prepared, diagnose = child_work(mode, target)
    result = {**measure_work(work, collect=collect, profile=profile), **prepared}
    if diagnose is not None:
        result["diagnostic"] = diagnose()
    return result


def _run_child(mode: str, target: Path, *, collect: bool = True) -> dict[str, Any]:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.formats",
            "child",
            mode,
            str(target),
            *([] if collect else ["--no-gc"]),
        ],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if completed.returncode != 0:
        raise _fail(f"a {mode} child failed:\n{completed.stderr.decode(errors='replace')}")
    result: dict[str, Any] = orjson.loads(completed.stdout)
    return result


# --- the measurements --------------------------------------------------------------------

Run = tuple[str, str]
"""(mode, which file): ``("raw", "v0")`` is the baseline."""

RUNS: Final[tuple[Run, ...]] = (
    ("raw", "v0"),
    ("load", "v0"),
    ("migrate", "v0"),
    ("migrate-no-gc", "v0"),
    ("continue", "v0"),
    ("load", "v4"),
    ("raw", "v4"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Fixture:
    """The format-0 store every run reads, and what a correct reading must give."""

    store: Path
    """The pristine store root; ``continue`` runs on a fresh copy of it."""
    v0: Path
    v4: Path
    """The format-4 file one untimed migrate-on-continue wrote (beside a copy of ``v0``)."""
    logical_events: int
    records: int
    """Lines of ``v0`` after its header: events and packed rows."""
    rows: int
    messages: int
    migrated_events: int
    """Events of the migrated log (``migrate()``'s output; chunks folded into streams)."""
    v4_records: int


def _fail(what: str) -> RuntimeError:
    return RuntimeError(f"formats benchmark: {what}; the measurement would be meaningless")


def prepare(directory: Path) -> Fixture:
    """Write the format-0 log, check that agentlog reads it right, and migrate one copy."""
    log = legacy_log()
    store = directory / "store"
    v0 = write_log(store, log)
    records = pack_chunk_runs(log.events)
    rows = sum(1 for record in records if record["type"] in ROW_TYPES)
    session = load_file(v0)
    messages = session.derive_messages()
    roles: dict[str, int] = {}
    for message in messages:
        roles[message["role"]] = roles.get(message["role"], 0) + 1
    if roles != log.roles:
        raise _fail(f"load_file derived messages by role {roles}, the generator made {log.roles}")
    migrated = migrate(_parse(v0))
    if migrated.version != 4 or len(migrated.events) != len(session.events) - 1:
        raise _fail("migrate() and load_file disagree on the migrated log")
    copy = directory / "migrated"
    shutil.copytree(store, copy)
    with open_store(f"jsonl:///{copy}") as migrating:
        migrating.open(SESSION).close()
    v4 = (copy / v0.relative_to(store)).with_name("session.v4.jsonl")
    resumed = load_file(v4)
    if resumed.header["version"] != 4 or resumed.derive_messages() != messages:
        raise _fail(f"the format-4 file {v4} does not hold the migrated messages")
    wire = [event.to_wire() for event in session.events][:-1]  # the end-seed marker's time aside
    if [event.to_wire() for event in resumed.events][:-1] != wire:
        raise _fail(f"the format-4 file {v4} does not hold the migrated events")
    return Fixture(
        store=store,
        v0=v0,
        v4=v4,
        logical_events=len(log.events),
        records=len(records),
        rows=rows,
        messages=len(messages),
        migrated_events=len(migrated.events),
        v4_records=len(resumed.events),
    )


def _continue_once(fixture: Fixture, directory: Path) -> dict[str, Any]:
    """One migrate-on-continue child on a fresh copy of the store, and what it wrote."""
    copy = directory / "continue"
    shutil.copytree(fixture.store, copy)
    try:
        original = copy / fixture.v0.relative_to(fixture.store)
        result = _run_child("continue", copy)
        written = original.with_name("session.v4.jsonl")
        if not written.is_file() or original.read_bytes() != fixture.v0.read_bytes():
            raise _fail("migrate-on-continue did not leave the original and a session.v4.jsonl")
        result["v4_bytes"] = written.stat().st_size
    finally:
        shutil.rmtree(copy)
    return result


def measure(fixture: Fixture, directory: Path) -> dict[Run, list[dict[str, Any]]]:
    """``ROUNDS`` rounds of every run in a fresh child, in rotating order."""
    expected = {
        "raw": {"v0": fixture.records, "v4": fixture.v4_records},
        "load": {"v0": fixture.messages, "v4": fixture.messages},
        "migrate": {"v0": fixture.migrated_events},
        "migrate-no-gc": {"v0": fixture.migrated_events},
        "continue": {"v0": fixture.messages},
    }
    results: dict[Run, list[dict[str, Any]]] = {run: [] for run in RUNS}
    for round_ in range(ROUNDS):
        rotation = round_ * 3 % len(RUNS)
        for mode, which in RUNS[rotation:] + RUNS[:rotation]:
            path = fixture.v0 if which == "v0" else fixture.v4
            if mode == "continue":
                result = _continue_once(fixture, directory)
            elif mode == "migrate-no-gc":
                result = _run_child("migrate", path, collect=False)
            else:
                result = _run_child(mode, path)
            if result["items"] != expected[mode][which]:
                raise _fail(
                    f"a {mode} child of the {which} file produced {result['items']} items, "
                    f"not {expected[mode][which]}"
                )
            results[mode, which].append(result)
    return results


def _count(value: float, unit: str) -> Figure:
    """A count or a size, exact (``fig`` keeps four significant digits, fit for timings)."""
    return {"value": value, "unit": unit}


def _records(fixture: Fixture, results: dict[Run, list[dict[str, Any]]]) -> list[Benchmark]:
    def seconds(run: Run) -> float:
        return median([result["seconds"] for result in results[run]])

    def grown(run: Run) -> float:
        """Median growth of the resident set's high-water mark during the work, in bytes."""
        return median([result["peak"] - result["rss_before"] for result in results[run]])

    def held(run: Run) -> float:
        return median([result["rss_after"] - result["rss_before"] for result in results[run]])

    base: Run = ("raw", "v0")
    base_s, base_peak = seconds(base), grown(base)
    v0_bytes = fixture.v0.stat().st_size
    v4_bytes = fixture.v4.stat().st_size
    load_v0_s = seconds(("load", "v0"))
    expanded = fixture.logical_events - (fixture.records - fixture.rows)
    file_figures: dict[str, Figure] = {
        "format-0 events (logical, before packing)": _count(fixture.logical_events, "events"),
        "format-0 file": _count(v0_bytes, "bytes"),
        "format-0 file: records after the header (events and rows)": _count(
            fixture.records, "records"
        ),
        "format-0 file: packed chunk rows": _count(fixture.rows, "rows"),
        "migrated log: events (chunks folded into streams)": _count(
            fixture.migrated_events, "events"
        ),
        "messages derived": _count(fixture.messages, "messages"),
    }
    titles = {
        ("load", "v0"): "load_file + derive_messages(), format-0 log of 10^5 events",
        ("migrate", "v0"): "migrate() alone, format 0 → 4, 10^5 events",
        ("continue", "v0"): "migrate-on-continue: open() + derive_messages(), format-0 log "
        "(writes session.v4.jsonl)",
        ("load", "v4"): "load_file + derive_messages() of the migrated format-4 file",
    }
    timed = {
        ("load", "v0"): "from load_file() to the returned list",
        ("migrate", "v0"): "migrate() of an artifact parsed untimed in the same child",
        ("continue", "v0"): "from open_store() through store.open() (which writes the format-4 "
        "file) to the returned list; the store is a fresh copy per round, made untimed",
        ("load", "v4"): "from load_file() to the returned list",
    }
    benchmarks: list[Benchmark] = []
    for run, title in titles.items():
        mode, which = run
        value = seconds(run)
        peak = grown(run)
        figures: dict[str, Figure] = {
            "peak memory growth (high-water mark − before the work)": fig(peak / 2**20, "MiB"),
            "baseline peak memory growth": fig(base_peak / 2**20, "MiB"),
            "peak memory ratio": fig(peak / base_peak, "×"),
            "memory held after the work (RSS growth)": fig(held(run) / 2**20, "MiB"),
            "min over rounds": fig(min(r["seconds"] for r in results[run]), "s"),
            "baseline min over rounds": fig(min(r["seconds"] for r in results[base]), "s"),
            "garbage collections during the work": fig(
                median([r["collections"] for r in results[run]]), "collections"
            ),
        }
        if which == "v0":
            figures |= {
                "format-0 events per second (logical, rows expanded)": fig(
                    fixture.logical_events / value, "events/s"
                ),
                "baseline: format-0 events per second (logical)": fig(
                    fixture.logical_events / base_s, "events/s"
                ),
            }
        if run == ("load", "v0"):
            figures |= file_figures
        elif mode == "migrate":
            no_gc: Run = ("migrate-no-gc", "v0")
            parse = median([r["parse_seconds"] for r in results[run]])
            expand = median([r["expand_seconds"] for r in results[run]])
            figures |= {
                "before it, untimed: parse the lines (orjson.loads), collector paused": fig(
                    parse, "s"
                ),
                "before it, untimed: expand the rows (decode_storage_record), collector paused": (
                    fig(expand, "s")
                ),
                "migrate share of load_file + derive_messages() of the format-0 file": fig(
                    value / load_v0_s, "×"
                ),
                "events in (rows expanded)": _count(fixture.logical_events, "events"),
                "events out": _count(fixture.migrated_events, "events"),
                "collector disabled: migrate()": fig(seconds(no_gc), "s"),
                "collector disabled: peak memory growth": fig(grown(no_gc) / 2**20, "MiB"),
            }
            for name in results[run][0]["diagnostic"]:
                step = median([r["diagnostic"][name] for r in results[run]])
                figures[f"step {name} alone (a second pass in the child)"] = fig(step, "s")
        elif mode == "continue":
            written = int(median([r["v4_bytes"] for r in results[run]]))
            figures |= {
                "session.v4.jsonl written": _count(written, "bytes"),
                "format-0 file (left untouched)": _count(v0_bytes, "bytes"),
                "written / format-0 file": fig(written / v0_bytes, "×"),
                "continue − load_file of the format-0 file (the write, mostly)": fig(
                    value - load_v0_s, "s"
                ),
            }
        else:
            raw_v4: Run = ("raw", "v4")
            figures |= {
                "raw parse of the format-4 file (same reader as the baseline)": fig(
                    seconds(raw_v4), "s"
                ),
                "ratio to the raw parse of the format-4 file": fig(value / seconds(raw_v4), "×"),
                "raw parse of the format-4 file: peak memory growth": fig(
                    grown(raw_v4) / 2**20, "MiB"
                ),
                "format-4 file": _count(v4_bytes, "bytes"),
                "format-4 events per second": fig(fixture.v4_records / value, "events/s"),
                "load_file of the format-0 file / this": fig(load_v0_s / value, "×"),
            }
        benchmarks.append(
            {
                "id": f"{mode}.format_{which[1]}",
                "title": title,
                "statistic": (
                    f"median of {ROUNDS} fresh processes, interleaved with the baseline's; "
                    f"timed {timed[run]}"
                ),
                "value": round(value, 4),
                "unit": "s",
                "baseline": {
                    "name": "fresh process: read the format-0 file, orjson.loads per line",
                    "value": round(base_s, 4),
                    "unit": "s",
                },
                "ratio": round(value / base_s, 2),
                "target": None,
                "met": None,
                "figures": figures,
                "notes": _NOTES[run]
                + " No target: DESIGN.md sets none for reading or migrating older formats (its "
                "cold-open target, ≤ 1.5× the raw parse, is for logs agentlog wrote). The "
                "baseline parses the format-0 file's packed rows without expanding them"
                + _baseline_note(mode, which, expanded),
            }
        )
    return benchmarks


def _baseline_note(mode: str, which: str, expanded: int) -> str:
    if which == "v4":
        return "; this run reads the format-4 file instead (see its own raw parse)."
    if mode == "migrate":
        return (
            f"; migrate() receives the {expanded:,} chunk events expanded (the expansion is a "
            "separate, untimed figure)."
        )
    return f", so this figure includes the expansion of {expanded:,} chunk events."


_NOTES: Final[dict[Run, str]] = {
    ("load", "v0"): "Read-only: the file is read line by line, chunk rows expanded into "
    "events, the log migrated through v0→v1→v2→v3→v4 in memory, every migrated event "
    "validated, and the session built; nothing is written. The collector is paused for the "
    "whole load.",
    ("migrate", "v0"): "The chain's own work, pure and in memory: its input (every row "
    "expanded) is parsed in the same child before the timer starts, and the peak counts only "
    "what migrate() allocates on top. The collector stays on, as for a caller of migrate(); "
    "a diagnostic figure has it off.",
    ("continue", "v0"): "The one-time cost of continuing a format-0 session: read, migrate "
    "and validate as load_file does, then write the whole migrated log (fsynced) as "
    "session.v4.jsonl beside the untouched original (spec/persistence.md §5.5).",
    ("load", "v4"): "What every later open costs: the same log, read from the format-4 file "
    "the migration wrote (chunks already folded into stream records), with no migration.",
}


def run() -> dict[str, Any]:
    directory = Path(tempfile.mkdtemp(prefix="agentlog-bench-formats-"))
    try:
        fixture = prepare(directory)
        gc.collect()
        results = measure(fixture, directory)
        benchmarks = _records(fixture, results)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return {"benchmarks": benchmarks}


def _main() -> None:
    """``python -m benchmarks.formats child MODE PATH [--no-gc] [--profile]``: JSON out."""
    arguments = sys.argv[1:]
    flags = {argument for argument in arguments if argument.startswith("--")}
    arguments = [argument for argument in arguments if not argument.startswith("--")]
    if (
        len(arguments) != 3
        or arguments[0] != "child"
        or arguments[1] not in _MODES
        or not flags <= {"--no-gc", "--profile"}
    ):
        raise SystemExit(
            "usage: python -m benchmarks.formats child {"
            + ",".join(_MODES)
            + "} PATH [--no-gc] [--profile]  (continue: PATH is the store root)"
        )
    result = child(
        arguments[1], arguments[2], collect="--no-gc" not in flags, profile="--profile" in flags
    )
    sys.stdout.buffer.write(orjson.dumps(result))


if __name__ == "__main__":
    _main()
