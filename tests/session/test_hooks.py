"""Validators and observers: vetoing candidates before commit, hearing about events after it.

Covers spec/core.md §4 step 9 with the Python mapping of §13: a validator sees the exact
candidate object and may veto it (the error propagates unchanged, nothing changes, no observer
runs); observers see the log already holding the event, in registration order, and can never
change the result — a synchronous exception or a failed awaitable is logged as a warning on the
``agentlog.session`` logger with the texts of §4 step 9d. While hooks run, an append is
refused (E5). §15 scenarios 75–77.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any

import pytest

from agentlog import EventRejected, Session
from agentlog.events import Event
from agentlog.session import on_session_created
from tests.session.support import (
    Spy,
    U,
    assert_rejected,
    assert_unchanged,
    clock,
    new_session,
    observe,
    raises_exactly,
    rep,
)

E5 = "session append cannot reenter while another append is being published"
LOGGER = "agentlog.session"


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == LOGGER and record.levelno == logging.WARNING
    ]


# --- observers ---------------------------------------------------------------------------


def test_failing_observers_are_logged_and_never_change_the_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """§15 scenario 75: one raises, one rejects asynchronously, one records."""
    caplog.set_level(logging.WARNING, logger=LOGGER)
    session = new_session("obs")
    recorder = Spy()

    def raising(_: Session, __: Event) -> None:
        raise RuntimeError("boom")

    async def rejecting_later() -> None:
        raise ValueError("later")

    def rejecting(_: Session, __: Event) -> Any:
        return rejecting_later()

    session.add_observer(raising)
    session.add_observer(rejecting)
    session.add_observer(recorder)

    async def run() -> Event:
        event = session.append("user/message", U("a"), surface_op="append")
        for _ in range(20):
            if len(warnings_of(caplog)) == 2:
                break
            await asyncio.sleep(0)
        return event

    event = asyncio.run(run())
    assert event.seq == 0
    assert session.events[0] is event
    assert recorder.events == [event]
    assert recorder.lengths == [1]
    assert warnings_of(caplog) == [
        'session "obs": session/event listener threw: RuntimeError: boom',
        'session "obs": session/event listener rejected: ValueError: later',
    ]


def test_an_awaitable_outside_a_running_loop_is_closed_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    session = new_session("sync")
    ran: list[bool] = []

    async def never() -> None:
        ran.append(True)

    coroutine = never()
    session.add_observer(lambda _s, _e: coroutine)
    session.append("turn/start", {"turn": 1})
    assert ran == []
    assert inspect.getcoroutinestate(coroutine) == inspect.CORO_CLOSED
    assert warnings_of(caplog) == [
        'session "sync": session/event listener returned an awaitable outside a running event '
        "loop; it was not run"
    ]


def test_a_successful_async_observer_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    session = new_session()
    seen: list[int] = []

    async def record(event: Event) -> None:
        seen.append(event.seq)

    session.add_observer(lambda _s, event: record(event))

    async def run() -> None:
        session.append("turn/start", {"turn": 1})
        for _ in range(5):
            await asyncio.sleep(0)

    asyncio.run(run())
    assert seen == [0]
    assert warnings_of(caplog) == []


def test_observers_run_in_order_and_see_the_committed_log() -> None:
    session = new_session()
    calls: list[tuple[str, int, int]] = []
    for name in ("first", "second"):
        session.add_observer(
            lambda s, e, name=name: calls.append((name, e.seq, s.seq))  # type: ignore[misc]
        )
    session.append("turn/start", {"turn": 1})
    session.append("user/message", U("a"), surface_op="append")
    assert calls == [("first", 0, 1), ("second", 0, 1), ("first", 1, 2), ("second", 1, 2)]


def test_observers_see_the_surface_and_history_already_updated() -> None:
    session = new_session()
    seen: list[Any] = []
    session.add_observer(
        lambda s, e: seen.append((s.surface.nodes, [m["id"] for m in s.derive_messages()]))
    )
    session.append("user/message", U("a"), surface_op="append")
    session.append("user/message", U("b"), surface_op=rep(0, 0), source_event_seqs=[0])
    assert seen == [((0,), ["u-a"]), ((1,), ["u-b"])]


def test_an_observer_added_during_publication_misses_the_current_event() -> None:
    session = new_session()
    late = Spy()
    added: list[bool] = []

    def adder(s: Session, _: Event) -> None:
        if not added:
            added.append(True)
            s.add_observer(late)

    session.add_observer(adder)
    session.append("turn/start", {"turn": 1})
    assert late.events == []
    second = session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert late.events == [second]


def test_a_removed_observer_is_not_called() -> None:
    session = new_session()
    spy = Spy()
    remove = session.add_observer(spy)
    session.append("turn/start", {"turn": 1})
    remove()
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert [event.seq for event in spy.events] == [0]


def test_a_reentrant_append_from_an_observer_is_refused_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """§15 scenario 76 (E5)."""
    caplog.set_level(logging.WARNING, logger=LOGGER)
    session = new_session("re")
    refusals: list[str] = []

    def reenter(s: Session, _: Event) -> None:
        try:
            s.append("turn/start", {"turn": 1})
        except Exception as exc:
            refusals.append(str(exc))
            raise

    later = Spy()
    session.add_observer(reenter)
    session.add_observer(later)
    event = session.append("user/message", U("a"), surface_op="append")
    assert refusals == [E5]
    assert later.events == [event]
    assert list(session.events) == [event]
    assert warnings_of(caplog) == [
        f'session "re": session/event listener threw: EventRejected: {E5}'
    ]


def test_appending_again_after_publication_works() -> None:
    session = new_session()
    session.add_observer(lambda _s, _e: None)
    session.append("turn/start", {"turn": 1})
    assert session.append("user/message", U("a"), surface_op="append").seq == 1


# --- validators --------------------------------------------------------------------------


def test_a_validator_sees_the_exact_candidate_that_is_then_stored() -> None:
    session = new_session()
    spy = Spy()
    session.add_validator(spy)
    event = session.append("user/message", U("a"), surface_op="append")
    assert spy.events == [event]
    assert spy.events[0] is event
    assert spy.lengths == [0]


def test_a_validator_veto_propagates_and_changes_nothing() -> None:
    """§15 scenario 77: a replace candidate leaves nodes and generations untouched."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")

    class Veto(Exception):
        pass

    def veto(_: Session, candidate: Event) -> None:
        if candidate.surface_op != "append":
            raise Veto("no replacements today")

    session.add_validator(veto)
    nodes = session.surface.nodes
    assert_rejected(
        session,
        "no replacements today",
        lambda: session.append("user/message", U("b"), surface_op=rep(0, 0), source_event_seqs=[0]),
        cls=Veto,
    )
    assert session.surface.nodes is nodes
    assert session.surface.replace_generation == 0
    assert session.append("user/message", U("c"), surface_op="append").seq == 1


