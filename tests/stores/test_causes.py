"""The real cause of a storage failure, in words, ahead of the driver's own text."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from agentlog.stores._causes import os_cause, sqlite_cause


def test_os_errors_name_their_cause_first() -> None:
    full = OSError(errno.ENOSPC, "No space left on device")
    assert os_cause(full) == "disk full ([Errno 28] No space left on device)"
    assert os_cause(OSError(errno.EROFS, "Read-only file system")).startswith(
        "read-only file system ("
    )
    assert os_cause(OSError(errno.EACCES, "Permission denied")).startswith("permission denied (")


def test_an_os_error_without_a_known_cause_keeps_its_own_text() -> None:
    assert os_cause(OSError(errno.EAGAIN, "Try again")) == "[Errno 11] Try again"


def test_sqlite_errors_are_named_by_their_primary_result_code(tmp_path: Path) -> None:
    error = sqlite3.OperationalError("database or disk is full")
    error.sqlite_errorcode = 13  # as the driver sets it
    assert sqlite_cause(error) == "disk full (database or disk is full)"
    extended = sqlite3.OperationalError("disk I/O error")
    extended.sqlite_errorcode = 10 | (4 << 8)  # SQLITE_IOERR_READ
    assert sqlite_cause(extended, tmp_path / "x.db") == "I/O error (disk I/O error)"


def test_a_sqlite_error_without_a_code_names_its_class() -> None:
    assert sqlite_cause(sqlite3.InterfaceError("bad parameter")) == "InterfaceError: bad parameter"
