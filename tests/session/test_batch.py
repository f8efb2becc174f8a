"""Group commit (``Session.batch()``) and sessions shared by threads.

A sink records what the session hands it: inside a batch the session holds the sink, and the
outermost exit releases it with ``write=True`` — the store's one durable write. Appends stay
validated one by one; other threads wait until a batch has been written.
"""

from __future__ import annotations

import threading
import time

import pytest

from agentlog import EventRejected, Session
from agentlog import messages as m
from tests.session.test_sink import attached


def test_a_batch_holds_the_sink_and_releases_it_once_with_a_write() -> None:
    session, sink = attached()
    with session.batch():
        session.append("turn/start", {"turn": 1})
        assert sink.holds == 1
        assert sink.releases == []
        session.append("user/message", m.user("hi", id="u1"), surface_op="append")
    assert sink.releases == [True]
    assert [event.type for event in sink.persisted] == ["turn/start", "user/message"]


def test_nested_batches_join_the_outer_one() -> None:
    session, sink = attached()
    with session.batch():
        session.append("turn/start", {"turn": 1})
        with session.batch():
            session.append("user/message", m.user("hi", id="u1"), surface_op="append")
        assert sink.releases == []  # the inner exit writes nothing
    assert sink.holds == 1
    assert sink.releases == [True]


def test_a_rejected_append_inside_a_batch_raises_there_and_the_rest_is_written() -> None:
    session, sink = attached()
    with session.batch():
        session.append("turn/start", {"turn": 1})
        with pytest.raises(EventRejected):
            session.append("turn/start", {"turn": float("nan")})
        session.append("user/message", m.user("hi", id="u1"), surface_op="append")
    assert [event.seq for event in sink.persisted] == [0, 1]
    assert sink.releases == [True]


def test_an_exception_inside_a_batch_still_writes_what_was_accepted() -> None:
    session, sink = attached()

    def fail_inside() -> None:
        with session.batch():
            session.append("turn/start", {"turn": 1})
            raise KeyError("the caller's own failure")

    with pytest.raises(KeyError):
        fail_inside()
    assert sink.releases == [True]
    assert session.seq == 1


def test_a_failed_batch_write_raises_at_the_exit_and_keeps_the_events() -> None:
    session, sink = attached()

    def refuse(*, write: bool) -> None:
        raise OSError(28, "No space left on device")

    sink.release = refuse  # type: ignore[method-assign]  # a store whose disk is full

    def append_in_batch() -> None:
        with session.batch():
            session.append("turn/start", {"turn": 1})

    with pytest.raises(OSError, match="No space"):
        append_in_batch()
    assert session.seq == 1  # accepted in memory; the store retries it on the next flush
    del sink.release  # the disk has room again
    with session.batch():  # the session is usable again
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})


def test_a_detached_session_batches_too() -> None:
    session = Session.create("s", clock=lambda: 0)
    with session.batch() as same:
        same.append("turn/start", {"turn": 1})
    assert session.seq == 1


def test_a_session_cannot_close_inside_its_own_batch() -> None:
    session, _ = attached()
    with session.batch(), pytest.raises(RuntimeError, match="inside its own batch"):
        session.close()


@pytest.mark.structure_free("threads append user messages without turns")
def test_threads_appending_to_one_session_get_dense_distinct_seqs() -> None:
    session, sink = attached()
    per_thread = 500
    errors: list[BaseException] = []

    def work(name: str) -> None:
        try:
            for i in range(per_thread):
                session.append("user/message", m.user(f"{name} {i}"), surface_op="append")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [event.seq for event in session.events] == list(range(8 * per_thread))
    assert [event.seq for event in sink.persisted] == list(range(8 * per_thread))
    assert session.surface.nodes == tuple(range(8 * per_thread))
    for n in range(8):  # each thread's own appends kept their order
        texts = [
            e.data["content"][0]["text"]
            for e in session.events
            if e.data["content"][0]["text"].startswith(f"t{n} ")
        ]
        assert texts == [f"t{n} {i}" for i in range(per_thread)]


@pytest.mark.structure_free("threads append user messages without turns")
def test_another_threads_append_waits_until_a_batch_is_written() -> None:
    session, sink = attached()
    inside = threading.Event()
    outside_seq: list[int] = []

    def other() -> None:
        inside.wait()
        outside_seq.append(session.append("user/message", m.user("later"), surface_op="append").seq)

    thread = threading.Thread(target=other)
    thread.start()
    with session.batch():
        session.append("user/message", m.user("first"), surface_op="append")
        inside.set()
        time.sleep(0.05)  # the other thread is blocked meanwhile
        assert outside_seq == []
        session.append("user/message", m.user("second"), surface_op="append")
    thread.join()
    assert outside_seq == [2]
    assert sink.releases == [True]
