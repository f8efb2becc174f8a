"""The ADK part of the adapters suite: ``AgentlogSessionService`` against ADK's own services.

The baselines are ADK's ``SqliteSessionService`` (aiosqlite) and ``DatabaseSessionService``
(SQLAlchemy over ``sqlite+aiosqlite``), measured in the same run.

1. ``append_event`` per turn: a turn is three events — the user's message (~1 KB), the model's
   reply with a function call, the function response (~7.5 KB) — ~9 KB, as in DESIGN.md's
   table. Every service appends the same turns, interleaved turn by turn; each turn is timed
   alone (three awaited ``append_event`` calls, each durable).
2. ``get_session`` of a session of 10^5 events (~33,000 short turns of ~1.5 KB), cold: in a
   fresh process, the service constructed, then one ``get_session`` timed (agentlog: its
   default SQLite store). Every session is
   built in bulk with exactly what its service's ``append_event`` stores — agentlog's planned
   events on a write-behind store, ADK's rows in one transaction — since appending 10^5 events
   one durable write at a time would take many minutes.

Targets (issue 16): agentlog ≥ 10× faster on both, i.e. a ratio ≤ 0.1.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Final

import orjson
from google.adk.events.event import Event
from google.adk.sessions import BaseSessionService
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

import agentlog
from agentlog.adapters._adk_codec import classify, event_payload
from agentlog.adapters._adk_log import Trace, plan, session_key
from agentlog.adapters.adk import AgentlogSessionService
from benchmarks._harness import Benchmark, fig, measure_work, median, now_ns
from benchmarks.core import prose

__all__ = ["run"]

ROOT: Final = Path(__file__).resolve().parent.parent
APP: Final = "bench"
USER: Final = "u"
SESSION: Final = "s"
TARGET: Final = 0.1
"""Issue 16: ≥ 10× faster than ADK's own services."""

APPEND_TURNS: Final = 100
APPEND_WARMUP: Final = 10
GET_EVENTS: Final = 100_000


def _turn(rng: random.Random, index: int, *, user: int, reply: int, result: int) -> list[Event]:
    """One turn as ADK writes it: the user's message, a reply calling a tool, its response."""
    invocation = f"inv-{index:06d}"
    call_id = f"call-{index:06d}"
    call = types.FunctionCall(id=call_id, name="read_file", args={"path": prose(rng, 40)})
    response = types.FunctionResponse(
        id=call_id, name="read_file", response={"content": prose(rng, result)}
    )
    return [
        Event(
            invocation_id=invocation,
            author="user",
            content=types.Content(role="user", parts=[types.Part(text=prose(rng, user))]),
        ),
        Event(
            invocation_id=invocation,
            author="helper",
            content=types.Content(
                role="model",
                parts=[types.Part(text=prose(rng, reply)), types.Part(function_call=call)],
            ),
        ),
        Event(
            invocation_id=invocation,
            author="helper",
            content=types.Content(role="user", parts=[types.Part(function_response=response)]),
        ),
    ]


def _services(directory: Path, name: str) -> dict[str, Callable[[], BaseSessionService]]:
    return {
        "agentlog_sqlite": lambda: AgentlogSessionService(f"sqlite:///{directory}/{name}.db"),
        "agentlog_jsonl": lambda: AgentlogSessionService(f"jsonl:///{directory}/{name}-jsonl"),
        "adk_sqlite": lambda: SqliteSessionService(str(directory / f"{name}-adk.db")),
        "adk_database": lambda: DatabaseSessionService(
            f"sqlite+aiosqlite:///{directory}/{name}-adk-database.db"
        ),
    }


TITLES: Final = {
    "agentlog_sqlite": "agentlog SQLite store",
    "agentlog_jsonl": "agentlog JSONL store",
    "adk_sqlite": "ADK SqliteSessionService",
    "adk_database": "ADK DatabaseSessionService (sqlite+aiosqlite)",
}


# --- 1. append_event per turn ---------------------------------------------------------------


