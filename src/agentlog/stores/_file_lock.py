"""The writer lock of file stores: a non-blocking ``flock`` that dies with its process.

One writer per session (DESIGN.md, Reliability): a writer holds an exclusive ``flock`` on a
lock file for as long as it may append. The kernel drops the lock when the process exits or is
killed, so a lock left by a crashed writer never blocks a reopen; two ``Store`` objects of one
process hold separate open file descriptions, so they exclude each other too. Readers take no
lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from pathlib import Path

from agentlog.errors import SessionLocked
from agentlog.stores._durable_files import same_file

__all__ = ["lock_name", "lock_session", "unlock_session"]


def lock_name(session_id: str) -> str:
    """A file name for the lock of ``session_id``, whatever characters the id holds."""
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest[:32]}.lock"


def lock_session(lock_path: Path, session_id: str) -> int:
    """Take the exclusive lock on ``lock_path`` (created 0600 if missing); return its fd.

    Raises:
        SessionLocked: naming the session and the lock when another writer holds it.
    """
    for _attempt in range(3):
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionLocked(
                f'session "{session_id}" is open for writing by another writer '
                f'(lock "{lock_path}")',
                session_id=session_id,
                path=str(lock_path),
            ) from None
        # The lock file may have been replaced (or removed) between open and flock: lock what
        # the path names now, or try again.
        if same_file(fd, lock_path):
            return fd
        os.close(fd)
    raise SessionLocked(
        f'session "{session_id}" lock file "{lock_path}" keeps changing',
        session_id=session_id,
        path=str(lock_path),
    )


def unlock_session(fd: int, lock_path: Path | None = None) -> None:
    """Release a lock taken by ``lock_session``; with ``lock_path``, remove the file first.

    The file is removed while the lock is still held, so a writer that opened it meanwhile
    finds it replaced (``same_file``) and locks the new one instead.
    """
    if lock_path is not None:
        with contextlib.suppress(FileNotFoundError):
            lock_path.unlink()
    os.close(fd)  # closing the descriptor releases the flock
