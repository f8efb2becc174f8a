"""Durable file steps: directories, root lock, all-or-nothing appends (persistence.md §3.6)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agentlog.errors import StoreError
from agentlog.stores._durable_files import (
    fsync_dir,
    make_dirs,
    roll_back,
    root_locked,
    same_file,
    write_all,
)


def test_make_dirs_creates_private_parents_and_tolerates_existing_ones(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c"
    make_dirs(target)
    make_dirs(target)
    for path in (tmp_path / "a", tmp_path / "a" / "b", target):
        assert path.is_dir()
        assert path.stat().st_mode & 0o777 == 0o700
    fsync_dir(target)


def test_root_locked_excludes_a_second_holder(tmp_path: Path) -> None:
    order: list[str] = []
    entered = threading.Event()

    def second() -> None:
        entered.wait()
        with root_locked(tmp_path):  # a fresh descriptor: blocks until the first closes its own
            order.append("second")

    thread = threading.Thread(target=second)
    thread.start()
    with root_locked(tmp_path):
        entered.set()
        thread.join(timeout=0.2)
        assert thread.is_alive()
        order.append("first")
    thread.join()
    assert order == ["first", "second"]


def test_same_file_follows_renames_and_replacements(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"x")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert same_file(fd, path)
        path.rename(tmp_path / "moved")
        assert not same_file(fd, path)
        path.write_bytes(b"y")
        assert not same_file(fd, path)
        assert same_file(fd, tmp_path / "moved")
    finally:
        os.close(fd)


def test_write_all_writes_every_byte_through_short_writes(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    data = os.urandom(1 << 20)  # more than a pipe buffer: os.write returns short counts
    received = bytearray()

    def drain() -> None:
        while chunk := os.read(read_end, 1 << 16):
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    write_all(write_end, data)
    os.close(write_end)
    reader.join()
    os.close(read_end)
    assert bytes(received) == data


def test_roll_back_truncates_to_the_committed_size(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"committed\npartial")
    fd = os.open(path, os.O_RDWR)
    try:
        roll_back(fd, len(b"committed\n"), path, OSError(28, "No space left"), "s1")
    finally:
        os.close(fd)
    assert path.read_bytes() == b"committed\n"


def test_a_failed_roll_back_reports_both_errors(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"data")
    fd = os.open(path, os.O_RDONLY)  # ftruncate on a read-only descriptor fails
    try:
        with pytest.raises(StoreError) as caught:
            roll_back(fd, 0, path, OSError(5, "Input/output error"), "s1")
    finally:
        os.close(fd)
    message = str(caught.value)
    assert message.startswith(f'failed to roll back append to "{path}": [Errno 5] Input/output')
    assert "; rollback: [Errno" in message
    assert caught.value.session_id == "s1"
    assert path.read_bytes() == b"data"
