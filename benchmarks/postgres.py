"""The postgres suite: the PostgreSQL store against raw psycopg (issue 13; DESIGN.md targets).

Every figure is measured against a raw psycopg baseline in the same run, on the same server,
in a schema of the run's own (dropped at the end):

1. Loop-shaped turns (``benchmarks._loop``: 8 events, ~9 KB), each timed alone and interleaved
   turn by turn: (a) 8 appends each durable before it returns, (b) one ``batch()`` per turn,
   (c) write-behind with one ``flush()`` per turn — against raw psycopg ``executemany`` of the
   turn's 8 rows (the store's columns) in one transaction, and against 8 raw one-row
   transactions (the floor of (a)). Target: (b) p50 ≤ 1.3× the one-transaction baseline.
   In the same rotation, ``agentlog.aio`` (the async-native store on psycopg's async
   connections): (d) 8 awaited durable appends, (e) one ``async with session.batch()`` per turn
   — against raw psycopg ``AsyncConnection`` ``executemany`` of the turn's rows in one
   transaction, on the same event loop. Target: (e) p50 ≤ 1.3× that baseline.
2. Write-behind throughput: 10^5 events of the realistic agent-loop mix appended with
   ``write_behind=True`` and one ``flush()``, against raw ``executemany`` of the same rows in one
   transaction. Target: ≥ 30,000 events/s.
3. Cold open + ``derive_messages()`` of that 10^5-event session in a fresh process, against a
   fresh process running ``SELECT`` of the session's rows and ``orjson.loads`` of each payload.
4. 8 worker processes, each appending loop-shaped turns in ``batch()`` blocks to its own session,
   started together: aggregate events/s against 8 raw workers doing ``executemany`` per turn.

The server is ``$AGENTLOG_BENCH_POSTGRES`` or ``postgresql://postgres@127.0.0.1:5432/test``.
Without psycopg or a reachable server the suite is skipped with the reason, and no results
file is written. Children: ``python -m benchmarks.postgres cold MODE URL SID`` and
``python -m benchmarks.postgres worker MODE URL INDEX TURNS GO``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import orjson

from agentlog import aio, open_store
from benchmarks._harness import (
    Benchmark,
    SkipSuite,
    bootstrap_interval,
    fig,
    measure_work,
    median,
    now_ns,
    p50_ratio,
    quiet_gc,
    round_robin,
)
from benchmarks._loop import Turn, loop_turns
from benchmarks._stores_loop import percentile, wire_turns

__all__ = ["run"]

ROOT: Final = Path(__file__).resolve().parent.parent
SERVER: Final = os.environ.get(
    "AGENTLOG_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)

LOOP_TURNS: Final = 1_000
LOOP_WARMUP: Final = 20
BATCH_TARGET: Final = 1.3
WRITE_BEHIND_EVENTS: Final = 100_000
WRITE_BEHIND_REPEATS: Final = 2
WRITE_BEHIND_TARGET: Final = 30_000.0
COLD_ROUNDS: Final = 3
COLD_TARGET: Final = 1.5
"""DESIGN.md's cold-open target for the embedded stores, applied to PostgreSQL's raw read."""
WORKERS: Final = 8
WORKER_TURNS: Final = 120
WORKER_ROUNDS: Final = 2

_COLUMNS: Final = (
    "session_id text NOT NULL, seq bigint NOT NULL, type text NOT NULL, time bigint NOT NULL, "
    "data bytea NOT NULL, source_event_seqs text, surface_op text, ignorable smallint, "
    "PRIMARY KEY (session_id, seq)"
)
"""The store's ``events`` columns (``agentlog.stores._pg_schema``), for the raw baselines."""
_INSERT: Final = "INSERT INTO raw_events VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"


