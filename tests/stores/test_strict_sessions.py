"""Store sessions check structure by default (spec/core.md §11, the invariant companion).

Sessions a store creates, opens or forks refuse an append that breaks turn/step structure or a
tool result that answers no pending call — the histories a model provider refuses — unless they
were asked for with ``strict=False``. A stored log's own anomalies never fail an open: checks
start from the trace the log's end leaves. Every test here turns the test suite's own companion
off (``structure_free``), so what vetoes is the store's companion alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlog import InvariantError, Session, aio, install_invariants, open_store
from agentlog import messages as m
from agentlog.lifecycle import has_invariants
from agentlog.stores import Store
from tests.stores.contract import MODEL, PROVIDER, ask_tools, clock, one_turn, run_tool, start_turn

pytestmark = pytest.mark.structure_free(
    "the store's own invariant companion is under test; the suite's would veto first"
)

BACKENDS = ["memory", "jsonl", "jsonl+zstd", "sqlite"]


def url(backend: str, tmp_path: Path) -> str:
    if backend == "memory":
        return "memory:"
    if backend == "sqlite":
        return f"sqlite:///{tmp_path}/sessions.db"
    return f"{backend}:///{tmp_path}/sessions"


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with open_store(url(request.param, tmp_path), clock=clock) as opened:
        yield opened


def assistant_outside_any_turn(s: Session) -> None:
    data = m.assistant("hello", provider=PROVIDER, model=MODEL, turn=1, step=1)
    s.append("assistant/message", data, surface_op="append")


def orphan_tool_result(s: Session) -> None:
    """Inside a step, a result for a call nobody made."""
    s.append("tool/result", m.tool_result("nobody", "?", turn=1, step=1), surface_op="append")


def turn_end_without_start(s: Session) -> None:
    s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})


def types(s: Session) -> list[str]:
    return [event.type for event in s.events]


def test_a_created_session_refuses_what_a_provider_would_refuse(store: Store) -> None:
    s = store.create("s")
    assert has_invariants(s)
    for breaking, text in [
        (turn_end_without_start, "turn/end 1 does not match open turn null"),
        (assistant_outside_any_turn, "assistant/message names turn 1/step 1 but open is turn"),
    ]:
        with pytest.raises(InvariantError, match=text) as refused:
            breaking(s)
        assert refused.value.session_id == "s"
        assert s.seq == 0
    start_turn(s, 1)
    with pytest.raises(InvariantError, match="tool/result for nobody with no prior tool/call"):
        orphan_tool_result(s)
    s.close()
    assert types(store.open("s"))[:3] == ["turn/start", "step/start", "user/message"]


def test_a_valid_turn_is_accepted_and_reopens_checked(store: Store) -> None:
    s = store.create("s")
    one_turn(s, 1)
    s.close()
    resumed = store.open("s")
    assert has_invariants(resumed)
    with pytest.raises(InvariantError, match="turn/start expected turn 2, got 1"):
        resumed.append("turn/start", {"turn": 1})
    one_turn(resumed, 2)


def test_strict_false_leaves_structure_unchecked(store: Store) -> None:
    s = store.create("s", strict=False)
    assert not has_invariants(s)
    turn_end_without_start(s)
    assistant_outside_any_turn(s)
    orphan_tool_result(s)
    assert s.seq == 3


def test_open_and_fork_check_unless_strict_false(store: Store) -> None:
    s = store.create("s")
    one_turn(s)
    s.close()
    for session in (store.open("s"), store.fork("s", child_id="child")):
        with pytest.raises(InvariantError):
            turn_end_without_start(session)
        session.close()
    for session in (store.open("s", strict=False), store.fork("s", child_id="free", strict=False)):
        assert not has_invariants(session)
        turn_end_without_start(session)
        session.close()


def test_a_stored_logs_own_anomalies_never_fail_an_open(store: Store) -> None:
    """Checks start from the trace the log's end leaves: here, after ``turn/end 3``."""
    s = store.create("s", strict=False)
    assistant_outside_any_turn(s)
    s.append("turn/start", {"turn": 1})
    orphan_tool_result(s)
    s.append("turn/end", {"turn": 3, "reason": {"kind": "completed"}})
    s.close()
    resumed = store.open("s")
    assert has_invariants(resumed)
    assert types(resumed)[-1] == "session/end-seed"
    with pytest.raises(InvariantError, match="turn/start expected turn 4, got 2"):
        resumed.append("turn/start", {"turn": 2})
    one_turn(resumed, 4)