def test_no_observer_runs_for_a_vetoed_candidate() -> None:
    """§15 scenario 77."""
    session = new_session()
    observer = Spy()
    session.add_observer(observer)

    def veto(_: Session, __: Event) -> None:
        raise PermissionError("vetoed")

    remove = session.add_validator(veto)
    with pytest.raises(PermissionError, match="vetoed"):
        session.append("turn/start", {"turn": 1})
    assert observer.events == []
    remove()
    event = session.append("turn/start", {"turn": 1})
    assert observer.events == [event]
    assert event.seq == 0


def test_validators_are_not_asked_about_candidates_the_rules_refuse() -> None:
    session = new_session()
    validator = Spy()
    session.add_validator(validator)
    with pytest.raises(EventRejected, match="requires a surfaceOp marker"):
        session.append("user/message", U("a"))
    assert validator.events == []


def test_a_validator_that_appends_is_refused() -> None:
    """E5 also guards the pre-commit point."""
    session = new_session()

    def appending(s: Session, _: Event) -> None:
        s.append("turn/start", {"turn": 1})

    session.add_validator(appending)
    before = observe(session)
    with raises_exactly(EventRejected, E5):
        session.append("user/message", U("a"), surface_op="append")
    assert_unchanged(session, before)


def test_a_session_without_hooks_is_not_publishing_after_a_veto() -> None:
    session = new_session()

    def veto(_: Session, __: Event) -> None:
        raise RuntimeError("no")

    remove = session.add_validator(veto)
    with pytest.raises(RuntimeError, match="no"):
        session.append("turn/start", {"turn": 1})
    remove()
    assert session.append("turn/start", {"turn": 1}).seq == 0


