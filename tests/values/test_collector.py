"""Frozen values stay out of the cyclic garbage collector's work, and are still freed.

Stored events and derived messages are immutable and acyclic, so the C accelerator takes every
frozen container it builds (and every ``Event``) out of the collector's lists: a long session's
log then costs a full collection nothing (DESIGN.md, Performance targets: no collector stalls).
These tests state what that must not change — values, equality, serialization, freeing — and
that the pure-Python fallback, which cannot untrack anything, behaves the same otherwise.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings

from agentlog import Session, messages, open_store, thaw
from agentlog.events import Event, event_or_record
from agentlog.values import (
    freeze_owned,
    settled_types,
    snapshot,
    untrack,
)
from agentlog.values._snapshot import python_snapshot
from tests.values.support import needs_accelerator
from tests.values.test_snapshot import VALID_JSON, assert_same_tree


def containers(value: Any) -> list[Any]:
    """Every dict and list of ``value``, the root included."""
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            stack.extend(item)
    return found


def tracked_objects() -> int:
    gc.collect()
    return len(gc.get_objects())


# --- values and equality ------------------------------------------------------------------


@needs_accelerator
def test_snapshot_hands_back_containers_the_collector_does_not_track() -> None:
    frozen = snapshot({"content": [{"type": "text", "text": "hi"}], "meta": {"n": [1, 2]}})
    assert containers(frozen)
    assert not any(gc.is_tracked(item) for item in containers(frozen))


@needs_accelerator
def test_a_parsed_record_frozen_in_place_is_not_tracked() -> None:
    record = orjson.loads(b'{"a": [{"b": [1, {"c": null}]}], "d": {"e": "f"}}')
    assert gc.is_tracked(record)
    frozen = freeze_owned(record)
    assert frozen is record
    assert not any(gc.is_tracked(item) for item in containers(frozen))


@needs_accelerator
def test_appended_events_and_their_messages_are_not_tracked() -> None:
    session = Session.create("s", clock=lambda: 0)
    event = session.append("user/message", messages.user("hi", id="u1"), surface_op="append")
    (message,) = session.derive_messages()
    assert not gc.is_tracked(event)
    assert not any(gc.is_tracked(item) for item in containers(event))
    assert not gc.is_tracked(message)


@settings(max_examples=200)
@given(VALID_JSON)
def test_untracked_values_equal_tracked_ones_in_every_way(value: Any) -> None:
    """The accelerator's untracked snapshot against the Python walker's tracked one."""
    untracked, tracked = snapshot(value), python_snapshot(value)
    assert_same_tree(untracked, tracked)
    assert untracked == tracked == value
    assert orjson.dumps(untracked) == orjson.dumps(tracked) == orjson.dumps(value)
    assert thaw(untracked) == value


@needs_accelerator
def test_untrack_takes_only_frozen_values() -> None:
    frozen = snapshot({"a": [1]})
    assert untrack(frozen) is frozen
    with pytest.raises(TypeError, match="FrozenDict or a FrozenList"):
        untrack({"a": [1]})


# --- freeing ------------------------------------------------------------------------------


def test_a_dropped_frozen_value_is_freed_at_once() -> None:
    """Reference counting frees untracked containers: the string they held is released."""
    marker = "a string longer than the shared ones, held only here " + os.urandom(8).hex()
    baseline = sys.getrefcount(marker)
    frozen = snapshot({"deep": [{"text": marker}, [marker]]})
    assert sys.getrefcount(marker) == baseline + 2
    del frozen
    assert sys.getrefcount(marker) == baseline


def test_a_dropped_session_frees_its_log_with_it() -> None:
    """A session is freed by the collector (it holds cycles); its untracked log goes with it."""
    marker = "a tool result nobody else holds " + os.urandom(8).hex()
    baseline = sys.getrefcount(marker)
    session = Session.create("s", clock=lambda: 0)
    session.append("user/message", messages.user(marker, id="u1"), surface_op="append")
    session.derive_messages()
    assert sys.getrefcount(marker) > baseline
    alive = weakref.ref(session)
    del session
    gc.collect()
    assert alive() is None
    assert sys.getrefcount(marker) == baseline


def test_a_dropped_event_record_is_freed_at_once() -> None:
    marker = "a stored text nobody else holds " + os.urandom(8).hex()
    baseline = sys.getrefcount(marker)
    record = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "note": [marker]}}
    event = event_or_record(record)
    del record
    assert sys.getrefcount(marker) == baseline + 1
    del event
    assert sys.getrefcount(marker) == baseline


# --- what the collector walks --------------------------------------------------------------


@needs_accelerator
def test_a_growing_log_adds_nothing_for_the_collector_to_walk() -> None:
    session = Session.create("s", clock=lambda: 0)
    session.append("turn/start", {"turn": 1})
    session.append("user/message", messages.user("warm up", id="u0"), surface_op="append")
    before = tracked_objects()
    for n in range(2_000):
        session.append(
            "user/message", messages.user(f"message {n}", id=f"u{n + 1}"), surface_op="append"
        )
    session.derive_messages()
    assert tracked_objects() - before < 50  # not one per event (2,000) or per container


@needs_accelerator
def test_a_cold_open_adds_nothing_for_the_collector_to_walk(tmp_path: Path) -> None:
    url = f"jsonl:///{tmp_path}"
    with open_store(url) as store, store.create("s") as session, session.batch():
        session.append("turn/start", {"turn": 1})
        for n in range(2_000):
            session.append("user/message", messages.user(f"m {n}", id=f"u{n}"), surface_op="append")
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    before = tracked_objects()
    with open_store(url) as store:
        session = store.inspect("s")
        session.derive_messages()
        assert all(type(event) is Event for event in session.events)
        assert tracked_objects() - before < 200


# --- the pure-Python fallback --------------------------------------------------------------

_FALLBACK = """
import gc, sys
from agentlog import Session, messages, open_store
from agentlog.events import settle_owned_wire
from agentlog.values import _snapshot, snapshot, untrack
assert _snapshot._speedups is None
frozen = snapshot({"a": [1, {"b": "c"}]})
assert untrack(frozen) is frozen and gc.is_tracked(frozen)
assert settle_owned_wire({"type": "x", "seq": 0, "time": 0, "data": {}}) is None
url = "jsonl:///" + sys.argv[1]
with open_store(url) as store, store.create("s") as session:
    with session.batch():
        session.append("turn/start", {"turn": 1})
        session.append("user/message", messages.user("hi", id="u1"), surface_op="append")
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    written = [event.to_wire() for event in session.events]
    derived = session.derive_messages()
with open_store(url) as store:
    reopened = store.inspect("s")
    assert [event.to_wire() for event in reopened.events][: len(written)] == written
    assert reopened.derive_messages() == derived
print("ok")
"""


def test_the_pure_python_fallback_gives_the_same_sessions(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-c", _FALLBACK, str(tmp_path)],
        env={**os.environ, "AGENTLOG_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"


# --- settled_types (the rebuild's one pass over a settled log) ------------------------------


def test_settled_types_are_the_types_of_a_log_of_events_only() -> None:
    session = Session.create("s", clock=lambda: 0)
    session.append("turn/start", {"turn": 1})
    session.append("user/message", messages.user("hi", id="u1"), surface_op="append")
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    events = list(session.events)
    assert settled_types(events, Event) == {"turn/start", "user/message", "turn/end"}
    assert settled_types([], Event) == set()
    assert settled_types([*events, {"type": "turn/start"}], Event) is None
    assert settled_types([*events, snapshot({"type": "x"})], Event) is None