def unavailable() -> str | None:
    """Why the suite cannot run, or ``None``."""
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        return f"the postgres extra is not installed ({exc}): pip install 'agentlog[postgres]'"
    try:
        psycopg.connect(SERVER, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        return f"no PostgreSQL server at {SERVER} ({' '.join(str(exc).split())})"
    return None


def _connect(schema: str | None = None) -> Any:
    import psycopg

    connection = psycopg.connect(SERVER, autocommit=True)
    if schema is not None:
        connection.execute(f"SET search_path = {schema}")
    return connection


@contextmanager
def bench_schema() -> Iterator[str]:
    """A fresh schema name for the store, and ``<name>_raw`` with the baselines' table (the
    store refuses a schema holding tables of others); both dropped at the end."""
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with _connect() as connection:
        connection.execute(f"CREATE SCHEMA {schema}_raw")
        connection.execute(f"CREATE TABLE {schema}_raw.raw_events ({_COLUMNS})")
    try:
        yield schema
    finally:
        with _connect() as connection:
            connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            connection.execute(f"DROP SCHEMA {schema}_raw CASCADE")


def store_url(schema: str) -> str:
    return f"{SERVER}{'&' if '?' in SERVER else '?'}schema={schema}"


def raw_schema(schema: str) -> str:
    """The schema of the raw baselines' table beside the store's ``schema``."""
    return f"{schema}_raw"


def raw_row(sid: str, event: dict[str, Any]) -> tuple[Any, ...]:
    """The row the store writes for ``event``, its payload uncompressed."""
    dumps = orjson.dumps
    sources, surface_op = event.get("sourceEventSeqs"), event.get("surfaceOp")
    return (
        sid,
        event["seq"],
        event["type"],
        event["time"],
        dumps(event["data"]),
        None if sources is None else dumps(sources).decode(),
        None if surface_op is None else dumps(surface_op).decode(),
        None,
    )


# --- 1. loop-shaped turns --------------------------------------------------------------------


class StoreTurns:
    """A session of a PostgreSQL store in one mode; each call appends one turn and times it."""

    def __init__(self, url: str, mode: str, turns: list[Turn]) -> None:
        self.store = open_store(url, write_behind=mode == "write_behind")
        self.session = self.store.create(f"loop-{mode}")
        self.mode = mode
        self.turns = turns

    def __call__(self, index: int) -> int:
        session, turn = self.session, self.turns[index]
        append = session.append
        start = now_ns()
        if self.mode == "batch":
            with session.batch():
                for event_type, data, surface_op in turn:
                    append(event_type, data, surface_op=surface_op)
        else:
            for event_type, data, surface_op in turn:
                append(event_type, data, surface_op=surface_op)
            if self.mode == "write_behind":
                session.flush()
        return now_ns() - start

    def close(self) -> None:
        self.session.close()
        self.store.close()


class RawTurns:
    """Raw psycopg: the turn's rows in one transaction (``executemany``) or one per row."""

    def __init__(self, schema: str, sid: str, wire: list[list[dict[str, Any]]], *, each: bool):
        self.connection = _connect(raw_schema(schema))
        self.sid = sid
        self.wire = wire
        self.each = each

    def __call__(self, index: int) -> int:
        connection, sid = self.connection, self.sid
        start = now_ns()
        rows = [raw_row(sid, event) for event in self.wire[index]]
        if self.each:
            for row in rows:
                with connection.transaction():
                    connection.execute(_INSERT, row)
        else:
            with connection.transaction():
                connection.cursor().executemany(_INSERT, rows)
        return now_ns() - start

    def close(self) -> None:
        self.connection.close()


class AioStoreTurns:
    """A session of an ``agentlog.aio`` PostgreSQL store; each call awaits one turn on ``loop``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, url: str, mode: str, turns: list[Turn]):
        self.loop = loop
        self.store = loop.run_until_complete(aio.open_store(url))
        self.session = loop.run_until_complete(self.store.create(f"loop-{mode}"))
        self.batch = mode == "aio_batch"
        self.turns = turns

    def __call__(self, index: int) -> int:
        return self.loop.run_until_complete(self._turn(index))

    async def _turn(self, index: int) -> int:
        session, turn = self.session, self.turns[index]
        append = session.append
        start = now_ns()
        if self.batch:
            async with session.batch():
                for event_type, data, surface_op in turn:
                    await append(event_type, data, surface_op=surface_op)
        else:
            for event_type, data, surface_op in turn:
                await append(event_type, data, surface_op=surface_op)
        return now_ns() - start

    def close(self) -> None:
        self.loop.run_until_complete(self.session.close())
        self.loop.run_until_complete(self.store.close())


class RawAioTurns:
    """Raw psycopg on an ``AsyncConnection``: the turn's rows in one transaction (``executemany``),
    awaited on ``loop``."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, schema: str, sid: str, wire: list[list[Any]]
    ):
        import psycopg

        self.loop = loop
        self.connection = loop.run_until_complete(
            psycopg.AsyncConnection.connect(SERVER, autocommit=True)
        )
        loop.run_until_complete(self.connection.execute(f"SET search_path = {raw_schema(schema)}"))
        self.sid = sid
        self.wire = wire

    def __call__(self, index: int) -> int:
        return self.loop.run_until_complete(self._turn(index))

    async def _turn(self, index: int) -> int:
        connection, sid = self.connection, self.sid
        start = now_ns()
        rows = [raw_row(sid, event) for event in self.wire[index]]
        async with connection.transaction():
            await connection.cursor().executemany(_INSERT, rows)
        return now_ns() - start

    def close(self) -> None:
        self.loop.run_until_complete(self.connection.close())


