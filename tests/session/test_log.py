"""``EventLog``: the immutable view of a session's events (``Session.events``).

Covers spec/core.md §3: the same view object is returned until the next successful append; an
older view never grows; a view reads like an immutable sequence (indexing, negative indexes,
slices as tuples, iteration, equality with lists) and refuses item assignment.
"""

from __future__ import annotations

import pickle

import pytest

from agentlog import EventLog, Session
from tests.session.support import U, new_session


def three_events() -> Session:
    """A session of three log-only events: turn 1 started and ended, turn 2 started."""
    session = new_session()
    session.append("turn/start", {"turn": 1})
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    session.append("turn/start", {"turn": 2})
    return session


def test_the_events_view_reads_like_an_immutable_sequence() -> None:
    session = three_events()
    events = session.events
    assert isinstance(events, EventLog)
    assert len(events) == 3
    assert events[-1].data == {"turn": 2}
    assert events[0:2] == (events[0], events[1])
    assert type(events[0:2]) is tuple
    assert events == list(events)
    assert events != list(events)[:2]
    with pytest.raises(IndexError):
        events[3]
    with pytest.raises(IndexError):
        events[-4]
    with pytest.raises(TypeError):
        events[0] = events[1]  # type: ignore[index]  # the point: a read-only sequence
    assert pickle.loads(pickle.dumps(events)) == tuple(events)


def test_a_negative_step_slice_reverses_the_events() -> None:
    session = three_events()
    events = session.events
    assert [event.seq for event in events[::-1]] == [2, 1, 0]
    assert [event.seq for event in events[::-2]] == [2, 0]


def test_reversed_iteration_works() -> None:
    session = three_events()
    assert [event.seq for event in reversed(session.events)] == [2, 1, 0]
    assert [event.seq for event in session.events[2:0:-1]] == [2, 1]


def test_an_older_view_never_grows() -> None:
    """§15 scenario 7."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    old = session.events
    session.append("user/message", U("b"), surface_op="append")
    assert len(old) == 1
    assert list(old) == [session.events[0]]
    assert old[-1] is session.events[0]
    with pytest.raises(IndexError):
        old[1]
    assert old[0:5] == (session.events[0],)


def test_views_are_unhashable_like_lists() -> None:
    session = new_session()
    with pytest.raises(TypeError):
        hash(session.events)
