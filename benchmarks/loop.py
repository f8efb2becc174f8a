"""The loop suite: the agent loop's own cost per tool step, in memory and durable.

A *tool step* is one step of a turn in which the model (the ``Scripted`` provider, streaming
its answer chunk by chunk) calls one tool and the tool's result is committed: ``step/start``,
the request, the streamed ``assistant/message`` with the call, ``tool/call``, the tool,
``tool/result``, ``step/end``. Measured turns hold ``STEPS`` tool steps and a final answer; a
session observer stamps every ``step/start``, and a tool step's time is the gap between its
``step/start`` and the next one (the first step of each turn is left out: it carries the
turn's own events).

1. **CPU per tool step** on a detached session that already holds 10^2 and 10^4 events (the
   log written by the same agent), with an ``async`` tool that returns at once: the loop's own
   work — nothing in a step may scan the log, so the cost must not grow with it (target
   ≤ 250 µs, and ≤ 1.5× from 10^2 to 10^4; DESIGN.md, "Performance targets"). Also reported:
   the same with a synchronous tool (run in a worker thread), and a whole turn of one tool step
   and a final answer.
2. **Durable tool step** on JSONL and SQLite stores: the checkpoint policy's durable writes
   (two per tool step: before the request, carrying the previous step's end, and before the
   tool body), against the target's baseline: three raw ``os.write`` + ``os.fdatasync`` of the
   step's bytes, grouped as request / answer and call / results and end, on the same file
   system (target ≤ 1.2×; DESIGN.md's ≤ 3.3× one raw fsync is the same bound). The ratio is
   paired: each round runs a turn of the loop and as many baseline steps back to back (the
   order rotating), and the figure is the median of the rounds' ratios, so the baseline shares
   the load and the disk state of the steps it is compared with. Also reported: the step with
   every durable write handed to a worker thread (what the loop does when other tasks share
   the event loop; alone, as here, it writes on the loop's thread), and a *hand-rolled durable
   loop*: the same agent on a memory store, each checkpoint followed by one raw ``os.write`` +
   ``os.fdatasync`` of the lines it made durable. The baseline blocks on the disk three times
   back to back with nothing in between; a loop does its step's work between its writes, and
   the code that runs after each blocking write runs on a cold CPU (caches, frequency) — a
   cost any durable loop pays, which the hand-rolled loop shows apart from agentlog's stores.

Run it with ``python -m benchmarks loop``.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from agentlog import Agent, Event, Session, open_store, tool
from agentlog.loop import ModelRequest, checkpoint
from agentlog.providers import Scripted
from benchmarks._harness import Benchmark, bootstrap_interval, fig, median, now_ns, quiet_gc

__all__ = ["run"]

SIZES: Final = (100, 10_000)
STEPS: Final = 20
CPU_TURNS: Final = 40
CPU_TARGET_US: Final = 250.0
GROWTH_TARGET: Final = 1.5
DURABLE_STEPS: Final = 10
DURABLE_TURNS: Final = 30
DURABLE_TARGET: Final = 1.2
ANSWER: Final = "I will look that key up now."
RESULT: Final = "line of a file that the tool read\n" * 12


@tool
async def lookup(key: str) -> str:
    """Look a key up."""
    return RESULT


@tool
def lookup_sync(key: str) -> str:
    """Look a key up (in a worker thread)."""
    return RESULT


def _model(steps: int, name: str) -> Scripted:
    """Calls ``name`` ``steps`` times per turn, then answers; every answer streams word by word."""
    state = {"left": 0, "calls": 0}

    def answer(request: ModelRequest) -> Any:
        if request.messages[-1]["role"] == "user":
            state["left"] = steps
        if state["left"] == 0:
            return "Done."
        state["left"] -= 1
        state["calls"] += 1
        return [ANSWER, Scripted.call(name, {"key": f"k{state['calls']}"})]

    return Scripted(answer, retry_policy=None)


class _Stamps:
    """Wall and CPU clocks at every ``step/start`` of the session, per turn."""

    def __init__(self, session: Session, steps: int) -> None:
        self.steps = steps
        self.turns: list[list[tuple[int, int]]] = []
        self.remove = session.add_observer(self)

    def __call__(self, _session: Session, event: Event) -> None:
        if event.type == "step/start":
            if event.data["step"] == 1:
                self.turns.append([])
            self.turns[-1].append((now_ns(), time.process_time_ns()))

    def tool_steps(self, clock: int) -> list[int]:
        """Each tool step's time but the first of each turn (``clock`` 0: wall, 1: CPU)."""
        gaps: list[int] = []
        for stamps in self.turns:
            starts = [stamp[clock] for stamp in stamps[1 : self.steps + 1]]
            gaps += [b - a for a, b in itertools.pairwise(starts)]
        return gaps