LOOP_MODES: Final = {
    "durable": "(a) 8 appends, each durable before it returns (8 transactions)",
    "batch": "(b) one batch() per turn (one transaction)",
    "write_behind": "(c) write-behind, one flush() per turn (one transaction)",
    "aio_durable": "(d) agentlog.aio, 8 awaited appends, each durable before it returns",
    "aio_batch": "(e) agentlog.aio, one async with batch() per turn (one transaction)",
}
"""The store's modes; ``aio_*`` run on one event loop against the async raw baseline."""


def bench_loop(schema: str) -> list[Benchmark]:
    total = LOOP_WARMUP + LOOP_TURNS
    turns = loop_turns(total)
    wire = wire_turns(turns)
    turn_bytes = sum(len(orjson.dumps(e)) + 1 for turn in wire for e in turn) / total
    url = store_url(schema)
    subjects: dict[str, Callable[[int], int]] = {
        "raw": RawTurns(schema, "raw-many", wire, each=False),
        "raw-each": RawTurns(schema, "raw-each", wire, each=True),
    }
    loop = asyncio.new_event_loop()
    subjects["raw-aio"] = RawAioTurns(loop, schema, "raw-aio", wire)
    for mode in LOOP_MODES:
        if mode.startswith("aio_"):
            subjects[mode] = AioStoreTurns(loop, url, mode, turns)
        else:
            subjects[mode] = StoreTurns(url, mode, turns)
    timings = round_robin(subjects, total, LOOP_WARMUP)
    for subject in subjects.values():
        subject.close()  # type: ignore[attr-defined]  # every subject has close()
    loop.close()
    each = timings["raw-each"]
    benchmarks: list[Benchmark] = []
    for mode, how in LOOP_MODES.items():
        asynchronous = mode.startswith("aio_")
        raw = timings["raw-aio" if asynchronous else "raw"]
        values = timings[mode]
        p50, p99, worst = median(values), percentile(values, 0.99), max(values)
        low, high = bootstrap_interval(p50_ratio, [values, raw])
        target = BATCH_TARGET if mode in ("batch", "aio_batch") else None
        benchmarks.append(
            {
                "id": f"loop_turn.{mode}",
                "title": f"loop-shaped turn (8 events, ~9 KB), {how}, PostgreSQL",
                "statistic": (
                    f"median (p50) of {LOOP_TURNS:,} turns, each timed alone, after "
                    f"{LOOP_WARMUP} untimed; 5 subjects and 3 baselines interleaved turn by turn"
                ),
                "value": round(p50 / 1e6, 4),
                "unit": "ms/turn (p50)",
                "baseline": {
                    "name": (
                        "raw psycopg AsyncConnection: executemany of the turn's 8 rows in one "
                        "transaction, awaited"
                        if asynchronous
                        else "raw psycopg: executemany of the turn's 8 rows in one transaction"
                    ),
                    "value": round(median(raw) / 1e6, 4),
                    "unit": "ms/turn",
                },
                "ratio": round(p50 / median(raw), 3),
                "target": (
                    None
                    if target is None
                    else {
                        "text": f"≤ {target:g}× raw psycopg executemany in one transaction",
                        "max_ratio": target,
                    }
                ),
                "met": None if target is None else _verdict(low, high, target),
                "figures": {
                    "p99": fig(p99 / 1e6, "ms/turn"),
                    "max": fig(worst / 1e6, "ms/turn"),
                    "baseline p99": fig(percentile(raw, 0.99) / 1e6, "ms/turn"),
                    "baseline max": fig(max(raw) / 1e6, "ms/turn"),
                    "p50 ratio, 95% bootstrap interval, low": fig(low, "×"),
                    "p50 ratio, 95% bootstrap interval, high": fig(high, "×"),
                    "p99 ratio": fig(p99 / percentile(raw, 0.99), "×"),
                    "raw, 8 one-row transactions, p50": fig(median(each) / 1e6, "ms/turn"),
                    "raw, 8 one-row transactions, p99": fig(percentile(each, 0.99) / 1e6, "ms"),
                    "p50 ratio to 8 raw one-row transactions": fig(p50 / median(each), "×"),
                    "per event (p50 / 8)": fig(p50 / 8 / 1e3, "µs/event"),
                    "JSON per turn (mean)": fig(turn_bytes, "bytes"),
                },
                "notes": (
                    "Each store transaction fences on the stored next seq, renews the writer's "
                    "lease, inserts the rows (payloads of 4 KiB or more zstd-compressed when "
                    "smaller) and NOTIFYs, in one pipeline, then COMMITs; the raw baselines "
                    "insert the same columns with the JSON uncompressed."
                    + (
                        " agentlog.aio: every append awaited on one event loop (driven turn by "
                        "turn with run_until_complete), as is the async raw baseline."
                        if asynchronous
                        else ""
                    )
                    + " The verdict needs the "
                    f"95% bootstrap interval of the p50 ratio on one side: [{low:.3g}×, "
                    f"{high:.3g}×]."
                ),
            }
        )
    return benchmarks


