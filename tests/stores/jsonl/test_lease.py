"""The JSONL writer lease: ``session.lock`` beside the log, placed by the header's cwd."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlog.errors import SessionLocked
from agentlog.stores import open_backend
from agentlog.stores.jsonl.lease import FileLease

HEADER = {"version": 4, "id": "s", "createdAt": 1, "cwd": "/w", "isSeeded": False}
EVENT = {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}


def test_a_new_session_is_locked_where_its_cwd_places_it(tmp_path: Path) -> None:
    backend = open_backend(f"jsonl:///{tmp_path}")
    lease = backend.lease("s")
    assert isinstance(lease, FileLease)
    assert lease.directory is None  # unplaced: nothing is created before the first append
    assert list(tmp_path.iterdir()) == []
    backend.append(lease, HEADER, [EVENT], next_seq=0)
    assert lease.directory == tmp_path / "--w--" / "s"
    assert (lease.directory / "session.lock").is_file()
    with pytest.raises(SessionLocked, match='session "s" is open for writing'):
        backend.lease("s")
    lease.release()
    lease.release()  # idempotent
    again = backend.lease("s")
    assert isinstance(again, FileLease)
    assert again.directory == tmp_path / "--w--" / "s"
    again.release(remove_lock=True)
    assert not (tmp_path / "--w--" / "s" / "session.lock").exists()


def test_a_second_creator_of_the_id_is_refused_at_its_lock(tmp_path: Path) -> None:
    backend = open_backend(f"jsonl:///{tmp_path}")
    first, second = backend.lease("s"), backend.lease("s")
    backend.append(first, HEADER, [EVENT], next_seq=0)
    with pytest.raises(SessionLocked):
        backend.append(second, HEADER, [EVENT], next_seq=0)
    for lease in (first, second):
        lease.release()
    assert len(backend.read("s").events) == 1