class _Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000_000

    def __call__(self) -> int:
        self.now += 1
        return self.now


def _prefill(agent: Agent, events: int) -> None:
    async def fill() -> None:
        while agent.session.seq < events:
            await agent.run("Fill the log.")

    asyncio.run(fill())


def _cpu(events: int, tool_name: str) -> _Stamps:
    session = Session.create("bench", clock=_Clock())
    tools = [lookup if tool_name == "lookup" else lookup_sync]
    agent = Agent(session, _model(STEPS, tool_name), tools=tools)
    _prefill(agent, events)
    stamps = _Stamps(session, STEPS)

    async def measure() -> None:
        for _ in range(CPU_TURNS):
            await agent.run("Look up twenty keys.")

    with quiet_gc():
        asyncio.run(measure())
    return stamps


def _one_step_turns(events: int) -> list[int]:
    """CPU per whole turn: the prompt, one tool step, the final answer."""
    session = Session.create("bench", clock=_Clock())
    agent = Agent(session, _model(1, "lookup"), tools=[lookup])
    _prefill(agent, events)
    turns: list[int] = []

    async def measure() -> None:
        for _ in range(CPU_TURNS * 5):
            start = time.process_time_ns()
            await agent.run("Look one key up.")
            turns.append(time.process_time_ns() - start)

    with quiet_gc():
        asyncio.run(measure())
    return turns


def _ratio_of_medians(samples: list[Any]) -> float:
    subject, baseline = samples
    return median(subject) / median(baseline)


def bench_cpu() -> list[Benchmark]:
    stamps = {events: _cpu(events, "lookup") for events in SIZES}
    threaded = _cpu(SIZES[-1], "lookup_sync").tool_steps(1)
    one_step = _one_step_turns(SIZES[-1])
    small, large = stamps[SIZES[0]].tool_steps(1), stamps[SIZES[-1]].tool_steps(1)
    per_step = median(large) / 1000
    growth = median(large) / median(small)
    low, high = bootstrap_interval(_ratio_of_medians, [large, small])
    grows = True if high <= GROWTH_TARGET else False if low > GROWTH_TARGET else None
    verdict = False if per_step > CPU_TARGET_US else grows
    wall = stamps[SIZES[-1]].tool_steps(0)
    return [
        {
            "id": "loop.cpu_per_tool_step",
            "title": "the loop's CPU per tool step, session of 10^4 events (detached, scripted "
            "model, async tool)",
            "statistic": f"median of {len(large)} tool steps' process CPU time ({CPU_TURNS} turns "
            f"of {STEPS} tool steps; the first step of each turn left out)",
            "value": round(per_step, 1),
            "unit": "µs/step",
            "baseline": {
                "name": "the same at 10^2 events",
                "value": round(median(small) / 1000, 1),
                "unit": "µs/step",
            },
            "ratio": round(growth, 3),
            "target": {
                "text": f"≤ {CPU_TARGET_US:g} µs and ≤ {GROWTH_TARGET:g}× from 10^2 to 10^4",
                "max_ratio": GROWTH_TARGET,
            },
            "met": verdict,
            "figures": {
                "ratio 95% interval, low": fig(low, "×"),
                "ratio 95% interval, high": fig(high, "×"),
                "wall time per tool step, 10^4": fig(median(wall) / 1000, "µs/step"),
                "with a synchronous tool (worker thread), 10^4": fig(
                    median(threaded) / 1000, "µs/step"
                ),
                "turn: prompt, one tool step, final answer, 10^4": fig(
                    median(one_step) / 1000, "µs/turn"
                ),
            },
            "notes": "Process CPU time, in one process; includes the Scripted provider's "
            "streaming (per answer 11 chunks: a text block of 7 word deltas, the tool call, "
            "finish) and the invariant companion the agent installs.",
        }
    ]


# --- 2. the durable tool step ----------------------------------------------------------------


@contextmanager
def _threaded_writes(threaded: bool) -> Iterator[None]:
    """The durable write always in a worker thread (a variant, for comparison)."""
    alone = checkpoint._ALONE
    checkpoint._ALONE = -1 if threaded else alone
    try:
        yield
    finally:
        checkpoint._ALONE = alone


