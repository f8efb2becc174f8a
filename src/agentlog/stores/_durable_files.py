"""Durable file-system steps: directories, publication locks, writes that all land or none.

The fsync discipline of spec/persistence.md §3.6 and §9: a created directory is fsynced into
its parent, a published file's directory is fsynced after ``link()``, an append is written in
full or truncated back, and a failed rollback is reported with both errors.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from agentlog.errors import StoreError

__all__ = [
    "fsync_dir",
    "make_dirs",
    "roll_back",
    "root_locked",
    "same_file",
    "write_all",
    "write_new",
]


def make_dirs(directory: Path) -> None:
    """Create ``directory`` (0700) and its missing parents, fsyncing each parent."""
    missing = []
    current = directory
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        fsync_dir(path.parent)


@contextlib.contextmanager
def root_locked(root: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the store's root directory (while publishing a log)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def same_file(fd: int, path: Path) -> bool:
    try:
        current = path.stat()
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (opened.st_dev, opened.st_ino) == (current.st_dev, current.st_ino)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_new(path: Path, content: bytes) -> None:
    """Write ``content`` to a new file (0600; never an existing one) and fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        write_all(fd, content)
        os.fsync(fd)
    finally:
        os.close(fd)


def roll_back(fd: int, size: int, path: Path, cause: OSError, session_id: str) -> None:
    """Truncate a failed append away; if even that fails, say so with both errors."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError as rollback:
        raise StoreError(
            f'failed to roll back append to "{path}": {cause}; rollback: {rollback}',
            session_id=session_id,
            path=str(path),
        ) from rollback