def _verdict(low: float, high: float, target: float) -> bool | None:
    return True if high <= target else False if low > target else None


# --- 2. write-behind throughput ----------------------------------------------------------


def bench_write_behind(schema: str) -> tuple[list[Benchmark], str]:
    """Write-behind appends + one flush against raw executemany; returns the session it kept."""
    from benchmarks.stores import agent_loop, wire_events

    turns = agent_loop(WRITE_BEHIND_EVENTS)
    wire = wire_events(turns)
    url = store_url(schema)
    totals: list[int] = []
    flushes: list[int] = []
    raws: list[int] = []
    kept = ""
    for repeat in range(WRITE_BEHIND_REPEATS):
        sid = f"write-behind-{repeat}"
        store = open_store(url, write_behind=True)
        session = store.create(sid)
        append = session.append
        with quiet_gc():
            start = now_ns()
            for turn in turns:
                for event_type, data, surface_op in turn:
                    append(event_type, data, surface_op=surface_op)
            appended = now_ns()
            session.flush()
            end = now_ns()
        session.close()
        store.close()
        totals.append(end - start)
        flushes.append(end - appended)
        kept = sid
        with _connect(raw_schema(schema)) as connection, quiet_gc():
            start = now_ns()
            rows = [raw_row(f"raw-{repeat}", event) for event in wire]
            with connection.transaction():
                connection.cursor().executemany(_INSERT, rows)
            raws.append(now_ns() - start)
    count = len(wire)
    best, raw_best = min(totals), min(raws)
    rate, raw_rate = count * 1e9 / best, count * 1e9 / raw_best
    record: Benchmark = {
        "id": "write_behind",
        "title": "write-behind appends of 10^5 events + one flush(), PostgreSQL",
        "statistic": f"best of {WRITE_BEHIND_REPEATS} runs, each a fresh session",
        "value": round(rate),
        "unit": "events/s",
        "baseline": {
            "name": "raw psycopg: orjson.dumps each event, executemany in one transaction",
            "value": round(raw_rate),
            "unit": "events/s",
        },
        "ratio": round(rate / raw_rate, 3),
        "target": {"text": f"≥ {WRITE_BEHIND_TARGET:,.0f} events/s", "max_ratio": None},
        "met": rate >= WRITE_BEHIND_TARGET,
        "figures": {
            "appends + flush, best": fig(best / 1e9, "s"),
            "final flush (of the best run)": fig(flushes[totals.index(best)] / 1e9, "s"),
            "per event": fig(best / count / 1e3, "µs/event"),
            "baseline, best": fig(raw_best / 1e9, "s"),
        },
        "notes": (
            f"{count:,} events of the realistic agent-loop mix (11 per turn), batch_delay "
            "0.2 s: the background thread writes a batch (one transaction) while the loop "
            "appends. The ratio is agentlog's rate over the baseline's (below 1: slower)."
        ),
    }
    return [record], kept


# --- 3. cold open + derive_messages() -----------------------------------------------------


