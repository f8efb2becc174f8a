"""The file stores' writer lock: exclusive between open file descriptions, gone with its holder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentlog import SessionLocked
from agentlog.stores._file_lock import lock_session, unlock_session


def test_a_second_holder_is_refused_naming_the_session_and_the_lock(tmp_path: Path) -> None:
    lock = tmp_path / "session.lock"
    fd = lock_session(lock, "s1")
    try:
        with pytest.raises(SessionLocked) as refused:
            lock_session(lock, "s1")  # a second open file description of this process
        assert str(refused.value) == (
            f'session "s1" is open for writing by another writer (lock "{lock}")'
        )
        assert refused.value.path == str(lock)
    finally:
        unlock_session(fd)
    unlock_session(lock_session(lock, "s1"))  # released: free again


def test_removing_the_file_on_unlock_lets_the_next_holder_lock_a_new_one(tmp_path: Path) -> None:
    lock = tmp_path / "session.lock"
    unlock_session(lock_session(lock, "s1"), lock)
    assert not lock.exists()
    fd = lock_session(lock, "s1")
    assert lock.exists()
    unlock_session(fd)


def test_the_lock_dies_with_its_process(tmp_path: Path) -> None:
    lock = tmp_path / "session.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, pathlib; from agentlog.stores._file_lock import lock_session; "
            f"lock_session(pathlib.Path({str(lock)!r}), 's1'); print('held', flush=True); "
            "sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(SessionLocked):
            lock_session(lock, "s1")
    finally:
        holder.kill()
        holder.wait()
    unlock_session(lock_session(lock, "s1"))
