"""The cold read of ``AgentlogSession``: the trusted read gives exactly the full path's items.

``stored_items`` (the items straight from ``Store.read_raw``) is compared with what the full
path gives for the same log: the session opened for writing (every event validated, the
surface folded, a crash repaired) and read by an ``ItemLog``. Logs it cannot vouch for (a turn
left open, a torn tail, damage, a foreign vocabulary) must go the full way, or be refused.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlog import ExtractiveSummarizer, open_store
from agentlog.adapters._item_log import ItemLog, _ItemBatch, freeze_items
from agentlog.adapters._stored_items import stored_items
from agentlog.adapters._writer import LogState
from agentlog.adapters.openai_agents import AgentlogSession
from agentlog.errors import CorruptLog, FormatVersionError
from agentlog.stores import Store
from tests.adapters.strategies import any_item

_ids = itertools.count()


def turn_items(rng: random.Random, n: int) -> list[Any]:
    """One runner turn: a prompt, a call, its output and the reply, long enough to be elided."""

    def words(count: int) -> str:
        return " ".join(rng.choice(("alpha", "beta", "gamma", "delta")) for _ in range(count))

    return [
        {"role": "user", "content": words(40)},
        {"type": "function_call", "call_id": f"c{n}", "name": "read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": f"c{n}", "output": words(60)},
        {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": words(30), "annotations": []}],
        },
    ]


def full_items(store: Store, session_id: str) -> list[Any]:
    """The full path: open for writing (validate, fold, repair), then the item log's items."""
    session = store.open(session_id)
    try:
        return ItemLog(session).items(None)
    finally:
        session.close()


def same_both_ways(store: Store, session_id: str) -> list[Any]:
    """Check the trusted read against the full path (before and after the open's marker)."""
    fast = stored_items(store, session_id)
    assert fast is not None
    full = full_items(store, session_id)
    assert fast == full
    assert stored_items(store, session_id) == full
    return full


@pytest.fixture(params=["sqlite", "jsonl", "memory", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres_url")
    elif request.param == "memory":
        url = "memory:"
    else:
        url = f"{request.param}:///{tmp_path}/store" + (".db" if request.param == "sqlite" else "")
    opened = open_store(url)
    yield opened
    opened.close()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_the_trusted_read_matches_the_full_path_through_removals_and_compaction(
    store: Store,
) -> None:
    rng = random.Random(7)
    session = AgentlogSession("s", store, summarizer=ExtractiveSummarizer())
    checked: list[Any] = []

    def checkpoint() -> None:
        nonlocal session
        session.close()
        checked.append(same_both_ways(store, "s"))
        session = AgentlogSession("s", store, summarizer=ExtractiveSummarizer())
        assert run(session.get_items()) == checked[-1]  # served by the trusted read

    assert run(session.get_items()) == []  # nothing stored yet: nothing opened either
    for n in range(3):  # long strings: kept once, in the message (elided from the items)
        run(session.add_items(turn_items(rng, n)))
    checkpoint()
    assert len(checked[-1]) == 12
    popped = run(session.pop_item())
    assert popped["type"] == "message"
    run(session.pop_item())  # the output: the call comes back as a node of its own
    checkpoint()
    run(session.add_items(turn_items(rng, 3)))
    run(session.run_compaction({"force": True}))  # a summary replace citing what it shadows
    checkpoint()
    run(session._atomic_replace_items([{"role": "user", "content": "x " * 80}]))
    checkpoint()
    run(session.clear_session())
    checkpoint()
    assert checked[-1] == []
    run(session.add_items(turn_items(rng, 4)))
    checkpoint()
    session.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(any_item(), min_size=1, max_size=5), max_size=5))
def test_any_items_come_back_the_same_either_way(batches: list[list[Any]]) -> None:
    store = open_store("memory:")
    session_id = f"s{next(_ids)}"
    log = ItemLog(store.create(session_id))
    for batch in batches:
        log.add(freeze_items(session_id, batch))
    log.session.close()
    if not batches:
        assert stored_items(store, session_id) == []
        return
    assert same_both_ways(store, session_id) == [item for batch in batches for item in batch]