def cold_work(mode: str, url: str, sid: str) -> Callable[[], tuple[int, object]]:
    """What one cold child times: the store's open + derive, or the raw SELECT + loads."""

    def agentlog() -> tuple[int, object]:
        store = open_store(url)
        session = store.open(sid)
        messages = session.derive_messages()
        return len(messages), (store, session, messages)

    def raw() -> tuple[int, object]:
        import psycopg
        import zstandard

        loads = orjson.loads
        decompress = zstandard.ZstdDecompressor().decompressobj
        schema = url.rsplit("schema=", 1)[1].split("&", 1)[0]
        records: list[dict[str, Any]] = []
        with psycopg.connect(SERVER) as connection:
            cursor = connection.cursor(binary=True)
            cursor.execute(
                f"SELECT seq, type, time, data, source_event_seqs, surface_op FROM {schema}.events "
                "WHERE session_id = %s ORDER BY seq",
                (sid,),
            )
            for seq, event_type, at, data, sources, surface_op in cursor:
                payload = bytes(data)
                if payload[:4] == b"\x28\xb5\x2f\xfd":
                    payload = decompress().decompress(payload)
                record = {"type": event_type, "seq": seq, "time": at, "data": loads(payload)}
                if sources is not None:
                    record["sourceEventSeqs"] = loads(sources)
                if surface_op is not None:
                    record["surfaceOp"] = loads(surface_op)
                records.append(record)
        return len(records), records

    return {"open": agentlog, "raw": raw}[mode]


def _run_child(*args: str) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.postgres", *args],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result: dict[str, Any] = orjson.loads(completed.stdout)
    return result


def bench_cold(schema: str, sid: str) -> list[Benchmark]:
    url = store_url(schema)
    with open_store(url) as store:
        store.open(sid).close()  # the end-seed marker, once: the timed opens write nothing
    results: dict[str, list[dict[str, Any]]] = {"open": [], "raw": []}
    for round_ in range(COLD_ROUNDS):
        for mode in ("open", "raw") if round_ % 2 == 0 else ("raw", "open"):
            results[mode].append(_run_child("cold", mode, url, sid))

    def seconds(mode: str) -> float:
        return median([r["seconds"] for r in results[mode]])

    def grown(mode: str) -> float:
        return median([r["peak"] - r["rss_before"] for r in results[mode]])

    value, base = seconds("open"), seconds("raw")
    ratio = value / base
    return [
        {
            "id": "cold.open",
            "title": "cold open() + derive_messages(), 10^5 events, PostgreSQL",
            "statistic": (
                f"median of {COLD_ROUNDS} fresh processes, interleaved with the baseline's; "
                "timed from open_store() to the returned list"
            ),
            "value": round(value, 3),
            "unit": "s",
            "baseline": {
                "name": "fresh process: SELECT the session's rows, orjson.loads each payload",
                "value": round(base, 3),
                "unit": "s",
            },
            "ratio": round(ratio, 3),
            "target": {
                "text": f"≤ {COLD_TARGET:g}× (the design's cold-open target of the embedded "
                "stores, applied to the raw read of the same rows)",
                "max_ratio": COLD_TARGET,
            },
            "met": ratio <= COLD_TARGET,
            "figures": {
                "peak memory growth": fig(grown("open") / 2**20, "MiB"),
                "baseline peak memory growth": fig(grown("raw") / 2**20, "MiB"),
                "min over rounds": fig(min(r["seconds"] for r in results["open"]), "s"),
                "baseline min over rounds": fig(min(r["seconds"] for r in results["raw"]), "s"),
                "messages derived": fig(results["open"][0]["items"], "messages"),
                "records read by the baseline": fig(results["raw"][0]["items"], "records"),
            },
            "notes": (
                "The session is the write-behind benchmark's (the realistic agent-loop mix), "
                "opened once before so that the timed opens write nothing. Both children "
                "import agentlog and psycopg before the timed work; the store's open also "
                "takes the writer lease (one transaction) and checks the schema version."
            ),
        }
    ]


# --- 4. eight workers -----------------------------------------------------------------------


