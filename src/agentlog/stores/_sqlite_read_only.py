"""Reading a SQLite store without creating a file: not the database, not its ``-wal``/``-shm``.

A plain read-only connection (``mode=ro``) to a WAL database creates the ``-wal`` and ``-shm``
files when they are missing and, being unable to checkpoint, leaves them behind. When no
``-wal`` file exists, every committed transaction is in the main file, so an ``immutable``
connection (which touches nothing else) reads it exactly — unless a writer arrives during the
read and checkpoints into the file under it. The ``-wal`` file appearing meanwhile says so, and
the read is then done again through a plain read-only connection (the writer's files exist by
then, so nothing is created).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

__all__ = ["read_only_query"]

_T = TypeVar("_T")


def read_only_query(path: Path, operation: Callable[[sqlite3.Connection], _T]) -> _T:
    """Run ``operation`` on a read-only connection to ``path`` that creates no file."""
    wal = path.with_name(path.name + "-wal")
    uri = path.resolve().as_uri()
    if not wal.exists():
        db = sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)
        try:
            result = operation(db)
        except Exception:
            if not wal.exists():
                raise
        else:
            if not wal.exists():
                return result
        finally:
            db.close()
    # A writer is (or was, and crashed) using the database: read its WAL too.
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, timeout=5.0)
    try:
        return operation(db)
    finally:
        db.close()