# --- session-created hooks ---------------------------------------------------------------


def test_a_created_hook_sees_every_new_session_and_may_install_observers() -> None:
    seen: list[str] = []
    heard = Spy()

    def hook(session: Session) -> None:
        seen.append(session.id)
        session.add_observer(heard)

    remove = on_session_created(hook)
    try:
        created = new_session("created")
        replayed = Session.from_events("replayed", [], clock=clock)
    finally:
        remove()
    new_session("after")
    assert seen == ["created", "replayed"]
    event = created.append("turn/start", {"turn": 1})
    assert heard.events == [event]
    assert replayed.seq == 1


def test_a_created_hook_may_refuse_a_session() -> None:
    def refuse(session: Session) -> None:
        raise PermissionError(f"no {session.id}")

    remove = on_session_created(refuse)
    try:
        with pytest.raises(PermissionError, match="no s"):
            new_session("s")
    finally:
        remove()
    assert new_session("s").id == "s"


# --- traces ------------------------------------------------------------------------------


class Recorder:
    """A trace that records the order of its calls and vetoes candidates of one type."""

    def __init__(self, calls: list[str], refuse: str = "") -> None:
        self.calls = calls
        self.refuse = refuse

    def check(self, event: Any) -> None:
        self.calls.append(f"check {event['seq']}")
        if event["type"] == self.refuse:
            raise EventRejected(f"{self.refuse} refused by the trace")

    def apply(self, event: Any) -> None:
        self.calls.append(f"apply {event['seq']}")


def test_a_trace_checks_before_validators_and_applies_before_observers() -> None:
    session = new_session()
    calls: list[str] = []
    session.add_trace(Recorder(calls))
    session.add_validator(lambda _s, event: calls.append(f"validate {event.seq}"))
    session.add_observer(lambda s, event: calls.append(f"observe {event.seq} at {s.seq}"))
    session.append("user/message", U("a"), surface_op="append")
    assert calls == ["check 0", "validate 0", "apply 0", "observe 0 at 1"]


def test_a_trace_veto_changes_nothing_and_names_the_session() -> None:
    session = new_session()
    calls: list[str] = []
    session.add_trace(Recorder(calls, refuse="plan/mode"))
    observer = Spy()
    session.add_observer(observer)
    before = observe(session)
    with pytest.raises(EventRejected, match="plan/mode refused by the trace") as refused:
        session.append("plan/mode", {})
    assert_unchanged(session, before)
    assert refused.value.session_id == session.id
    assert observer.events == []
    assert calls == ["check 0"]


def test_a_validator_veto_never_reaches_the_trace_apply() -> None:
    session = new_session()
    calls: list[str] = []
    session.add_trace(Recorder(calls))

    def veto(_: Session, __: Event) -> None:
        raise PermissionError("vetoed")

    remove = session.add_validator(veto)
    with pytest.raises(PermissionError):
        session.append("plan/mode", {})
    remove()
    session.append("plan/mode", {})
    assert calls == ["check 0", "check 0", "apply 0"]


def test_a_removed_trace_is_not_called() -> None:
    session = new_session()
    calls: list[str] = []
    session.add_trace(Recorder(calls))()
    session.append("plan/mode", {})
    assert calls == []
