"""Reading beyond ``inspect``: what of a view is stored, seek reads, revisions, following.

Implements the checks of spec/persistence.md §2.1 ``readFrom`` and revisions on every file
store, and a follower that sees events appended by another writer while it waits.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentlog import SessionNotFound, open_store, thaw
from agentlog.stores.files import open_transcript
from tests.stores.legacy import format_0_log, write_log
from tests.stores.saved import STORE_KINDS, grown, save, store_url


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_inspection_tells_stored_events_from_those_of_the_view(kind: str, tmp_path: Path) -> None:
    session = grown(events=60)
    url = store_url(kind, tmp_path)
    open_turn = next(e.seq for e in reversed(session.events) if e.type == "step/start")
    save(url, session, upto=open_turn + 1)  # a crash left the last turn open
    with open_store(url, read_only=True) as store:
        inspection = store.inspection("agent")
    assert inspection.stored_events == open_turn + 1
    view = inspection.session
    added = [view.event_at(seq).type for seq in inspection.virtual_seqs]
    assert added == ["step/end", "turn/end", "session/end-seed"]
    assert inspection.stored_version == 4
    assert inspection.torn_tail is False
    assert inspection.location is not None


@pytest.mark.parametrize("kind", [*STORE_KINDS, "memory"])
def test_read_from_returns_the_stored_suffix_only(kind: str, tmp_path: Path) -> None:
    session = grown(events=40)
    store = open_store("memory:") if kind == "memory" else open_store(store_url(kind, tmp_path))
    with store:
        save(store, session)
        suffix = store.read_from("agent", 30)
        assert [e.seq for e in suffix] == list(range(30, session.seq))
        assert [thaw(e.data) for e in suffix] == [thaw(e.data) for e in session.events[30:]]
        assert store.read_from("agent", session.seq) == []
        assert store.read_from("agent", session.seq + 5) == []
        with pytest.raises(TypeError, match="readFrom fromSeq must be a non-negative safe"):
            store.read_from("agent", -1)
        with pytest.raises(SessionNotFound):
            store.read_from("nope", 0)


def test_read_from_an_older_format_migrates_it_first(tmp_path: Path) -> None:
    path = write_log(tmp_path, *format_0_log())
    store, session_id = open_transcript(path, read_only=True)
    with store:
        everything = store.read_from(session_id, 0)
        assert [e.seq for e in store.read_from(session_id, 3)] == [e.seq for e in everything[3:]]
        assert everything[-1].type != "session/end-seed"  # no marker: only what is stored


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_the_revision_moves_with_every_append(kind: str, tmp_path: Path) -> None:
    url = store_url(kind, tmp_path)
    with open_store(url) as store:
        assert store.revision("s1") is None
        session = store.create("s1")
        session.append("turn/start", {"turn": 1})
        first = store.revision("s1")
        assert first is not None
        assert store.revision("s1") == first
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        assert store.revision("s1") != first
        session.close()


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_follow_sees_what_another_writer_appends(kind: str, tmp_path: Path) -> None:
    url = store_url(kind, tmp_path)
    writer_store = open_store(url)
    writer = writer_store.create("live")
    writer.append("turn/start", {"turn": 1})
    go = threading.Event()

    def write() -> None:
        go.wait(5)
        for step in range(1, 4):
            writer.append("step/start", {"turn": 1, "step": step})
            writer.append("step/end", {"turn": 1, "step": step})

    thread = threading.Thread(target=write)
    thread.start()
    seen = []
    with open_store(url, read_only=True) as reader:
        for event in reader.follow("live", interval=0.02):
            seen.append((event.seq, event.type))
            go.set()
            if len(seen) == 7:
                break
    thread.join()
    writer.close()
    writer_store.close()
    assert seen == [(0, "turn/start")] + [
        (seq, kind_) for seq, kind_ in enumerate(["step/start", "step/end"] * 3, 1)
    ]