def crash_mid_turn(store: Store, session_id: str) -> None:
    """A writer that died after the model's call was logged, before its output."""
    with AgentlogSession(session_id, store) as session:
        run(session.add_items([{"role": "user", "content": "add 1 and 2"}]))
    log = store.open(session_id)
    call = {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"}
    batch = _ItemBatch(LogState(log))
    batch.add_item(freeze_items(session_id, [call])[0])
    batch.flush()  # turn/start, step/start, the call, tool/call: each durable, no turn/end
    log.close()


def test_a_turn_left_open_goes_the_full_way_and_then_reads_the_repair(store: Store) -> None:
    crash_mid_turn(store, "crashed")
    assert stored_items(store, "crashed") is None  # only the resume adds the closers
    with AgentlogSession("crashed", store) as session:
        items = run(session.get_items())  # opened for writing: repaired
    assert [item.get("type") for item in items] == [None, "function_call", "function_call_output"]
    assert items[2]["call_id"] == "c1"
    # The closer's result is a node agentlog wrote itself (no items kept): converted the same.
    assert same_both_ways(store, "crashed") == items


def test_a_torn_tail_goes_the_full_way(tmp_path: Path) -> None:
    store = open_store(f"jsonl:///{tmp_path}/j")
    with AgentlogSession("torn", store) as session:
        run(session.add_items(turn_items(random.Random(1), 0)))
    log = next(tmp_path.rglob("session.v4.jsonl"))
    log.write_bytes(log.read_bytes()[:-9])  # the last record (turn/end), cut short
    assert stored_items(store, "torn") is None
    with AgentlogSession("torn", store) as session:
        items = run(session.get_items())  # the open drops the tail and closes the turn
    assert len(items) == 4
    assert same_both_ways(store, "torn") == items


def sqlite_store(tmp_path: Path) -> tuple[Store, Path]:
    path = tmp_path / "s.db"
    store = open_store(f"sqlite:///{path}")
    with AgentlogSession("s", store) as session:
        for n in range(2):
            run(session.add_items(turn_items(random.Random(n), n)))
    return store, path


def damage(path: Path, seq: int) -> None:
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE agentlog_events SET data = '{not json' WHERE seq = ?", (seq,))
    db.close()


def event_types(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [row[0] for row in db.execute("SELECT type FROM agentlog_events ORDER BY seq")]
    finally:
        db.close()


def test_a_damaged_message_is_refused_by_the_trusted_read(tmp_path: Path) -> None:
    store, path = sqlite_store(tmp_path)
    seq = event_types(path).index("tool/result")
    damage(path, seq)
    with pytest.raises(CorruptLog) as refused:
        stored_items(store, "s")
    assert refused.value.seq == seq
    with AgentlogSession("s", store) as session, pytest.raises(CorruptLog):
        run(session.get_items())


def test_damage_the_trusted_read_skips_is_refused_at_the_first_write(tmp_path: Path) -> None:
    store, path = sqlite_store(tmp_path)
    damage(path, event_types(path).index("tool/call"))  # a record the items do not need
    session = AgentlogSession("s", store)
    assert len(run(session.get_items())) == 8
    with pytest.raises(CorruptLog):
        run(session.add_items([{"role": "user", "content": "more"}]))
    session.close()


def add_foreign_event(path: Path, event_type: str, *, ignorable: bool) -> None:
    """Store one more event, of a type this build does not declare, as another writer would."""
    db = sqlite3.connect(path)
    with db:
        (seq,) = db.execute("SELECT next_seq FROM agentlog_sessions WHERE id = 's'").fetchone()
        db.execute(
            "INSERT INTO agentlog_events VALUES ('s', ?, ?, 0, '{}', NULL, NULL, ?)",
            (seq, event_type, 1 if ignorable else None),
        )
        db.execute("UPDATE agentlog_sessions SET next_seq = ? WHERE id = 's'", (seq + 1,))
    db.close()


def test_a_foreign_vocabulary_goes_the_full_way(tmp_path: Path) -> None:
    store, path = sqlite_store(tmp_path)
    add_foreign_event(path, "vendor/note", ignorable=True)
    assert stored_items(store, "s") is None  # not a log only agentlog's own vocabulary wrote
    with AgentlogSession("s", store) as session:
        kept = run(session.get_items())  # the full open accepts an ignorable unknown event
    assert len(kept) == 8
    add_foreign_event(path, "vendor/secret", ignorable=False)
    with AgentlogSession("s", store) as session, pytest.raises(FormatVersionError):
        run(session.get_items())


def test_a_foreign_message_the_items_cannot_come_from_goes_the_full_way(tmp_path: Path) -> None:
    store, path = sqlite_store(tmp_path)
    seq = event_types(path).index("assistant/message")
    db = sqlite3.connect(path)
    with db:  # a message without content, items of the wrong shape: not what agentlog writes
        db.execute(
            "UPDATE agentlog_events SET data = ? WHERE seq = ?",
            ('{"turn":1,"step":1,"message":{"role":"assistant"},"responseItems":7}', seq),
        )
    db.close()
    assert stored_items(store, "s") is None
    with AgentlogSession("s", store) as session, pytest.raises(CorruptLog):
        run(session.get_items())