async def _append_turns(directory: Path) -> dict[str, list[int]]:
    makers = _services(directory, "append")
    services = {name: make() for name, make in makers.items()}
    sessions = {
        name: await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
        for name, service in services.items()
    }
    rng = random.Random(3)
    timings: dict[str, list[int]] = {name: [] for name in services}
    names = list(services)
    for index in range(APPEND_WARMUP + APPEND_TURNS):
        turn = _turn(rng, index, user=1_000, reply=300, result=7_500)
        rotation = index % len(names)
        for name in names[rotation:] + names[:rotation]:
            events = [event.model_copy(deep=True) for event in turn]
            start = now_ns()
            for event in events:
                await services[name].append_event(sessions[name], event)
            if index >= APPEND_WARMUP:
                timings[name].append(now_ns() - start)
    for service in services.values():
        await _close(service)
    return timings


async def _close(service: BaseSessionService) -> None:
    close = getattr(service, "close", None)
    if close is not None:
        await close()


def _append_benchmarks(timings: dict[str, list[int]]) -> list[Benchmark]:
    found: list[Benchmark] = []
    for ours in ("agentlog_sqlite", "agentlog_jsonl"):
        for theirs in ("adk_sqlite", "adk_database"):
            p50, base = median(timings[ours]), median(timings[theirs])
            ratio = p50 / base
            found.append(
                {
                    "id": f"adk.append_turn.{ours}.vs_{theirs}",
                    "title": f"ADK append_event of a ~9 KB turn (3 events), {TITLES[ours]}",
                    "statistic": (
                        f"median of {APPEND_TURNS} turns, each timed alone, after "
                        f"{APPEND_WARMUP} untimed; the four services interleaved turn by turn"
                    ),
                    "value": round(p50 / 1e6, 4),
                    "unit": "ms/turn (p50)",
                    "baseline": {
                        "name": TITLES[theirs],
                        "value": round(base / 1e6, 4),
                        "unit": "ms/turn",
                    },
                    "ratio": round(ratio, 4),
                    "target": {"text": "≥ 10× faster (≤ 0.1×)", "max_ratio": TARGET},
                    "met": ratio <= TARGET,
                    "figures": {
                        "speed-up": fig(base / p50, "×"),
                        "p90": fig(
                            sorted(timings[ours])[int(0.9 * len(timings[ours]))] / 1e6, "ms/turn"
                        ),
                        "baseline p90": fig(
                            sorted(timings[theirs])[int(0.9 * len(timings[theirs]))] / 1e6,
                            "ms/turn",
                        ),
                    },
                    "notes": "each append durable when it returns, in every service",
                }
            )
    return found


# --- 2. get_session of 10^5 events, cold ----------------------------------------------------


def _history() -> list[Event]:
    rng = random.Random(4)
    events: list[Event] = []
    index = 0
    while len(events) < GET_EVENTS:
        events += _turn(rng, index, user=200, reply=200, result=1_000)
        index += 1
    del events[GET_EVENTS:]
    start = 1_700_000_000.0
    for offset, event in enumerate(events):
        event.timestamp = start + offset / 1000
    return events


async def _build_agentlog(url: str, events: list[Event]) -> None:
    """The session the service writes, its events appended in bulk on a write-behind store.

    The service makes each ``append_event`` durable (one group commit per event); building
    10^5 events that way would time fsyncs, not reads. The events are the service's own: the
    same plan of agentlog events per ADK event (``_adk_log.plan``).
    """
    with agentlog.open_store(url, write_behind=True) as store:
        service = AgentlogSessionService(store)
        await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
        await service.close()
        session = store.open(session_key(APP, USER, SESSION))
        trace = Trace.scan(session.events)
        for event in events:
            payload = event_payload(event)
            for spec in plan(trace, session.events, payload, classify(payload)):
                appended = session.append(
                    spec.type,
                    spec.data,
                    surface_op=spec.surface_op,
                    source_event_seqs=spec.sources,
                    ignorable=spec.ignorable,
                )
                trace.observe(appended)
        session.close()


async def _build_adk_sqlite(path: Path, events: list[Event]) -> None:
    service = SqliteSessionService(str(path))
    await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    with sqlite3.connect(path) as connection:  # the rows SqliteSessionService.append_event writes
        connection.executemany(
            "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp,"
            " event_data) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    event.id,
                    APP,
                    USER,
                    SESSION,
                    event.invocation_id,
                    event.timestamp,
                    event.model_dump_json(exclude_none=True),
                )
                for event in events
            ],
        )