def worker(mode: str, url: str, index: int, turns: int, go: str) -> dict[str, Any]:
    """One worker process: ``turns`` loop-shaped turns, one transaction each, own session."""
    work = loop_turns(turns, seed=100 + index)
    sid = f"worker-{mode}-{index}-{uuid.uuid4().hex[:6]}"
    if mode == "agentlog":
        store = open_store(url)
        session = store.create(sid)
    else:
        wire = wire_turns(work)
        schema = url.rsplit("schema=", 1)[1].split("&", 1)[0]
        connection = _connect(raw_schema(schema))
    while not os.path.exists(go):
        time.sleep(0.001)
    start = time.monotonic()
    for number, turn in enumerate(work):
        if mode == "agentlog":
            with session.batch():
                for event_type, data, surface_op in turn:
                    session.append(event_type, data, surface_op=surface_op)
        else:
            rows = [raw_row(sid, event) for event in wire[number]]
            with connection.transaction():
                connection.cursor().executemany(_INSERT, rows)
    end = time.monotonic()
    if mode == "agentlog":
        session.close()
        store.close()
    else:
        connection.close()
    return {"start": start, "end": end, "events": 8 * turns}


def _fleet(mode: str, url: str, directory: Path, round_: int) -> float:
    """Aggregate events/s of WORKERS processes started together."""
    go = directory / f"go-{mode}-{round_}"
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.postgres",
                "worker",
                mode,
                url,
                str(index),
                str(WORKER_TURNS),
                str(go),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
        )
        for index in range(WORKERS)
    ]
    time.sleep(3.0)  # every worker imported, connected and waiting
    go.touch()
    results = []
    for process in processes:
        out, _ = process.communicate(timeout=600)
        assert process.returncode == 0, f"a {mode} worker failed"
        results.append(orjson.loads(out))
    span = max(r["end"] for r in results) - min(r["start"] for r in results)
    return float(sum(r["events"] for r in results) / span)


def bench_workers(schema: str) -> list[Benchmark]:
    import tempfile

    url = store_url(schema)
    rates: dict[str, list[float]] = {"agentlog": [], "raw": []}
    with tempfile.TemporaryDirectory(prefix="agentlog-bench-pg-") as directory:
        for round_ in range(WORKER_ROUNDS):
            for mode in ("agentlog", "raw") if round_ % 2 == 0 else ("raw", "agentlog"):
                rates[mode].append(_fleet(mode, url, Path(directory), round_))
    rate, raw = max(rates["agentlog"]), max(rates["raw"])
    return [
        {
            "id": "workers.aggregate",
            "title": f"{WORKERS} worker processes, loop-shaped turns in one batch() each, "
            "aggregate throughput, PostgreSQL",
            "statistic": f"best of {WORKER_ROUNDS} rounds, alternating with the baseline's",
            "value": round(rate),
            "unit": "events/s",
            "baseline": {
                "name": f"{WORKERS} raw psycopg workers: executemany of each turn's rows in one "
                "transaction",
                "value": round(raw),
                "unit": "events/s",
            },
            "ratio": round(rate / raw, 3),
            "target": None,
            "met": None,
            "figures": {
                "turns per worker": fig(WORKER_TURNS, "turns"),
                "agentlog, every round": fig(median(rates["agentlog"]), "events/s (median)"),
                "baseline, every round": fig(median(rates["raw"]), "events/s (median)"),
                "aggregate turns/s": fig(rate / 8, "turns/s"),
            },
            "notes": (
                "Each worker has its own session (agentlog: its own store, lease and pool) and "
                "starts when all are connected; the rate is all events over the span from the "
                "first start to the last end. The ratio is agentlog's rate over the baseline's."
            ),
        }
    ]


# --- the suite ---------------------------------------------------------------------------


def run() -> dict[str, Any]:
    reason = unavailable()
    if reason is not None:
        raise SkipSuite(reason)
    with bench_schema() as schema:
        benchmarks = bench_loop(schema)
        records, kept = bench_write_behind(schema)
        benchmarks += records
        benchmarks += bench_cold(schema, kept)
        benchmarks += bench_workers(schema)
    return {"benchmarks": benchmarks}


def _child() -> None:
    arguments = sys.argv[1:]
    if arguments[:1] == ["cold"] and len(arguments) in (4, 5):
        _, mode, url, sid, *flags = arguments
        result = measure_work(cold_work(mode, url, sid), profile="--profile" in flags)
    elif arguments[:1] == ["worker"] and len(arguments) == 6:
        _, mode, url, index, turns, go = arguments
        result = worker(mode, url, int(index), int(turns), go)
    else:
        raise SystemExit(
            "usage: python -m benchmarks.postgres cold {open,raw} URL SID [--profile] | "
            "worker {agentlog,raw} URL INDEX TURNS GO"
        )
    sys.stdout.buffer.write(orjson.dumps(result))


if __name__ == "__main__":
    _child()
