"""The writer lease of a JSONL session: a held ``flock`` on ``session.lock`` beside its log.

One writer per session (DESIGN.md, Reliability): the lease locks ``session.lock`` in the
session's directory (``agentlog.stores._file_lock``; the kernel drops the lock when the process
dies, and the file is never deleted while the session exists). It also keeps the transcript
open for appending, with its size after the lease's last write, so an append needs no ``fstat``.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentlog.stores._file_lock import unlock_session
from agentlog.stores.base import Lease
from agentlog.stores.jsonl.layout import LOCK_NAME

__all__ = ["FileLease"]


class FileLease(Lease):
    """A held ``flock`` on ``session.lock``, plus the open transcript of the session.

    The lease of a session not stored yet is *unplaced* (``directory`` is ``None``): its
    directory depends on the header's ``cwd``, so the lock is taken when the first append
    materializes it (``JsonlBackend._place``).
    """

    def __init__(self, session_id: str, directory: Path | None, lock_fd: int | None) -> None:
        self.session_id = session_id
        self.directory = directory
        self._lock_fd: int | None = lock_fd
        self.log_fd: int | None = None
        self.log_size: int | None = None
        """The transcript's size after this lease's last write (``None``: not known yet)."""

    def release(self, *, remove_lock: bool = False) -> None:
        """Close the transcript, then unlock (``remove_lock``: removing the lock file first)."""
        if self.log_fd is not None:
            os.close(self.log_fd)
            self.log_fd = None
            self.log_size = None
        if self._lock_fd is not None:
            assert self.directory is not None
            unlock_session(self._lock_fd, self.directory / LOCK_NAME if remove_lock else None)
            self._lock_fd = None

    @property
    def placed(self) -> Path:
        """The session's directory (the lease holds its lock)."""
        assert self.directory is not None, "the session was never materialized"
        return self.directory
