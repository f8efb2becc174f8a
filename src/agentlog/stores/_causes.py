"""The real cause of a failed storage operation, in words (STYLE.md §16, DESIGN Reliability).

A driver error names its own symptom ("OperationalError", "[Errno 28]"); a user needs the
cause: disk full, read-only file system, permission, I/O error. Each store maps its driver's
errors once, at its boundary, and puts these words first in the message.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
from pathlib import Path
from typing import Final

__all__ = ["os_cause", "sqlite_cause"]

_OS_CAUSES: Final = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EIO: "I/O error",
    errno.EFBIG: "file too large",
    errno.ENOTDIR: "not a directory",
    errno.EISDIR: "is a directory",
    errno.ENOENT: "no such file or directory",
    errno.EEXIST: "already exists",
    errno.EMFILE: "too many open files",
    errno.ENFILE: "too many open files",
    errno.ENAMETOOLONG: "file name too long",
}

_SQLITE_CAUSES: Final = {
    3: "permission denied",  # SQLITE_PERM
    5: "database is locked by another connection",  # SQLITE_BUSY
    6: "database table is locked",  # SQLITE_LOCKED
    7: "out of memory",  # SQLITE_NOMEM
    8: "read-only database or file system",  # SQLITE_READONLY
    10: "I/O error",  # SQLITE_IOERR
    11: "the database file is damaged",  # SQLITE_CORRUPT
    13: "disk full",  # SQLITE_FULL
    14: "cannot open the database file",  # SQLITE_CANTOPEN
    18: "value too big",  # SQLITE_TOOBIG
    19: "constraint violated",  # SQLITE_CONSTRAINT
    23: "permission denied",  # SQLITE_AUTH
    26: "not a database file",  # SQLITE_NOTADB
}


def os_cause(exc: OSError) -> str:
    """``<cause> (<error>)`` for an ``OSError``, e.g. ``disk full ([Errno 28] No space ...)``."""
    cause = _OS_CAUSES.get(exc.errno or 0)
    return f"{cause} ({exc})" if cause else str(exc)


def sqlite_cause(exc: Exception, database: Path | None = None) -> str:
    """``<cause> (<error>)`` for an ``sqlite3`` error (by its primary result code).

    SQLite reports a full disk while writing its journal as an I/O error; when the database's
    file system has no free blocks left, that is said instead, and "file too large" when a file
    of the database is at the process's file size limit.
    """
    code = getattr(exc, "sqlite_errorcode", None)
    cause = _SQLITE_CAUSES.get(code & 0xFF) if isinstance(code, int) else None
    if cause in ("I/O error", "disk full") and database is not None:
        if _no_space(database):
            cause = "disk full"
        elif _at_size_limit(database):
            cause = "file too large"
    return f"{cause} ({exc})" if cause else f"{type(exc).__name__}: {exc}"


def _no_space(database: Path) -> bool:
    with contextlib.suppress(OSError):
        stats = os.statvfs(database.parent)
        return stats.f_bavail == 0 or stats.f_favail == 0
    return False


def _at_size_limit(database: Path, margin: int = 1 << 20) -> bool:
    """Whether the database or its journal is near the process's file size limit.

    A write past ``RLIMIT_FSIZE`` fails with EFBIG, which SQLite reports only as an I/O error.
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft == resource.RLIM_INFINITY:
        return False
    for suffix in ("", "-wal", "-journal"):
        with contextlib.suppress(OSError):
            if os.stat(f"{database}{suffix}").st_size + margin >= soft:
                return True
    return False
