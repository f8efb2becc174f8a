"""The store contract: what every backend must do, as scenarios (STYLE.md §20).

A backend's test module subclasses ``StoreContract`` once (``class TestSqlite(StoreContract)``)
and says how to open a store over a location (``make_store``), how to write a log as a foreign
writer would (``make_backend``) and how to snapshot what is stored (``stored_state``, compared
to prove that an operation wrote nothing). A new store is done when the suite passes.

The scenarios are spec/persistence.md §2.9 (both lists) and §8, adapted to agentlog's API
(``Store.create/open/inspect/list/fork``, attached sessions, write-behind with ``flush``), plus
the reliability requirements of DESIGN.md: crash recovery through repair closers, hostile
session ids and data. (Writers killed with ``SIGKILL`` and two writers racing are
``test_crash.py`` and ``test_concurrency.py``.) Every session runs under the invariant
companion (``tests/conftest.py``), so the logs here have real turn and step structure.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agentlog import (
    AgentlogError,
    EventRejected,
    InvariantError,
    SeedRejected,
    Session,
    SessionForkError,
    build_fork_seed,
    check_invariants,
    check_provider_history,
    open_turn_closers,
    thaw,
)
from agentlog import messages as m
from agentlog.aio import AsyncSession
from agentlog.errors import (
    CorruptLog,
    FormatVersionError,
    SessionAlreadyExists,
    SessionLocked,
    SessionNotFound,
    StoreError,
)
from agentlog.stores import Backend, SessionInfo, Store
from tests.values.support import needs_accelerator

_T = TypeVar("_T")

ROOT = Path(__file__).resolve().parents[2]
CLOCK = 1_700_000_000_000
"""The time of every event the contract's stores write."""
PROVIDER, MODEL = "scripted", "test-model"
CWD = "/work/project"

NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is "
    "still needed."
)
OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external "
    "state or ask the user. Do not retry blindly."
)

_HOLDER = """
import sys, time
sys.path.insert(0, sys.argv[2])
from agentlog.stores import open_store
store = open_store(sys.argv[1])
session = store.create("s1")
session.append("turn/start", {"turn": 1})
session.append("step/start", {"turn": 1, "step": 1})
print("holding", flush=True)
time.sleep(60)
"""
"""A writer in another process: it creates ``s1``, appends, and holds it until killed."""

_FILLER = """
import hashlib, json, os, resource, signal, sys
sys.path.insert(0, sys.argv[3])
from pathlib import Path
from agentlog import messages as m, thaw
from agentlog.stores import open_backend, open_store

def state():
    # The stored events, and the bytes of every file but SQLite's WAL and shared memory (a
    # failed transaction may leave uncommitted frames in the WAL, which no reader ever reads).
    files = [p for p in Path(sys.argv[2]).rglob("*") if p.is_file() and ".locks" not in str(p)]
    digests = {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in files
        if not p.name.endswith(("-wal", "-shm"))
    }
    backend = open_backend(sys.argv[1])
    try:
        return [digests, [thaw(event) for event in backend.read("s1").events]]
    finally:
        backend.close()

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of the signal
store = open_store(sys.argv[1])
session = store.create("s1")
session.append("turn/start", {"turn": 1})
session.append("user/message", m.user("short"), surface_op="append")
big = m.user(os.urandom(150_000).hex())  # incompressible: no store can make it small
largest = max(p.stat().st_size for p in Path(sys.argv[2]).rglob("*") if p.is_file())
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
before = state()
resource.setrlimit(resource.RLIMIT_FSIZE, (largest + 4096, hard))
try:
    session.append("user/message", big, surface_op="append")
except Exception as exc:
    cause = next((c for c in ("disk full", "file too large", "I/O error") if c in str(exc)), None)
    report = {"error": type(exc).__name__, "message": str(exc), "cause": cause}
else:
    report = {"error": None}
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
report.update(seq=session.seq, state=state(), state_before=before)
print(json.dumps(report), flush=True)
session.append("user/message", big, surface_op="append")
session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
print(json.dumps({"seq": session.seq}), flush=True)
session.close()
store.close()
"""
"""A writer that hits a real write failure (RLIMIT_FSIZE), reports it, then goes on."""

HOSTILE_IDS = (
    "../x",
    "../../escape",
    "/abs",
    "/",
    "a/b",
    ".",
    "..",
    "...",
    "a\\b",
    "..\\x",
    "C:\\x",
    "~",
    "~002E",
    " ",
    "-",
    "*",
    "?",
    "[a]",
    "%2e%2e",
    "é",
    "😀",
    "x" * 200,
    "é" * 127,
)
"""Ids that must stay inside the store: separators, dot segments, escapes, globs, non-ASCII."""

INVALID_IDS = ("", "a\x00b", "\x00", "\ud800", "a\ud800b", "\n", "tab\t", "x" * 256, "é" * 128)
"""Ids no store accepts (the one session-id rule: ``agentlog.session.check_session_id``)."""


def clock() -> int:
    return CLOCK