@dataclass(slots=True)
class _Round:
    """One measurement round: the loop's tool steps, the threaded variant's, and the raw
    baseline's, run back to back on the same file system (the pairing of the ratio)."""

    steps: list[int] = field(default_factory=list)
    threaded: list[int] = field(default_factory=list)
    raw: list[int] = field(default_factory=list)
    hand: list[int] = field(default_factory=list)

    def ratio(self) -> float:
        return median(self.steps) / median(self.raw)


@contextmanager
def _raw_checkpoints(fd: int) -> Iterator[None]:
    """Every checkpoint of a memory-stored session also writes its lines to ``fd`` and syncs."""
    close = checkpoint.Checkpoints.close
    written: dict[str, int] = {}

    def raw_close(self: checkpoint.Checkpoints) -> None:
        close(self)
        session = self._session
        events = session.events
        start = written.get(session.id, 0)
        if start < len(events):
            os.write(fd, b"".join(orjson.dumps(e) + b"\n" for e in events[start:]))
            os.fdatasync(fd)
            written[session.id] = len(events)

    checkpoint.Checkpoints.close = raw_close  # type: ignore[method-assign]
    try:
        yield
    finally:
        checkpoint.Checkpoints.close = close  # type: ignore[method-assign]


def _durable(url: str, raw_path: Path) -> tuple[list[_Round], list[list[bytes]]]:
    """Paired rounds of tool-step wall times on an attached session; and the bytes of one
    step, grouped as the baseline writes them.

    Each round runs one turn of the loop as it is, one turn with every write handed to a worker
    thread, and as many raw steps as a turn has measured steps, in an order that rotates from
    round to round, so that the baseline sees the same disk and the same machine load as the
    turns it is compared with.
    """
    with (
        open_store(url) as store,
        store.create("bench") as session,
        open_store("memory:") as memory,
        memory.create("hand") as hand_session,
    ):
        agent = Agent(session, _model(DURABLE_STEPS, "lookup"), tools=[lookup])
        hand_agent = Agent(hand_session, _model(DURABLE_STEPS, "lookup"), tools=[lookup])
        asyncio.run(agent.run("Warm up."))
        asyncio.run(hand_agent.run("Warm up."))
        groups = _step_groups(session)
        blobs = [b"".join(group) for group in groups]
        rounds = [_Round() for _ in range(DURABLE_TURNS)]
        fd = os.open(raw_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)

        async def hand_turn(samples: list[int]) -> None:
            stamps = _Stamps(hand_session, DURABLE_STEPS)
            with _raw_checkpoints(fd):
                await hand_agent.run("Look up ten keys.")
            stamps.remove()
            samples.extend(stamps.tool_steps(0))

        async def turn(samples: list[int], threaded: bool) -> None:
            stamps = _Stamps(session, DURABLE_STEPS)
            with _threaded_writes(threaded):
                await agent.run("Look up ten keys.")
            stamps.remove()
            samples.extend(stamps.tool_steps(0))

        def raw(samples: list[int]) -> None:
            for _ in range(DURABLE_STEPS - 1):
                start = now_ns()
                for blob in blobs:
                    os.write(fd, blob)
                    os.fdatasync(fd)
                samples.append(now_ns() - start)

        async def measure() -> None:
            for index, sample in enumerate(rounds):
                parts = ["steps", "threaded", "raw", "hand"]
                for part in parts[index % 4 :] + parts[: index % 4]:
                    if part == "raw":
                        raw(sample.raw)
                    elif part == "hand":
                        await hand_turn(sample.hand)
                    else:
                        await turn(getattr(sample, part), part == "threaded")

        try:
            with quiet_gc():
                asyncio.run(measure())
        finally:
            os.close(fd)
    return rounds, groups


def _step_groups(session: Session) -> list[list[bytes]]:
    """The JSON lines of the last whole tool step, in its three durable writes."""
    events = list(session.events)
    starts = [i for i, e in enumerate(events) if e.type == "step/start"]
    step = events[starts[-3] : starts[-2]]
    lines = [orjson.dumps(e.to_wire()) + b"\n" for e in step]
    call = [e.type for e in step].index("tool/call")
    # before the request: step/start; before the tool: the answer and its call; the step's end
    return [lines[: call - 1], lines[call - 1 : call + 1], lines[call + 1 :]]


WRITES: Final = 300