@pytest.mark.parametrize("backend", ["jsonl", "jsonl+zstd", "sqlite"])
def test_an_interrupted_turn_is_repaired_and_then_checked(backend: str, tmp_path: Path) -> None:
    """The repair closers of an open turn pass the companion; the next turn is checked."""
    with open_store(url(backend, tmp_path), clock=clock) as store:
        s = store.create("s")
        start_turn(s, 1)
        ask_tools(s, 1, 1, "c1")
        run_tool(s, 1, 1, "c1", answer=False)
        crashed = s.events
    # The writer went away with its turn open; the next one resumes the log.
    with open_store(url(backend, tmp_path), clock=clock) as again:
        resumed = again.open("s")
        assert types(resumed)[len(crashed) :] == [
            "tool/result",
            "step/end",
            "turn/end",
            "session/end-seed",
        ]
        assert has_invariants(resumed)
        with pytest.raises(InvariantError, match="expected turn 2"):
            resumed.append("turn/start", {"turn": 3})
        one_turn(resumed, 2)


def test_a_log_whose_end_cannot_be_followed_reopens_unchecked_with_a_warning(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    s = store.create("s", strict=False)
    s.append("turn/start", {"turn": "one"})
    s.append("turn/end", {"turn": "one", "reason": {"kind": "completed"}})
    s.close()
    with caplog.at_level(logging.WARNING, logger="agentlog.invariants"):
        resumed = store.open("s")
    assert not has_invariants(resumed)
    [record] = caplog.records
    assert record.getMessage() == (
        'session "s": structure checks are off: its log cannot be followed at seq 1 (turn/end has '
        'turn "one", not a positive integer); later appends are not checked (spec/core.md §11)'
    )
    turn_end_without_start(resumed)


def test_installing_the_companion_again_is_a_no_op(store: Store) -> None:
    """What the agent loop does on the session it drives: the store's companion stays on."""
    s = store.create("s")
    uninstall = install_invariants(s)
    uninstall()
    assert has_invariants(s)
    with pytest.raises(InvariantError):
        turn_end_without_start(s)


def test_inspect_is_a_detached_view_without_the_companion(store: Store) -> None:
    s = store.create("s")
    one_turn(s)
    s.close()
    view = store.inspect("s")
    assert not has_invariants(view)


@pytest.mark.parametrize("backend", ["jsonl", "sqlite"])
def test_the_async_twins_take_strict_too(backend: str, tmp_path: Path) -> None:
    async def scenario() -> list[bool]:
        async with await aio.open_store(url(backend, tmp_path), clock=clock) as store:
            checked = await store.create("s")
            with pytest.raises(InvariantError):
                await checked.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            await checked.append("turn/start", {"turn": 1})
            await checked.close()
            sessions = [
                checked,
                await store.create("free", strict=False),
                await store.open("s", strict=False),
                await store.fork("free", child_id="child"),
                await store.fork("free", child_id="child2", strict=False),
            ]
            return [has_invariants(session.sync) for session in sessions]

    assert asyncio.run(scenario()) == [True, False, False, True, False]


def test_detached_sessions_stay_unchecked() -> None:
    """``Session.create`` and ``Session.from_events`` are the core's conformance surface."""
    s = Session.create("s", clock=clock)
    turn_end_without_start(s)
    seeded = Session.from_events("t", [event.to_wire() for event in s.events])
    assert not has_invariants(s)
    assert not has_invariants(seeded)
