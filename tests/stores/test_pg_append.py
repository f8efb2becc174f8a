"""The PostgreSQL append: the expected-seq fence and batches too large for one message.

Against the real server (``postgres_url``). Appends whose COMMIT outcome is unknown are proved
in ``test_postgres_commit.py``.
"""

from __future__ import annotations

import threading

import pytest

from agentlog.errors import ConcurrentWriteError, SessionAlreadyExists
from agentlog.stores import open_backend
from agentlog.stores._pg_append import CHUNK_BYTES
from agentlog.values import dumps

# --- the expected-seq fence -----------------------------------------------------------------


def test_racing_appends_at_one_seq_store_exactly_one(postgres_url: str) -> None:
    """Eight threads append different events at the same next seq under one lease (as writers
    that lost track of the tail would): one wins, seven get ``ConcurrentWriteError``, and the
    log holds the winner's event once."""
    backend = open_backend(postgres_url)
    lease = backend.lease("s1")
    header = {"version": 4, "id": "s1", "createdAt": 1, "isSeeded": False, "delegationDepth": 0}
    try:
        backend.append(
            lease,
            header,
            [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}],
            next_seq=0,
        )
        with pytest.raises(SessionAlreadyExists):
            backend.append(lease, header, [], next_seq=0)
        outcomes: list[object] = []
        start = threading.Barrier(8)

        def race(index: int) -> None:
            event = {"type": "step/start", "seq": 1, "time": 1, "data": {"turn": 1, "step": index}}
            start.wait()
            try:
                backend.append(lease, header, [event], next_seq=1)
                outcomes.append(index)
            except ConcurrentWriteError as exc:
                outcomes.append(exc)

        threads = [threading.Thread(target=race, args=(index,)) for index in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        winners = [o for o in outcomes if isinstance(o, int)]
        losers = [o for o in outcomes if isinstance(o, ConcurrentWriteError)]
        assert (len(winners), len(losers)) == (1, 7)
        assert all((e.expected_seq, e.stored_seq) == (1, 2) for e in losers)
        stored = backend.read("s1").events
        assert [e["seq"] for e in stored] == [0, 1]
        assert stored[1]["data"] == {"turn": 1, "step": winners[0]}
    finally:
        lease.release()
        backend.close()


# --- large batches --------------------------------------------------------------------------


@pytest.mark.parametrize("fenced", [False, True], ids=["written", "refused"])
def test_a_batch_of_many_megabytes_is_written_in_chunks_without_hanging(
    postgres_url: str, fenced: bool
) -> None:
    """Some 20 MB in one append: sent in ``CHUNK_BYTES`` statements outside a pipeline (a
    pipeline holding one message this large never returned: the server waited for the rest of
    it while the client waited for results). A refused one is refused before its rows go."""
    backend = open_backend(postgres_url)
    lease = backend.lease("big")
    header = {"version": 4, "id": "big", "createdAt": 1, "isSeeded": False, "delegationDepth": 0}
    text = "agent log " * 40  # 400 bytes, stored uncompressed
    events = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}]
    events += [
        {
            "type": "user/message",
            "seq": seq,
            "time": 1,
            "data": {"role": "user", "content": [{"type": "text", "text": f"{seq} {text}"}]},
            "surfaceOp": "append",
        }
        for seq in range(1, 50_001)
    ]
    assert sum(len(dumps(event["data"])) for event in events) > 16 * CHUNK_BYTES
    outcome: list[object] = []

    def append() -> None:
        try:
            if fenced:
                backend.append(lease, header, events[:1], next_seq=0)
            backend.append(lease, header, events[int(fenced) :], next_seq=0)
            outcome.append("written")
        except SessionAlreadyExists as exc:
            outcome.append(exc)

    try:
        writer = threading.Thread(target=append, daemon=True)
        writer.start()
        writer.join(120)
        assert not writer.is_alive(), "the append hung"
        stored = backend.read("big").events
        if fenced:
            assert isinstance(outcome[0], SessionAlreadyExists)
            assert len(stored) == 1
        else:
            assert outcome == ["written"]
            assert [dict(e) for e in stored] == events
    finally:
        lease.release()
        backend.close()