def _writes(url: str, raw_path: Path) -> dict[str, list[int]]:
    """One checkpoint's durable write (two events), three ways, write by write: on the loop's
    thread, handed to a worker thread, and a raw ``write`` + ``fdatasync`` of the same lines."""
    times: dict[str, list[int]] = {"loop": [], "thread": [], "raw": []}
    with open_store(url) as store, store.create("writes") as session:
        checkpoints = checkpoint.Checkpoints(session)
        fd = os.open(raw_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)

        async def measure() -> None:
            turn = 0
            lines = b""
            for index in range(3 * WRITES):
                way = ("loop", "thread", "raw")[index % 3]
                if way == "raw":
                    start = now_ns()
                    os.write(fd, lines)
                    os.fdatasync(fd)
                    times[way].append(now_ns() - start)
                    continue
                turn += 1
                checkpoints.append("turn/start", {"turn": turn})
                checkpoints.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
                with _threaded_writes(way == "thread"):
                    start = now_ns()
                    await checkpoints.durable()
                    times[way].append(now_ns() - start)
                lines = b"".join(orjson.dumps(e.to_wire()) + b"\n" for e in session.events[-2:])

        try:
            with quiet_gc():
                asyncio.run(measure())
        finally:
            os.close(fd)
    return times


def bench_durable(directory: Path) -> list[Benchmark]:
    benchmarks: list[Benchmark] = []
    for backend in ("jsonl", "sqlite"):

        def url(name: str, backend: str = backend) -> str:
            if backend == "sqlite":
                return f"sqlite:///{directory}/{name}.db"
            return f"jsonl:///{directory}/{name}"

        rounds, groups = _durable(url(backend), directory / f"{backend}.raw")
        subject = [gap for sample in rounds for gap in sample.steps]
        threaded = [gap for sample in rounds for gap in sample.threaded]
        baseline = [gap for sample in rounds for gap in sample.raw]
        hand = [gap for sample in rounds for gap in sample.hand]
        hand_ratio = median([median(sample.steps) / median(sample.hand) for sample in rounds])
        writes = _writes(url(f"{backend}-writes"), directory / f"{backend}-writes.raw")
        ratios = [sample.ratio() for sample in rounds]
        ratio = median(ratios)
        low, high = bootstrap_interval(lambda sets: median(sets[0]), [ratios])
        met = True if high <= DURABLE_TARGET else False if low > DURABLE_TARGET else None
        benchmarks.append(
            {
                "id": f"loop.durable_tool_step.{backend}",
                "title": f"durable tool step (the checkpoint policy's writes), {backend}",
                "statistic": f"median of {len(subject)} tool steps' wall time ({DURABLE_TURNS} "
                f"turns of {DURABLE_STEPS}; the first step of each turn left out); ratio: the "
                f"median over {DURABLE_TURNS} paired rounds of (the round's median step / the "
                "same round's median baseline step)",
                "value": round(median(subject) / 1e6, 4),
                "unit": "ms/step",
                "baseline": {
                    "name": "3 × (os.write + os.fdatasync) of the step's bytes, grouped as the "
                    "checkpoints write them",
                    "value": round(median(baseline) / 1e6, 4),
                    "unit": "ms/step",
                },
                "ratio": round(ratio, 3),
                "target": {
                    "text": f"≤ {DURABLE_TARGET:g}× (design target: ≤ 3.3× one raw fsync)",
                    "max_ratio": DURABLE_TARGET,
                },
                "met": met,
                "figures": {
                    "ratio 95% interval, low": fig(low, "×"),
                    "ratio 95% interval, high": fig(high, "×"),
                    "ratio of the overall medians": fig(median(subject) / median(baseline), "×"),
                    "bytes per step": fig(sum(len(line) for g in groups for line in g), "B"),
                    "with every write in a worker thread (same run)": fig(
                        median(threaded) / 1e6, "ms/step"
                    ),
                    "hand-rolled durable loop: the same agent on a memory store, one raw "
                    "write + fdatasync per checkpoint (same run)": fig(
                        median(hand) / 1e6, "ms/step"
                    ),
                    "ratio to the hand-rolled durable loop (median of paired rounds)": fig(
                        hand_ratio, "×"
                    ),
                    "one durable write on the loop's thread": fig(
                        median(writes["loop"]) / 1000, "µs"
                    ),
                    "one durable write handed to a worker thread": fig(
                        median(writes["thread"]) / 1000, "µs"
                    ),
                    "one raw write + fdatasync (interleaved with the two above)": fig(
                        median(writes["raw"]) / 1000, "µs"
                    ),
                },
                "notes": "Async tool; the store and the baseline file in one temporary directory. "
                "The loop makes a tool step durable in two writes (before the request, with the "
                "previous step's end; before the tool body); the baseline is the target's three "
                "raw write + fdatasync of the same bytes.",
            }
        )
    return benchmarks


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agentlog-bench-loop-") as tmp:
        durable = bench_durable(Path(tmp))
    return {"benchmarks": [*bench_cpu(), *durable]}