def wire(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Plain wire dicts of events (``Event``s or dicts), for comparisons."""
    return [{key: thaw(value) for key, value in event.items()} for event in events]


def end_seed(seq: int) -> dict[str, Any]:
    """The ordinary ``session/end-seed`` marker a resumed session gets."""
    return {"type": "session/end-seed", "seq": seq, "time": CLOCK, "data": {}}


# --- logs an agent writes ---------------------------------------------------------------------


def start_turn(s: Session, turn: int, prompt: str = "list the files") -> None:
    """``turn/start``, ``step/start`` and the user's prompt."""
    s.append("turn/start", {"turn": turn})
    s.append("step/start", {"turn": turn, "step": 1})
    s.append("user/message", m.user(f"{prompt} ({turn})", id=f"u{turn}"), surface_op="append")


def ask_tools(s: Session, turn: int, step: int, *call_ids: str) -> None:
    """An assistant message calling tools ``call_ids``."""
    content = [m.text("let me look"), *(m.tool_call(c, "bash", '{"cmd":"ls"}') for c in call_ids)]
    s.append(
        "assistant/message",
        m.assistant(
            content, provider=PROVIDER, model=MODEL, turn=turn, step=step, id=f"a{turn}.{step}"
        ),
        surface_op="append",
    )


def run_tool(s: Session, turn: int, step: int, call_id: str, *, answer: bool = True) -> int:
    """``tool/call`` for ``call_id`` and (unless ``answer`` is false) its ``tool/result``."""
    call = s.append(
        "tool/call",
        {"turn": turn, "step": step, "callId": call_id, "name": "bash", "arguments": "{}"},
    )
    if answer:
        s.append(
            "tool/result",
            m.tool_result(call_id, f"output of {call_id}", turn=turn, step=step, id=f"r-{call_id}"),
            surface_op="append",
            source_event_seqs=[call.seq],
        )
    return call.seq


def one_turn(s: Session, turn: int = 1) -> None:
    """A complete turn: prompt, a tool call and its result, then the answer in a second step."""
    start_turn(s, turn)
    ask_tools(s, turn, 1, f"call-{turn}")
    run_tool(s, turn, 1, f"call-{turn}")
    s.append("step/end", {"turn": turn, "step": 1})
    s.append("step/start", {"turn": turn, "step": 2})
    s.append(
        "assistant/message",
        m.assistant(
            "README.md is there", provider=PROVIDER, model=MODEL, turn=turn, step=2, id=f"b{turn}"
        ),
        surface_op="append",
    )
    s.append("step/end", {"turn": turn, "step": 2})
    s.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def foreign_header(session_id: str, **fields: Any) -> dict[str, Any]:
    """A format-4 header as another writer would store it."""
    header = {"version": 4, "id": session_id, "createdAt": CLOCK, "isSeeded": False}
    header["delegationDepth"] = 0
    header.update(fields)
    return header


def foreign_turn(*middle: dict[str, Any]) -> list[dict[str, Any]]:
    """A complete turn as wire dicts, with ``middle`` events (seqs filled in) inside it."""
    end = {"type": "turn/end", "time": CLOCK, "data": {"turn": 1, "reason": {"kind": "completed"}}}
    events = [{"type": "turn/start", "time": CLOCK, "data": {"turn": 1}}, *middle, end]
    return [{**event, "seq": seq} for seq, event in enumerate(events)]


class StoreContract(ABC):
    """Scenarios every store passes; subclass once per backend and implement the hooks."""

    # --- hooks -----------------------------------------------------------------------------

    @abstractmethod
    def make_store(self, tmp_path: Path, **options: Any) -> Store:
        """A new store over the location of this test (every call: the same location)."""

    @abstractmethod
    def make_backend(self, tmp_path: Path) -> Backend:
        """The raw backend of that location, to store logs as a foreign writer would."""

    @abstractmethod
    def stored_state(self, tmp_path: Path) -> object:
        """Everything stored at the location (bytes, rows), to prove nothing was written."""

    def session_location(self, tmp_path: Path, session_id: str) -> str | None:
        """The file that holds this one session, for stores with a file per session."""
        return None

    def raw_location(self, tmp_path: Path, session_id: str) -> str | None:
        """The file a refusal names as the raw log, when the store has one."""
        return self.session_location(tmp_path, session_id)

    def tear_tail(self, tmp_path: Path, session_id: str) -> bool:
        """Leave what a crash mid-write leaves at the end of the log; ``False``: cannot."""
        return False

    def store_url(self, tmp_path: Path) -> str | None:
        """The URL another process opens this location with; ``None``: it cannot."""
        return None

    def damage(self, tmp_path: Path, session_id: str, seq: int) -> bool:
        """Damage the stored record of ``seq`` (bytes no reader accepts); ``False``: cannot."""
        return False

    def assert_contained(self, tmp_path: Path) -> None:  # noqa: B027  # optional hook
        """Check that nothing was written outside the store's own location."""

    def assert_names_lock(self, refused: SessionLocked) -> None:
        """Check a ``SessionLocked`` from another process names the lock (default: its file)."""
        assert refused.path is not None
        assert f'(lock "{refused.path}")' in str(refused)
        assert Path(refused.path).exists()

    def kept_copy_exists(self, saved_to: str) -> bool:
        """Whether ``RepairResult.saved_to`` names a copy that exists (default: a file)."""
        return Path(saved_to).is_file()

    # --- fixtures --------------------------------------------------------------------------

    @pytest.fixture
    def stores(self, tmp_path: Path) -> Iterator[Callable[..., Store]]:
        """Open stores over this test's location (fixed clock); all closed at the end."""
        opened: list[Store] = []

        def open_one(**options: Any) -> Store:
            store = self.make_store(tmp_path, **{"clock": clock, **options})
            opened.append(store)
            return store

        yield open_one
        for store in reversed(opened):
            store.close()

    @pytest.fixture
    def store(self, stores: Callable[..., Store]) -> Store:
        return stores()

    def write_foreign(
        self, tmp_path: Path, header: Mapping[str, Any], events: Sequence[Mapping[str, Any]]
    ) -> None:
        """Store ``events`` under ``header`` straight through the backend (no checks at all)."""
        backend = self.make_backend(tmp_path)
        lease = backend.lease(header["id"])
        try:
            backend.append(lease, header, events, next_seq=0)
        finally:
            lease.release()
            backend.close()

    # --- round trip, creation, lookup ------------------------------------------------------

    def test_round_trip_keeps_header_and_events(
        self, stores: Callable[..., Store], store: Store
    ) -> None:
        session = store.create("s1", cwd=CWD)
        one_turn(session)
        ignorable = session.append("vendor/note", {"x": 1}, ignorable=True)
        session.close()
        reopened = stores().open("s1")
        assert dict(reopened.header) == dict(session.header)
        assert reopened.header["version"] == 4
        assert reopened.header["cwd"] == CWD
        assert wire(reopened.events) == [*wire(session.events), end_seed(session.seq)]
        assert reopened.event_at(ignorable.seq).ignorable is True
        assert reopened.derive_messages() == session.derive_messages()

    def test_created_session_is_stored_only_from_its_first_append(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        empty = self.stored_state(tmp_path)
        session = store.create("lazy", cwd=CWD)
        assert store.list() == []
        assert self.stored_state(tmp_path) == empty
        with pytest.raises(SessionNotFound, match=r'^session "lazy" not found$'):
            stores().open("lazy")
        session.append("turn/start", {"turn": 1})
        assert [info.id for info in store.list()] == ["lazy"]
        assert self.stored_state(tmp_path) != empty

    def test_closing_a_created_session_without_appends_stores_nothing(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        empty = self.stored_state(tmp_path)
        store.create("never").close()
        store.close()
        assert self.stored_state(tmp_path) == empty
        again = stores()
        assert again.list() == []
        again.create("never").close()  # the id was never taken

    def test_creating_a_taken_id_is_refused(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        live = store.create("live")
        with pytest.raises(SessionAlreadyExists, match=r'^session "live" already exists$'):
            store.create("live")
        one_turn(live)
        live.close()
        with pytest.raises(SessionAlreadyExists, match=r'^session "live" already exists$'):
            store.create("live")
        state = self.stored_state(tmp_path)
        with pytest.raises(SessionAlreadyExists) as refused:
            stores().create("live")
        assert refused.value.session_id == "live"
        assert self.stored_state(tmp_path) == state

    def test_opening_or_inspecting_a_missing_id_is_refused(self, store: Store) -> None:
        with pytest.raises(SessionNotFound, match=r'^session "nope" not found$') as refused:
            store.open("nope")
        assert refused.value.session_id == "nope"
        with pytest.raises(SessionNotFound, match=r'^session "nope" not found$'):
            store.inspect("nope")

    def test_a_session_has_one_writer_per_store(self, store: Store) -> None:
        created = store.create("s1")
        with pytest.raises(SessionLocked, match=r'^session "s1" is already open for writing'):
            store.open("s1")
        one_turn(created)
        with pytest.raises(SessionLocked):
            store.open("s1")
        created.close()
        opened = store.open("s1")
        with pytest.raises(SessionLocked):
            store.open("s1")
        opened.close()
        store.open("s1").close()

    def test_list_reports_id_creation_time_cwd_and_parent(
        self, stores: Callable[..., Store]
    ) -> None:
        times = iter(range(CLOCK, CLOCK + 1000))
        store = stores(clock=lambda: next(times))
        with store.create("b-project", cwd=CWD) as session:
            one_turn(session)
        with store.create("a-nowhere") as session:
            session.append("turn/start", {"turn": 1})
        store.fork("b-project", child_id="c-child").close()
        infos = {info.id: info for info in stores().list()}
        assert set(infos) == {"a-nowhere", "b-project", "c-child"}
        assert infos["b-project"].cwd == CWD
        assert infos["b-project"].parent_session is None
        assert infos["a-nowhere"].cwd is None
        assert infos["c-child"].parent_session == "b-project"
        assert infos["c-child"].cwd == CWD
        assert all(info.version == 4 for info in infos.values())
        assert infos["b-project"].created_at < infos["a-nowhere"].created_at
        assert [info.id for info in stores().list()] == ["b-project", "a-nowhere", "c-child"]

    def test_list_page_filters_and_pages_in_creation_order(
        self, stores: Callable[..., Store]
    ) -> None:
        ticks = itertools.count(CLOCK, 1000)
        store = stores(clock=lambda: next(ticks))
        for index in range(7):
            cwd = CWD if index % 2 == 0 else "/elsewhere"
            with store.create(f"s{index}", cwd=cwd) as session:
                session.append("turn/start", {"turn": 1})
        first = store.list_page(limit=3)
        assert [info.id for info in first.sessions] == ["s0", "s1", "s2"]
        assert first.cursor is not None
        second = store.list_page(limit=3, cursor=first.cursor)
        third = store.list_page(limit=3, cursor=second.cursor)
        assert [info.id for info in second.sessions] == ["s3", "s4", "s5"]
        assert ([info.id for info in third.sessions], third.cursor) == (["s6"], None)
        here = store.list_page(cwd=CWD, limit=100)
        assert [info.id for info in here.sessions] == ["s0", "s2", "s4", "s6"]
        assert here.cursor is None
        # The last change is the last event's time (SQL, memory: the store's clock, so every
        # session here changed before the next was created) or the file's mtime (JSONL).
        infos = store.list()

        def changed(info: SessionInfo) -> int:
            return info.created_at if info.updated_at is None else info.updated_at

        since = changed(infos[4])
        recent = store.list_page(updated_since=since)
        assert [info.id for info in recent.sessions] == [
            info.id for info in infos if changed(info) >= since
        ]
        assert {"s4", "s5", "s6"} <= {info.id for info in recent.sessions}
        if infos[0].updated_at is not None and infos[0].updated_at < infos[1].created_at:
            assert [info.id for info in recent.sessions] == ["s4", "s5", "s6"]
        assert store.list_page(cwd="/nowhere").sessions == ()
        for bad in (0, 10_001, 2.5):
            with pytest.raises(StoreError, match="limit must be an integer"):
                store.list_page(limit=bad)  # type: ignore[arg-type]  # the point
        with pytest.raises(StoreError, match="not a list_page cursor"):
            store.list_page(cursor="nonsense")

    # --- crash recovery --------------------------------------------------------------------

    def crashed_in_turn_two(self, store: Store) -> Session:
        """A stored log whose writer died after ``turn/start`` + ``step/start`` of turn 2."""
        session = store.create("crashed", cwd=CWD)
        one_turn(session)
        session.append("turn/start", {"turn": 2})
        session.append("step/start", {"turn": 2, "step": 1})
        session.close()  # closing adds nothing: the stored log is what a crash leaves
        return session

    def test_inspect_closes_an_interrupted_turn_in_memory_only(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        crashed = self.crashed_in_turn_two(store)
        n = crashed.seq
        before = self.stored_state(tmp_path)
        view = stores().inspect("crashed")
        assert wire(view.events) == [
            *wire(crashed.events),
            {"type": "step/end", "seq": n, "time": CLOCK, "data": {"turn": 2, "step": 1}},
            {
                "type": "turn/end",
                "seq": n + 1,
                "time": CLOCK,
                "data": {"turn": 2, "reason": {"kind": "interrupted"}},
            },
            end_seed(n + 2),
        ]
        assert self.stored_state(tmp_path) == before
        assert wire(stores().inspect("crashed").events) == wire(view.events)

    def test_open_persists_the_closers_once(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        crashed = self.crashed_in_turn_two(store)
        n = crashed.seq
        expected = wire(stores().inspect("crashed").events)
        before = self.stored_state(tmp_path)
        resumed = stores().open("crashed")
        assert wire(resumed.events) == expected
        assert self.stored_state(tmp_path) != before
        resumed.close()
        repaired = self.stored_state(tmp_path)
        # what was written is the repair: a fresh store reads the closers and the marker back
        again = stores().open("crashed")
        assert wire(again.events) == expected
        again.close()
        assert self.stored_state(tmp_path) == repaired
        check_invariants(again.events)
        assert again.event_at(n + 1)["data"]["reason"] == {"kind": "interrupted"}

    def test_resumed_session_continues_after_the_repair(
        self, stores: Callable[..., Store], store: Store
    ) -> None:
        self.crashed_in_turn_two(store)
        with stores().open("crashed") as resumed:
            first_new = resumed.seq
            one_turn(resumed, 3)
        with stores().open("crashed") as reopened:
            events = reopened.events
            assert [event.seq for event in events] == list(range(len(events)))
            assert events[first_new].type == "turn/start"
            assert events[first_new - 1].type == "session/end-seed"
            check_invariants(events)
            check_provider_history(reopened.derive_messages())

    def test_unanswered_tool_calls_get_error_results(
        self, stores: Callable[..., Store], store: Store
    ) -> None:
        session = store.create("tools")
        start_turn(session, 1)
        ask_tools(session, 1, 1, "recorded", "unrecorded")
        call_seq = run_tool(session, 1, 1, "recorded", answer=False)
        session.close()
        n = session.seq
        resumed = stores().open("tools")
        closers = wire(resumed.events)[n:]
        assert closers == [
            {
                "type": "tool/result",
                "seq": n,
                "time": CLOCK,
                "data": {
                    "turn": 1,
                    "step": 1,
                    "message": {
                        "id": f"interrupted-tool-result-recorded-{n}",
                        "role": "tool",
                        "toolCallId": "recorded",
                        "isError": True,
                        "source": {"kind": "tool", "callId": "recorded"},
                        "content": [{"type": "text", "text": OUTCOME_UNKNOWN_TEXT}],
                    },
                    "error": {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"},
                },
                "surfaceOp": "append",
                "sourceEventSeqs": [call_seq],
            },
            {
                "type": "tool/result",
                "seq": n + 1,
                "time": CLOCK,
                "data": {
                    "turn": 1,
                    "step": 1,
                    "message": {
                        "id": f"interrupted-tool-result-unrecorded-{n + 1}",
                        "role": "tool",
                        "toolCallId": "unrecorded",
                        "isError": True,
                        "source": {"kind": "tool", "callId": "unrecorded"},
                        "content": [{"type": "text", "text": NOT_STARTED_TEXT}],
                    },
                    "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"},
                },
                "surfaceOp": "append",
            },
            {"type": "step/end", "seq": n + 2, "time": CLOCK, "data": {"turn": 1, "step": 1}},
            {
                "type": "turn/end",
                "seq": n + 3,
                "time": CLOCK,
                "data": {"turn": 1, "reason": {"kind": "interrupted"}},
            },
            end_seed(n + 4),
        ]
        history = resumed.derive_messages()
        check_provider_history(history)
        assert [message["role"] for message in history] == ["user", "assistant", "tool", "tool"]
        assert [message["toolCallId"] for message in history[2:]] == ["recorded", "unrecorded"]

    def test_torn_tail_is_dropped_only_when_opened(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        crashed = self.crashed_in_turn_two(store)
        if not self.tear_tail(tmp_path, "crashed"):
            pytest.skip("this store cannot be left with a torn tail")
        torn = self.stored_state(tmp_path)
        view = stores().inspect("crashed")
        assert wire(view.events)[: crashed.seq] == wire(crashed.events)
        assert self.stored_state(tmp_path) == torn
        with stores().open("crashed") as resumed:
            assert wire(resumed.events) == wire(view.events)
            resumed.append("turn/start", {"turn": 3})
            assert resumed.event_at(resumed.seq - 1).seq == len(view.events)
        with stores().open("crashed") as reopened:
            assert wire(reopened.events)[: len(view.events)] == wire(view.events)
            check_invariants(reopened.events)

    # --- the trusted read (read_raw) ------------------------------------------------------

    RAW_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})

    def test_read_raw_gives_the_asked_events_plain_and_names_the_others(
        self, stores: Callable[..., Store], store: Store
    ) -> None:
        with store.create("s1", cwd=CWD) as session:
            one_turn(session)
            session.append("vendor/note", {"x": 1}, ignorable=True)
            one_turn(session, 2)
        expected = [event for event in wire(session.events) if event["type"] in self.RAW_TYPES]
        raw = stores().read_raw("s1", self.RAW_TYPES)
        assert raw.events == expected
        assert raw.last_seqs == {event.type: event.seq for event in session.events}
        assert raw.count == session.seq
        assert (raw.header["id"], raw.header["version"], raw.header["cwd"]) == ("s1", 4, CWD)
        assert raw.torn is False
        # Fresh plain JSON, the caller's own: changing it changes no later read.
        message = raw.events[0]["data"]
        assert type(message) is dict
        assert type(message["content"]) is list
        message["content"].append({"type": "text", "text": "mine"})
        assert stores().read_raw("s1", self.RAW_TYPES).events == expected
        nothing = stores().read_raw("s1", ())
        assert (nothing.events, nothing.count) == ([], session.seq)
        with pytest.raises(SessionNotFound):
            stores().read_raw("missing", self.RAW_TYPES)

    def test_read_raw_refuses_damage_in_a_payload_it_reads(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        with store.create("s1") as session:
            one_turn(session, 1)
            one_turn(session, 2)
        if not self.damage(tmp_path, "s1", 3):  # the first assistant/message
            pytest.skip("this store cannot hold damaged records")
        with pytest.raises(CorruptLog) as refused:
            stores().read_raw("s1", self.RAW_TYPES)
        assert (refused.value.session_id, refused.value.seq) == ("s1", 3)

    def test_read_raw_reports_a_torn_tail_and_leaves_it(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        crashed = self.crashed_in_turn_two(store)
        if not self.tear_tail(tmp_path, "crashed"):
            pytest.skip("this store cannot be left with a torn tail")
        torn = self.stored_state(tmp_path)
        raw = stores().read_raw("crashed", self.RAW_TYPES)
        assert raw.torn is True
        assert raw.count == crashed.seq
        assert raw.events == [e for e in wire(crashed.events) if e["type"] in self.RAW_TYPES]
        assert self.stored_state(tmp_path) == torn

    # --- the version and vocabulary gates --------------------------------------------------

    def test_an_undeclared_event_type_refuses_the_log(
        self, tmp_path: Path, stores: Callable[..., Store]
    ) -> None:
        future = {"type": "future/contract-event", "time": CLOCK, "data": {"a": 1}}
        self.write_foreign(tmp_path, foreign_header("future"), foreign_turn(future))
        state = self.stored_state(tmp_path)
        text = (
            'session "future" contains event type "future/contract-event" (seq 1) unknown to this '
            "harness and not marked ignorable; refusing to interpret the log — it was likely "
            "written by a newer harness"
        )
        location = self.raw_location(tmp_path, "future")
        if location is not None:
            text += f' (raw log: "{location}")'
        store = stores()
        for operation in (store.open, store.inspect, store.open, stores().open):
            with pytest.raises(FormatVersionError) as refused:
                operation("future")
            assert str(refused.value) == text
        with pytest.raises(FormatVersionError):
            store.fork("future", child_id="child")
        assert self.stored_state(tmp_path) == state

    def test_an_ignorable_unknown_event_is_kept(
        self, tmp_path: Path, stores: Callable[..., Store]
    ) -> None:
        future = {"type": "future/contract-event", "time": CLOCK, "data": None, "ignorable": True}
        events = foreign_turn(future)
        self.write_foreign(tmp_path, foreign_header("future"), events)
        with stores().open("future") as resumed:
            assert wire(resumed.events) == [*events, end_seed(len(events))]
            one_turn(resumed, 2)
        check_invariants(stores().inspect("future").events)

    @pytest.mark.parametrize("version", [5, 99])
    def test_a_newer_format_version_is_refused(
        self, tmp_path: Path, stores: Callable[..., Store], version: int
    ) -> None:
        self.write_foreign(tmp_path, foreign_header("newer", version=version), foreign_turn())
        state = self.stored_state(tmp_path)
        text = (
            f'session "newer" uses log format v{version}, but this build reads up to v4: the log '
            "was written by a newer harness — upgrade agentlog to open it"
        )
        location = self.raw_location(tmp_path, "newer")
        if location is not None:
            text += f' (raw log: "{location}")'
        store = stores()
        for operation in (store.open, store.inspect, store.open):
            with pytest.raises(FormatVersionError) as refused:
                operation("newer")
            assert str(refused.value) == text
            assert refused.value.version == version
        assert [(info.id, info.version) for info in store.list()] == [("newer", version)]
        assert self.stored_state(tmp_path) == state

    def test_a_negative_format_version_is_refused(
        self, tmp_path: Path, stores: Callable[..., Store]
    ) -> None:
        self.write_foreign(tmp_path, foreign_header("odd", version=-1), foreign_turn())
        with pytest.raises(
            FormatVersionError, match="uses log format v-1, older than the supported v4"
        ):
            stores().open("odd")

    def test_an_invalid_stored_event_is_reported_where_it_is(
        self, tmp_path: Path, stores: Callable[..., Store]
    ) -> None:
        bad = {"type": "user/message", "time": CLOCK, "data": {"role": "user"}}
        self.write_foreign(
            tmp_path, foreign_header("bad"), foreign_turn({**bad, "surfaceOp": "append"})
        )
        state = self.stored_state(tmp_path)
        location = self.session_location(tmp_path, "bad")
        where = f'"{location}" line 3' if location is not None else "seq 1"
        for operation in (stores().open, stores().inspect, stores().open):
            with pytest.raises(CorruptLog) as refused:
                operation("bad")
            assert str(refused.value).startswith(
                f'stored session "bad" failed validation at {where}: '
            )
            assert refused.value.session_id == "bad"
        assert self.stored_state(tmp_path) == state

    def test_an_invalid_stored_header_is_reported(
        self, tmp_path: Path, stores: Callable[..., Store]
    ) -> None:
        self.write_foreign(tmp_path, foreign_header("bad", agentPreset=5), foreign_turn())
        state = self.stored_state(tmp_path)
        location = self.session_location(tmp_path, "bad")
        where = f'"{location}" line 1 (the header)' if location is not None else "its header"
        with pytest.raises(CorruptLog) as refused:
            stores().open("bad")
        assert str(refused.value) == (
            f'stored session "bad" failed validation at {where}: session header agentPreset must '
            "be a string"
        )
        assert refused.value.line == (1 if location is not None else None)
        assert self.stored_state(tmp_path) == state

    # --- fork ------------------------------------------------------------------------------

    def two_turns(self, store: Store, session_id: str = "src") -> Session:
        session = store.create(session_id, cwd=CWD)
        one_turn(session, 1)
        one_turn(session, 2)
        session.close()
        return session

    def test_fork_persists_a_child_with_the_inherited_prefix(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        source = self.two_turns(store)
        boundary = next(e.seq for e in source.events if e.type == "tool/call" and e.seq > 11)
        before = wire(stores().inspect("src").events)
        child = store.fork("src", boundary=boundary, child_id="kid")
        assert child.header["parentSession"] == "src"
        assert child.header["isSeeded"] is True
        assert child.header["cwd"] == CWD
        assert child.inherited_event_count == boundary + 1
        seed = wire(build_fork_seed(source.events, boundary))
        assert wire(child.events)[: len(seed)] == seed
        closers = seed[boundary + 2 :]
        assert [e["type"] for e in closers] == ["tool/result", "step/end", "turn/end"]
        assert closers[0]["data"]["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
        assert closers[-1]["data"]["reason"] == {"kind": "forked"}
        one_turn(child, 3)
        child.close()
        stored = stores().inspect("kid")
        assert wire(stored.events)[: child.seq] == wire(child.events)
        assert dict(stored.header) == dict(child.header)
        assert stored.inherited_event_count == boundary + 1
        check_invariants(stored.events)
        check_provider_history(stored.derive_messages())
        assert wire(stores().inspect("src").events) == before
        location = self.session_location(tmp_path, "kid")
        if location is not None:
            assert location != self.session_location(tmp_path, "src")
            assert [info.location for info in store.list() if info.id == "kid"] == [location]

    def test_fork_of_an_open_session_writes_only_the_child(
        self, stores: Callable[..., Store], store: Store
    ) -> None:
        live = store.create("live")
        one_turn(live)
        start_turn(live, 2)
        child = store.fork("live", child_id="kid")
        assert wire(child.events)[: live.seq] == wire(live.events)
        assert child.event_at(live.seq)["data"] == {"inherited": True}
        child.close()
        live.append("step/end", {"turn": 2, "step": 1})
        live.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
        live.close()
        assert wire(stores().inspect("kid").events)[: child.seq] == wire(child.events)
        assert wire(stores().inspect("live").events)[: live.seq] == wire(live.events)

    def test_fork_of_a_crashed_session_closes_the_turn_in_the_child_only(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        crashed = self.crashed_in_turn_two(store)
        before = self.stored_state(tmp_path)
        source_view = wire(stores().inspect("crashed").events)
        child = stores().fork("crashed", child_id="kid")
        seed = wire(build_fork_seed(crashed.events, crashed.seq - 1))
        assert wire(child.events) == seed  # the stored prefix, the marker, the closers
        assert [e["type"] for e in seed[crashed.seq :]] == [
            "session/end-seed",
            "step/end",
            "turn/end",
        ]
        assert seed[-1]["data"]["reason"] == {"kind": "forked"}
        child.close()
        assert wire(stores().inspect("kid").events)[: len(seed)] == seed
        assert wire(stores().inspect("crashed").events) == source_view
        if self.session_location(tmp_path, "crashed") is not None:
            assert isinstance(before, dict)
            state = self.stored_state(tmp_path)
            assert isinstance(state, dict)
            assert {k: v for k, v in state.items() if k in before} == before

    def test_fork_refusals_write_nothing(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        source = self.two_turns(store)
        self.two_turns(store, "taken")
        pending = store.create("pending")
        state = self.stored_state(tmp_path)
        last = source.seq - 1
        refusals: list[tuple[dict[str, Any], str, str]] = [
            ({"child_id": "taken"}, "SESSION_ALREADY_EXISTS", 'session "taken" already exists'),
            ({"child_id": "pending"}, "SESSION_ALREADY_EXISTS", 'session "pending" already exists'),
            (
                {"child_id": "taken", "boundary": -1},
                "SESSION_ALREADY_EXISTS",
                'session "taken" already exists',
            ),
            (
                {"boundary": source.seq},
                "INVALID_BOUNDARY",
                f'fork boundary {source.seq} does not exist in session "src" (last seq: {last})',
            ),
            (
                {"boundary": -1},
                "INVALID_BOUNDARY",
                'fork boundary for session "src" must be a non-negative safe integer, got -1',
            ),
            (
                {"boundary": 1.5},
                "INVALID_BOUNDARY",
                'fork boundary for session "src" must be a non-negative safe integer, got 1.5',
            ),
            (
                {"boundary": True},
                "INVALID_BOUNDARY",
                'fork boundary for session "src" must be a non-negative safe integer, got true',
            ),
        ]
        for options, code, text in refusals:
            with pytest.raises(SessionForkError) as refused:
                store.fork("src", **options)
            assert (refused.value.code, str(refused.value)) == (code, text), options
        with pytest.raises(SessionForkError) as missing:
            store.fork("nope", child_id="kid")
        assert missing.value.code == "SESSION_NOT_FOUND"
        assert str(missing.value) == 'session "nope" not found'
        assert self.stored_state(tmp_path) == state
        assert {info.id for info in store.list()} == {"src", "taken"}
        pending.close()

    # --- delete ----------------------------------------------------------------------------

    def test_delete_removes_the_session_and_only_it(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        with store.create("gone", cwd="/home/u") as gone:
            one_turn(gone)
        with store.create("kept", cwd="/home/u") as kept:
            one_turn(kept)
        store.delete("gone")
        assert [info.id for info in store.list()] == ["kept"]
        for reader in (store, stores()):
            with pytest.raises(SessionNotFound, match=r'^session "gone" not found$'):
                reader.open("gone")
            assert wire(reader.inspect("kept").events)[: kept.seq] == wire(kept.events)
        self.assert_contained(tmp_path)
        with store.create("gone") as again:  # the id is free again, from seq 0
            assert again.append("turn/start", {"turn": 1}).seq == 0
        types = [event.type for event in stores().inspect("gone").events]
        assert types == ["turn/start", "turn/end", "session/end-seed"]  # nothing of the old log

    def test_deleting_a_session_open_for_writing_is_refused_and_changes_nothing(
        self, tmp_path: Path, store: Store
    ) -> None:
        live = store.create("live")
        one_turn(live)
        state = self.stored_state(tmp_path)
        with pytest.raises(SessionLocked, match=r'^session "live" is open for writing') as refused:
            store.delete("live")
        assert refused.value.session_id == "live"
        assert self.stored_state(tmp_path) == state
        live.close()
        store.delete("live")
        assert store.list() == []

    def test_deleting_a_missing_or_invalid_id_is_refused(
        self, tmp_path: Path, store: Store
    ) -> None:
        with store.create("s1") as session:
            one_turn(session)
        state = self.stored_state(tmp_path)
        with pytest.raises(SessionNotFound, match=r'^session "nope" not found$'):
            store.delete("nope")
        with pytest.raises(SeedRejected, match="session id"):
            store.delete("a\x00b")
        assert self.stored_state(tmp_path) == state

    # --- write-behind ----------------------------------------------------------------------

    def test_write_behind_events_are_durable_after_flush(
        self, stores: Callable[..., Store]
    ) -> None:
        store = stores(write_behind=True, batch_delay=60)
        session = store.create("wb")
        one_turn(session)
        assert stores().list() == []
        session.flush()
        assert wire(stores().inspect("wb").events)[: session.seq] == wire(session.events)
        flushed = session.seq
        one_turn(session, 2)
        assert len(stores().inspect("wb").events) == flushed + 1  # + the end-seed marker
        store.flush()
        assert wire(stores().inspect("wb").events)[: session.seq] == wire(session.events)
        one_turn(session, 3)
        store.close()  # flushes
        assert wire(stores().inspect("wb").events)[: session.seq] == wire(session.events)

    def test_write_behind_session_close_flushes(self, stores: Callable[..., Store]) -> None:
        store = stores(write_behind=True, batch_delay=60)
        with store.create("wb") as session:
            one_turn(session)
        with stores().open("wb") as reopened:
            assert wire(reopened.events)[: session.seq] == wire(session.events)

    def test_write_behind_batch_lands_after_the_delay(self, stores: Callable[..., Store]) -> None:
        delay = 0.5
        store = stores(write_behind=True, batch_delay=delay)
        reader = stores()
        session = store.create("wb")
        started = time.monotonic()
        session.append("turn/start", {"turn": 1})
        session.append("step/start", {"turn": 1, "step": 1})
        assert reader.list() == []
        while not reader.list():
            assert time.monotonic() - started < 30, "the batch never landed"
            time.sleep(0.02)
        assert time.monotonic() - started >= delay * 0.9
        assert wire(reader.inspect("wb").events)[:2] == wire(session.events)

    # --- refused appends -------------------------------------------------------------------

    def test_a_rejected_append_writes_nothing(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        session = store.create("s1")
        start_turn(session, 1)
        state, seq = self.stored_state(tmp_path), session.seq
        with pytest.raises(EventRejected):
            session.append("user/message", {"role": "user"}, surface_op="append")
        with pytest.raises(InvariantError):
            session.append("turn/end", {"turn": 7, "reason": {"kind": "completed"}})
        with pytest.raises(EventRejected, match="undeclared type"):
            session.append("vendor/undeclared", {})
        assert (self.stored_state(tmp_path), session.seq) == (state, seq)
        session.append("step/end", {"turn": 1, "step": 1})
        session.close()
        stored = stores().inspect("s1").events
        assert stored[seq].type == "step/end"
        assert [event.seq for event in stored] == list(range(len(stored)))

    def test_non_json_data_never_reaches_the_store(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        cyclic: dict[str, Any] = {}
        cyclic["self"] = cyclic
        bad_values: list[Any] = [
            math.nan,
            math.inf,
            -0.0,
            2**53,
            -(2**53),
            (1, 2),
            {1, 2},
            b"bytes",
            {1: "int key"},
            cyclic,
            object(),
        ]
        lazy = store.create("lazy")
        materialized = store.create("materialized")
        materialized.append("turn/start", {"turn": 1})
        state = self.stored_state(tmp_path)
        for session in (lazy, materialized):
            for value in bad_values:
                with pytest.raises(EventRejected, match="non-JSON-serializable"):
                    session.append("turn/start", {"turn": 2, "extra": value})
        assert self.stored_state(tmp_path) == state
        assert [info.id for info in store.list()] == ["materialized"]

    def test_data_round_trips_exactly(self, stores: Callable[..., Store], store: Store) -> None:
        nested: Any = "bottom"
        for _ in range(300):
            nested = [nested]
        meta = {
            "text": 'é 😀 \u2028 \x00 \udc00 \\ "quoted" </script>',
            "numbers": [0, -1, 2**53 - 1, -(2**53 - 1), 0.1, 1e-7, 5e-324, 1.7976931348623157e308],
            "nested": nested,
            "big": "x" * 200_000,
            "empty": [{}, [], ""],
            "booleans": [True, False, None],
        }
        session = store.create("exact")
        start_turn(session, 1)
        ask_tools(session, 1, 1, "c")
        call = session.append(
            "tool/call", {"turn": 1, "step": 1, "callId": "c", "name": "t", "arguments": "{}"}
        )
        session.append(
            "tool/result",
            m.tool_result("c", "done", turn=1, step=1, id="r", meta=meta),
            surface_op="append",
            source_event_seqs=[call.seq],
        )
        session.close()
        reopened = stores().inspect("exact")
        assert wire(reopened.events)[: session.seq] == wire(session.events)
        assert reopened.event_at(session.seq - 1)["data"]["meta"] == meta

    @needs_accelerator
    def test_a_loaded_log_holds_one_object_per_recurring_short_value(
        self, stores: Callable[..., Store], store: Store
    ) -> None:
        """Thousands of equal "assistant" or model strings would cost a loaded session dearly."""
        session = store.create("shared")
        for turn in (1, 2, 3):
            one_turn(session, turn)
        session.close()
        loaded = stores().inspect("shared")
        messages = [e["data"]["message"] for e in loaded.events if e.type == "assistant/message"]
        assert len(messages) == 6
        assert len({id(message["role"]) for message in messages}) == 1
        assert len({id(message["source"]["model"]) for message in messages}) == 1
        assert len({id(message["content"][0]["type"]) for message in messages}) == 1

    # --- closing ---------------------------------------------------------------------------

    def test_a_closed_session_refuses_appends(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        with store.create("s1") as session:
            one_turn(session)
        assert session.closed
        state = self.stored_state(tmp_path)
        with pytest.raises(EventRejected, match=r'^session "s1" is closed$'):
            session.append("turn/start", {"turn": 2})
        assert self.stored_state(tmp_path) == state
        session.close()  # idempotent

    def test_closing_the_store_flushes_and_releases_everything(
        self, stores: Callable[..., Store]
    ) -> None:
        with stores(write_behind=True, batch_delay=60) as store:
            first = store.create("first")
            one_turn(first)
            second = store.create("second")
            second.append("turn/start", {"turn": 1})
        assert first.closed
        assert second.closed
        with pytest.raises(EventRejected, match="is closed"):
            first.append("turn/start", {"turn": 2})
        other = stores()
        with other.open("first") as reopened:
            assert wire(reopened.events)[: first.seq] == wire(first.events)
        other.open("second").close()
        with pytest.raises(AgentlogError, match="is closed"):
            store.create("third")
        with pytest.raises(AgentlogError, match="is closed"):
            store.list()
        store.close()  # idempotent

    # --- one writer per session, across store objects and processes -----------------------

    def test_a_session_has_one_writer_across_store_objects(
        self, tmp_path: Path, stores: Callable[..., Store]
    ) -> None:
        """A second ``Store`` object of this process is refused like another process is."""
        first, second = stores(), stores()
        live = first.create("s1")
        one_turn(live)
        state = self.stored_state(tmp_path)
        for refused_operation in (second.open, lambda sid: second.repair(sid, cut_at=0)):
            with pytest.raises(SessionLocked) as refused:
                refused_operation("s1")
            assert refused.value.session_id == "s1"
            assert str(refused.value).startswith('session "s1" is open for writing')
        with pytest.raises(SessionAlreadyExists):
            second.create("s1")
        assert wire(second.inspect("s1").events)[: live.seq] == wire(live.events)
        assert self.stored_state(tmp_path) == state  # refusals and inspect wrote nothing
        live.close()
        with second.open("s1") as reopened:
            assert wire(reopened.events)[: live.seq] == wire(live.events)
            with pytest.raises(SessionLocked):
                first.open("s1")

    def test_a_second_process_cannot_open_a_live_session_until_the_first_is_killed(
        self, tmp_path: Path, stores: Callable[..., Store]
    ) -> None:
        url = self.store_url(tmp_path)
        if url is None:
            pytest.skip("this store lives in one process")
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, url, str(ROOT)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline() == "holding\n"
            store = stores()
            state = self.stored_state(tmp_path)
            with pytest.raises(SessionLocked) as refused:
                store.open("s1")
            assert refused.value.session_id == "s1"
            self.assert_names_lock(refused.value)
            with pytest.raises(SessionLocked):
                store.repair("s1", cut_at=0)
            with pytest.raises(SessionAlreadyExists):
                store.create("s1")
            view = store.inspect("s1")  # readers take no lock
            assert [event.type for event in view.events][:2] == ["turn/start", "step/start"]
            assert self.stored_state(tmp_path) == state
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait()
            with store.open("s1") as resumed:  # at once: the lock died with its process
                assert [event.type for event in resumed.events] == [
                    "turn/start", "step/start", "step/end", "turn/end", "session/end-seed"
                ]  # fmt: skip
        finally:
            if holder.poll() is None:
                holder.kill()
                holder.wait()
            if holder.stdout is not None:
                holder.stdout.close()

    # --- storage failures -------------------------------------------------------------------

    def test_a_full_disk_fails_the_append_names_the_cause_and_changes_nothing(
        self, tmp_path: Path, stores: Callable[..., Store]
    ) -> None:
        """A real write failure: the writer process may not grow a file past ``RLIMIT_FSIZE``
        (the kernel's EFBIG, which SQLite reports as a full disk). The append fails with the
        cause in words, the log is as it was, and once the limit is lifted (the cause fixed)
        the same session appends again."""
        url = self.store_url(tmp_path)
        if url is None:
            pytest.skip("this store writes no files")
        completed = subprocess.run(
            [sys.executable, "-c", _FILLER, url, str(tmp_path), str(ROOT)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        report = [json.loads(line) for line in completed.stdout.splitlines()]
        failed, retried = report
        assert failed["error"] == "StoreError", failed
        assert "cannot rollback" not in failed["message"]
        assert failed["cause"] in ("disk full", "file too large"), failed
        assert 'session "s1"' in failed["message"], failed
        assert failed["seq"] == 2
        assert failed["state"] == failed["state_before"]  # nothing half-written
        assert retried == {"seq": 4}
        with stores().open("s1") as reopened:
            assert [event.type for event in reopened.events] == [
                "turn/start", "user/message", "user/message", "turn/end", "session/end-seed"
            ]  # fmt: skip

    # --- repair ----------------------------------------------------------------------------

    def test_repair_cuts_a_log_and_the_next_open_closes_the_turn(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        with store.create("s1") as session:
            one_turn(session, 1)
            one_turn(session, 2)
        cut_at = session.seq - 5  # inside turn 2
        result = stores().repair("s1", cut_at=cut_at)
        assert (result.session_id, result.cut_at) == ("s1", cut_at)
        assert (result.removed, result.damaged) == (5, 0)
        if self.store_url(tmp_path) is not None:
            assert result.saved_to is not None
            assert self.kept_copy_exists(result.saved_to)
        else:
            assert result.saved_to is None
        kept = wire(session.events[:cut_at])
        closers = wire(open_turn_closers(kept, "interrupted"))
        expected = [*kept, *closers, end_seed(len(kept) + len(closers))]
        assert wire(stores().inspect("s1").events) == expected
        state = self.stored_state(tmp_path)
        again = stores().repair("s1", cut_at=cut_at)  # nothing left to cut
        assert (again.removed, again.damaged, again.saved_to) == (0, 0, None)
        assert self.stored_state(tmp_path) == state
        with stores().open("s1") as resumed:
            assert wire(resumed.events) == expected
            one_turn(resumed, 3)
        check_invariants(stores().inspect("s1").events)

    def test_repair_cuts_damage_where_corrupt_log_says(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        """Damage with well-formed records after it is refused, never dropped; ``repair`` at
        ``CorruptLog.seq`` is the explicit cut, and it says what it removed."""
        with store.create("s1") as session:
            one_turn(session, 1)
            one_turn(session, 2)
        if not self.damage(tmp_path, "s1", 4):
            pytest.skip("this store cannot hold damaged records")
        damaged = self.stored_state(tmp_path)
        for operation in (stores().open, stores().inspect):
            with pytest.raises(CorruptLog) as refused:
                operation("s1")
            assert (refused.value.session_id, refused.value.seq) == ("s1", 4)
            assert refused.value.following == session.seq - 5
        assert self.stored_state(tmp_path) == damaged
        with pytest.raises(CorruptLog, match="cut at seq 4 or before"):
            stores().repair("s1", cut_at=6)
        assert self.stored_state(tmp_path) == damaged
        result = stores().repair("s1", cut_at=4)
        assert (result.removed, result.damaged) == (session.seq - 5, 1)
        assert result.saved_to is not None
        kept = wire(session.events[:4])
        closers = wire(open_turn_closers(kept, "interrupted"))
        with stores().open("s1") as resumed:
            assert wire(resumed.events) == [*kept, *closers, end_seed(4 + len(closers))]
            check_provider_history(resumed.derive_messages())

    def test_repair_refusals_write_nothing(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        with store.create("s1") as session:
            one_turn(session)
        state = self.stored_state(tmp_path)
        with pytest.raises(StoreError, match=f"holds {session.seq} complete event"):
            store.repair("s1", cut_at=session.seq + 1)
        for bad in (-1, 1.5, True, "3"):
            with pytest.raises(StoreError, match="cut_at must be a non-negative integer seq"):
                store.repair("s1", cut_at=bad)  # type: ignore[arg-type]  # the point
        with pytest.raises(SessionNotFound):
            store.repair("nope", cut_at=0)
        live = store.open("s1")
        with pytest.raises(SessionLocked):
            store.repair("s1", cut_at=0)
        live.close()
        assert self.stored_state(tmp_path) != state  # the open's end-seed marker
        state = self.stored_state(tmp_path)
        result = store.repair("s1", cut_at=session.seq + 1)  # the marker is an event too
        assert (result.removed, result.damaged) == (0, 0)
        assert self.stored_state(tmp_path) == state

    # --- group commit and threads ----------------------------------------------------------

    def count_writes(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> list[int]:
        """The sizes of the batches the store's backend is asked to write, as they happen."""
        backend = store._backend  # the backend is private; counting its writes is the point
        writes: list[int] = []
        original = backend.append

        def counted(lease: Any, header: Any, events: Any, **options: Any) -> None:
            original(lease, header, events, **options)
            writes.append(len(events))

        monkeypatch.setattr(backend, "append", counted)
        return writes

    def test_a_batch_reaches_the_store_as_one_write(
        self, stores: Callable[..., Store], store: Store, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        writes = self.count_writes(store, monkeypatch)
        session = store.create("s1")
        with session.batch():
            one_turn(session)
            assert writes == []  # nothing is written before the block ends
        assert writes == [session.seq]
        with session.batch():
            start_turn(session, 2)
            with session.batch():  # a nested block joins the outer one
                session.append("step/end", {"turn": 2, "step": 1})
            session.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
        assert writes == [11, 5]
        session.close()
        assert wire(stores().open("s1").events)[: session.seq] == wire(session.events)

    def test_a_batch_in_write_behind_mode_is_written_at_its_end(
        self, stores: Callable[..., Store], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        store = stores(write_behind=True, batch_delay=0.01)
        writes = self.count_writes(store, monkeypatch)
        session = store.create("s1")
        with session.batch():
            session.append("turn/start", {"turn": 1})
            time.sleep(0.05)  # the background writer waits for the block
            session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        assert writes == [2]

    def test_a_failure_inside_a_batch_keeps_what_was_accepted(
        self, stores: Callable[..., Store], store: Store
    ) -> None:
        session = store.create("s1")

        def fail_inside() -> None:
            with session.batch():
                start_turn(session, 1)
                with pytest.raises(EventRejected):
                    session.append("step/end", {"turn": 1, "step": math.nan})
                _ = 1 / 0

        with pytest.raises(ZeroDivisionError):
            fail_inside()
        session.close()
        reopened = stores().open("s1")
        assert [event.type for event in reopened.events] == [
            "turn/start", "step/start", "user/message", "step/end", "turn/end", "session/end-seed"
        ]  # fmt: skip

    def test_threads_sharing_a_session_store_each_event_once_in_order(
        self, stores: Callable[..., Store], store: Store
    ) -> None:
        """8 threads × 1,000 appends, half of them in batches: dense seqs, nothing lost."""
        session = store.create("shared")
        session.append("turn/start", {"turn": 1})
        failures: list[BaseException] = []

        def work(thread: int) -> None:
            try:
                for i in range(0, 1000, 10):
                    if thread % 2:
                        with session.batch():
                            for j in range(i, i + 10):
                                session.append(
                                    "user/message", m.user(f"{thread}:{j}"), surface_op="append"
                                )
                    else:
                        for j in range(i, i + 10):
                            session.append(
                                "user/message", m.user(f"{thread}:{j}"), surface_op="append"
                            )
            except BaseException as exc:  # asserted below
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        session.close()
        reopened = stores().open("shared")
        events = list(reopened.events)
        assert [event.seq for event in events] == list(range(8002 + 1))
        texts = [event.data["content"][0]["text"] for event in events[1:8001]]
        for n in range(8):
            mine = [text for text in texts if text.startswith(f"{n}:")]
            assert mine == [f"{n}:{j}" for j in range(1000)]

    async def async_session(self, store: Store, session_id: str) -> Any:
        """A new ``agentlog.aio`` session on ``store`` (an async-native store makes its own)."""
        return AsyncSession(store.create(session_id))

    def run_async(self, store: Store, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Run ``coroutine`` to its end where ``store``'s sessions can await (a fresh loop)."""
        return asyncio.run(coroutine)

    def test_asyncio_appends_to_one_session_store_each_event_once(
        self, stores: Callable[..., Store], store: Store
    ) -> None:
        async def scenario() -> list[int]:
            session = await self.async_session(store, "aio")
            await session.append("turn/start", {"turn": 1})
            appended = await asyncio.gather(
                *(
                    session.append("user/message", m.user(f"m{i}"), surface_op="append")
                    for i in range(1000)
                )
            )
            async with session.batch():
                await session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            await session.close()
            return [event.seq for event in appended]

        seqs = self.run_async(store, scenario())
        assert sorted(seqs) == list(range(1, 1001))
        reopened = stores().open("aio")
        assert [event.seq for event in reopened.events] == list(range(1003))
        assert reopened.event_at(1001).type == "turn/end"

    # --- hostile input ---------------------------------------------------------------------

    def test_hostile_ids_stay_inside_the_store(
        self, tmp_path: Path, stores: Callable[..., Store], store: Store
    ) -> None:
        outside = tmp_path.parent / f"escape-{uuid.uuid4().hex}"
        ids = (*HOSTILE_IDS, str(outside), f"../{outside.name}")
        for session_id in ids:
            with store.create(session_id, cwd="/../../etc") as session:
                session.append("turn/start", {"turn": 1})
                session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        reader = stores()
        assert sorted(info.id for info in reader.list()) == sorted(ids)
        for session_id in ids:
            view = reader.inspect(session_id)
            assert view.id == session_id
            assert [event.type for event in view.events][:2] == ["turn/start", "turn/end"]
        assert not outside.exists()
        self.assert_contained(tmp_path)

    def test_an_id_must_be_a_string(self, store: Store) -> None:
        for bad_id in (5, 1.5, b"s1", ["s1"]):
            with pytest.raises(SeedRejected, match="session id must be a nonempty string"):
                store.create(bad_id)  # type: ignore[arg-type]  # the point: not a str

    @pytest.mark.parametrize("bad_id", INVALID_IDS, ids=repr)
    def test_invalid_ids_are_refused_by_every_operation(
        self, tmp_path: Path, store: Store, bad_id: str
    ) -> None:
        """Empty, NUL, lone surrogates, control characters, over 255 UTF-8 bytes: SeedRejected."""
        live = store.create("live")
        live.append("turn/start", {"turn": 1})
        state = self.stored_state(tmp_path)
        for operation in (store.create, store.open, store.inspect):
            with pytest.raises(SeedRejected, match="session id"):
                operation(bad_id)
        with pytest.raises(SeedRejected, match="session id"):
            store.fork("live", child_id=bad_id)
        with pytest.raises(SeedRejected, match="session id"):
            store.fork(bad_id)
        with pytest.raises(SeedRejected, match="session id"):
            store.repair(bad_id, cut_at=0)
        assert self.stored_state(tmp_path) == state
        assert [info.id for info in store.list()] == ["live"]
