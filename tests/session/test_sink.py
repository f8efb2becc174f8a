"""An attached session hands each accepted event to its sink before committing it."""

from __future__ import annotations

import pytest

from agentlog import Event, EventRejected, Session, StoreError


class RecordingSink:
    """A sink that records what it is given, and can be told to refuse."""

    def __init__(self) -> None:
        self.persisted: list[Event] = []
        self.refuse: Exception | None = None
        self.flushes = 0
        self.closes = 0
        self.holds = 0
        self.releases: list[bool] = []

    def persist(self, event: Event) -> None:
        if self.refuse is not None:
            raise self.refuse
        self.persisted.append(event)

    def hold(self) -> None:
        self.holds += 1

    def release(self, *, write: bool) -> None:
        self.releases.append(write)

    def flush(self) -> None:
        self.flushes += 1
        if self.refuse is not None:
            raise self.refuse

    def close(self) -> None:
        self.flush()
        self.closes += 1


def attached() -> tuple[Session, RecordingSink]:
    session = Session.create("s", clock=lambda: 0)
    sink = RecordingSink()
    session.attach(sink)
    return session, sink


def test_every_accepted_event_reaches_the_sink_in_order() -> None:
    session, sink = attached()
    first = session.append("turn/start", {"turn": 1})
    second = session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert sink.persisted == [first, second]
    assert sink.persisted[0] is first


def test_a_rejected_event_never_reaches_the_sink() -> None:
    session, sink = attached()
    with pytest.raises(EventRejected):
        session.append("turn/start", {"turn": float("nan")})
    assert sink.persisted == []


def test_a_sink_that_refuses_rejects_the_append_and_nothing_is_committed() -> None:
    session, sink = attached()
    session.append("turn/start", {"turn": 1})
    observed: list[Event] = []
    session.add_observer(lambda _s, event: observed.append(event))
    sink.refuse = StoreError("disk full")
    with pytest.raises(StoreError, match="disk full"):
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert session.seq == 1
    assert observed == []
    sink.refuse = None
    assert session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}}).seq == 1


def test_flush_and_close_reach_the_sink_and_a_closed_session_refuses_appends() -> None:
    session, sink = attached()
    session.flush()
    assert sink.flushes == 1
    with session:
        session.append("turn/start", {"turn": 1})
    assert sink.closes == 1
    assert session.closed
    with pytest.raises(EventRejected, match='session "s" is closed'):
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    session.close()  # idempotent
    assert sink.closes == 1


def test_a_failing_close_leaves_the_session_open_to_retry() -> None:
    session, sink = attached()
    sink.refuse = StoreError("flush failed")
    with pytest.raises(StoreError):
        session.close()
    assert not session.closed
    assert session.attached
    sink.refuse = None
    session.close()
    assert session.closed


def test_a_session_takes_one_sink() -> None:
    session, _ = attached()
    with pytest.raises(RuntimeError, match="already attached"):
        session.attach(RecordingSink())
    assert not Session.create("t").attached
