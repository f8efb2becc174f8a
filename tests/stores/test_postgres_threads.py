"""One Session shared by threads on PostgreSQL serializes its appends (DESIGN.md "Reliability").

Eight threads append to one attached session of a PostgreSQL store: single durable appends and
``batch()`` blocks of 2 to 8 events, interleaved at random. The stored rows prove it:

* the seqs are dense from 0 and each thread's events are stored in the order it appended them;
* every ``batch()`` block is one transaction of its own (its rows share one ``xmin``, the id of
  the transaction that inserted them, and no other row has it) and occupies consecutive seqs,
  so no other thread's event lands inside it; every durable append is a transaction of its own;
* what is stored is exactly what the session holds, and reopening gives a valid log.

With ``write_behind=True`` the same holds for the order, the density and the blocks' contiguity
(a block is then written together with whatever was queued before it).
"""

from __future__ import annotations

import random
import threading
from collections import defaultdict
from typing import Any

import pytest

from agentlog import check_invariants, check_provider_history
from agentlog import messages as m
from agentlog.stores import open_store
from tests.stores.pg import admin, schema_of, stored_events

THREADS = 8
APPENDS = 60
"""Events per thread."""


def xmins(url: str, sid: str) -> list[int]:
    """The inserting transaction of each stored event row, by seq."""
    with admin() as connection:
        rows = connection.execute(
            f"SELECT seq, xmin::text::bigint FROM {schema_of(url)}.events "
            "WHERE session_id = %s ORDER BY seq",
            (sid,),
        ).fetchall()
    assert [seq for seq, _ in rows] == list(range(len(rows)))
    return [xmin for _, xmin in rows]


@pytest.mark.parametrize("write_behind", [False, True], ids=["durable", "write-behind"])
def test_threads_sharing_a_session_never_interleave_duplicate_or_lose_a_seq(
    postgres_url: str, write_behind: bool
) -> None:
    blocks: dict[str, list[str]] = {}
    """Message id of each event, per block (``t<thread>b<n>``; singles are blocks of one)."""
    failures: list[BaseException] = []
    with open_store(postgres_url, write_behind=write_behind) as store:
        session = store.create("shared")
        session.append("turn/start", {"turn": 1})

        def work(thread: int) -> None:
            rng = random.Random(thread)
            written = 0
            number = 0
            try:
                while written < APPENDS:
                    size = min(APPENDS - written, rng.choice((1, 1, 2, 5, 8)))
                    name = f"t{thread}b{number}"
                    ids = [f"{name}e{i}" for i in range(size)]
                    blocks[name] = ids
                    if size == 1:
                        session.append("user/message", m.user(name, id=ids[0]), surface_op="append")
                    else:
                        with session.batch():
                            for message_id in ids:
                                message = m.user(f"{thread}:{message_id}", id=message_id)
                                session.append("user/message", message, surface_op="append")
                    written += size
                    number += 1
            except BaseException as exc:  # asserted below
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        held = [event.to_wire() for event in session.events]
        session.close()
    stored = stored_events(postgres_url, "shared")
    assert stored == held
    assert len(stored) == THREADS * APPENDS + 2
    seq_of = {e["data"]["id"]: e["seq"] for e in stored if e["type"] == "user/message"}
    assert len(seq_of) == THREADS * APPENDS, "a message was stored twice or lost"
    by_thread: dict[str, list[int]] = defaultdict(list)
    for name, ids in blocks.items():
        by_thread[name.split("b")[0]] += [seq_of[message_id] for message_id in ids]
    for owner, seqs in by_thread.items():
        assert seqs == sorted(seqs), f"thread {owner}'s events are out of order"
    transactions = xmins(postgres_url, "shared")
    members: dict[int, set[int]] = defaultdict(set)
    for seq, xmin in enumerate(transactions):
        members[xmin].add(seq)
    for name, ids in blocks.items():
        seqs = [seq_of[message_id] for message_id in ids]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"block {name} interleaved"
        if not write_behind:
            assert members[transactions[seqs[0]]] == set(seqs), f"block {name}'s transaction"
    if not write_behind:
        assert len(members) == len(blocks) + 2  # and the turn's start and end
    with open_store(postgres_url) as store, store.open("shared") as reopened:
        check_invariants(reopened.events)
        check_provider_history(reopened.derive_messages())
        assert [event.to_wire() for event in reopened.events][: len(held)] == held


def test_threads_each_with_a_session_of_one_store_share_its_pool(postgres_url: str) -> None:
    """Sixteen threads, one session each, one store (its connection pool holds at most 8):
    every append lands in its own session, in order."""
    failures: list[BaseException] = []
    expected: dict[str, list[dict[str, Any]]] = {}
    with open_store(postgres_url) as store:

        def work(thread: int) -> None:
            try:
                session = store.create(f"s{thread}")
                session.append("turn/start", {"turn": 1})
                for i in range(20):
                    if i % 4 == 0:
                        with session.batch():
                            for j in range(3):
                                message = m.user(f"{thread}:{i}:{j}", id=f"{i}-{j}")
                                session.append("user/message", message, surface_op="append")
                    else:
                        message = m.user(f"{thread}:{i}", id=f"{i}")
                        session.append("user/message", message, surface_op="append")
                session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
                expected[session.id] = [event.to_wire() for event in session.events]
                session.close()
            except BaseException as exc:  # asserted below
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
    for sid, events in expected.items():
        assert stored_events(postgres_url, sid) == events