async def _build_adk_database(url: str, events: list[Event]) -> None:
    service = DatabaseSessionService(url)
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    schema = service._get_schema_classes()
    async with service._rollback_on_exception_session() as sql_session:
        # The storage rows DatabaseSessionService.append_event adds, in one transaction.
        sql_session.add_all([schema.StorageEvent.from_event(session, event) for event in events])
        await sql_session.commit()
    await service.close()


def _cold(name: str, target: str) -> dict[str, Any]:
    """Run one cold ``get_session`` in a fresh process; its measurement."""
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks._adapter_adk", "get", name, target],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=900,
    )
    result: dict[str, Any] = orjson.loads(completed.stdout.splitlines()[-1])
    return result


def _get_benchmarks(directory: Path) -> list[Benchmark]:
    events = _history()
    size = sum(len(event.model_dump_json(exclude_none=True)) for event in events)
    targets = {  # agentlog's default store only, to keep the suite short
        "agentlog_sqlite": f"sqlite:///{directory}/get.db",
        "adk_sqlite": str(directory / "get-adk.db"),
        "adk_database": f"sqlite+aiosqlite:///{directory}/get-adk-database.db",
    }
    builders: dict[str, Callable[[str, list[Event]], Coroutine[Any, Any, None]]] = {
        "agentlog_sqlite": _build_agentlog,
        "adk_sqlite": lambda target, history: _build_adk_sqlite(Path(target), history),
        "adk_database": _build_adk_database,
    }
    for name, target in targets.items():
        asyncio.run(builders[name](target, events))
    measured = {name: _cold(name, target) for name, target in targets.items()}
    found: list[Benchmark] = []
    for ours in ("agentlog_sqlite",):
        for theirs in ("adk_sqlite", "adk_database"):
            seconds, base = measured[ours]["seconds"], measured[theirs]["seconds"]
            ratio = seconds / base
            found.append(
                {
                    "id": f"adk.get_session.{ours}.vs_{theirs}",
                    "title": f"ADK get_session of 10^5 events, cold, {TITLES[ours]}",
                    "statistic": (
                        "one get_session in a fresh process, the service constructed first"
                    ),
                    "value": round(seconds, 3),
                    "unit": "s",
                    "baseline": {"name": TITLES[theirs], "value": round(base, 3), "unit": "s"},
                    "ratio": round(ratio, 4),
                    "target": {"text": "≥ 10× faster (≤ 0.1×)", "max_ratio": TARGET},
                    "met": ratio <= TARGET,
                    "figures": {
                        "speed-up": fig(base / seconds, "×"),
                        "events returned": fig(measured[ours]["items"], "events"),
                        "ADK JSON of the events": fig(size, "bytes"),
                        "peak memory": fig(measured[ours]["peak"], "bytes"),
                        "baseline peak memory": fig(measured[theirs]["peak"], "bytes"),
                    },
                    "notes": (
                        "each returned event is a full ADK Event (pydantic models built to "
                        "equal validated ones), as ADK's services return them; building them "
                        "(agentlog.values construct, in C) is about a quarter of agentlog's "
                        "instructions, reading the rows and parsing their JSON most of the rest"
                    ),
                }
            )
    return found


def _get_in_child(name: str, target: str) -> None:
    services: dict[str, Callable[[], BaseSessionService]] = {
        "agentlog_sqlite": lambda: AgentlogSessionService(target),
        "agentlog_jsonl": lambda: AgentlogSessionService(target),
        "adk_sqlite": lambda: SqliteSessionService(target),
        "adk_database": lambda: DatabaseSessionService(target),
    }
    service = services[name]()
    loop = asyncio.new_event_loop()

    def work() -> tuple[int, object]:
        session = loop.run_until_complete(
            service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
        )
        assert session is not None
        return len(session.events), session

    result = measure_work(work)
    print(orjson.dumps(result).decode())


def run() -> list[Benchmark]:
    directory = Path(tempfile.mkdtemp(prefix="agentlog-bench-adk-"))
    try:
        timings = asyncio.run(_append_turns(directory))
        return [*_append_benchmarks(timings), *_get_benchmarks(directory)]
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1] == "get":
        _get_in_child(sys.argv[2], sys.argv[3])
    else:  # pragma: no cover - a manual run of this part alone
        for benchmark in run():
            print(orjson.dumps(benchmark, option=orjson.OPT_INDENT_2).decode())
