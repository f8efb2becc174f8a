"""``Store.repair`` on a SQLite store: delete the rows from a seq on, keeping a copy of them.

Runs inside the backend's write transaction. A cut deletes rows, so what they held is first
written, as JSON lines, to a new file beside the database
(``<database>.cut-at-seq-<N>.<UTC time>.removed.jsonl``) and synced: a first line naming the
session, the cut and the stored tail, then one line per removed row with its columns as stored
(a blob as base64), so even a row that cannot be decoded is kept as it was.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentlog.errors import CorruptLog, SessionNotFound, StoreError
from agentlog.stores._durable_files import fsync_dir, write_new

__all__ = ["COLUMNS", "cut_rows", "save_removed_rows"]

COLUMNS = (
    "session_id",
    "seq",
    "type",
    "time",
    "data",
    "source_event_seqs",
    "surface_op",
    "ignorable",
)
"""The columns of an event row, in table order."""


def cut_rows(
    db: sqlite3.Connection,
    database: Path,
    session_id: str,
    *,
    cut_at: int,
    keep_copy: bool,
    problem: Callable[[tuple[Any, ...]], str | None],
) -> tuple[list[tuple[Any, ...]], Path | None]:
    """Delete the session's rows from seq ``cut_at`` on (inside the caller's transaction).

    Args:
        db: The connection, inside a write transaction.
        database: The database file (the copy goes beside it).
        session_id: The session.
        cut_at: The first seq removed.
        keep_copy: Write the copy (not for a ``:memory:`` database).
        problem: Why a kept row (``seq, type, time, data, ...``) cannot be read, or ``None``.

    Returns:
        The removed rows, and the copy of them (``None`` when nothing was removed or
        ``keep_copy`` is false).

    Raises:
        SessionNotFound: when there is no such session.
        CorruptLog: when a row before ``cut_at`` is missing or damaged (a cut keeps no damage).
        StoreError: when the session holds fewer than ``cut_at`` events.
    """
    stored = db.execute(
        "SELECT next_seq FROM agentlog_sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if stored is None:
        raise SessionNotFound(f'session "{session_id}" not found', session_id=session_id)
    kept = db.execute(
        "SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable "
        "FROM agentlog_events WHERE session_id = ? AND seq >= 0 AND seq < ? ORDER BY seq",
        (session_id, cut_at),
    )
    count = 0
    for index, row in enumerate(kept):
        why = f"it has no event row for seq {index}" if row[0] != index else problem(row)
        if why is not None:
            raise CorruptLog(
                f'cannot cut session "{session_id}" at seq {cut_at}: "{database}" event row seq '
                f"{index} is damaged ({why}); cut at seq {index} or before",
                session_id=session_id,
                path=str(database),
                line=index,
                seq=index,
            )
        count += 1
    if count < cut_at:
        raise StoreError(
            f'cannot cut session "{session_id}" at seq {cut_at}: "{database}" holds {count} '
            "complete event(s)",
            session_id=session_id,
            path=str(database),
        )
    removed = "session_id = ? AND (seq >= ? OR seq < 0)"
    rows = db.execute(
        f"SELECT * FROM agentlog_events WHERE {removed} ORDER BY seq", (session_id, cut_at)
    ).fetchall()
    if not rows and stored[0] == cut_at:
        return rows, None
    saved = None
    if keep_copy:
        saved = save_removed_rows(
            database, session_id, cut_at=cut_at, stored_next_seq=stored[0], rows=rows
        )
    db.execute(f"DELETE FROM agentlog_events WHERE {removed}", (session_id, cut_at))
    db.execute("UPDATE agentlog_sessions SET next_seq = ? WHERE id = ?", (cut_at, session_id))
    return rows, saved


def save_removed_rows(
    database: Path,
    session_id: str,
    *,
    cut_at: int,
    stored_next_seq: int,
    rows: Sequence[Sequence[Any]],
) -> Path:
    """Write (and sync) the copy of ``rows`` beside ``database``; return its path."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = database.with_name(f"{database.name}.cut-at-seq-{cut_at}.{stamp}.removed.jsonl")
    attempt = 1
    while path.exists():
        attempt += 1
        path = path.with_name(
            f"{database.name}.cut-at-seq-{cut_at}.{stamp}-{attempt}.removed.jsonl"
        )
    first = {"session": session_id, "cutAt": cut_at, "storedNextSeq": stored_next_seq}
    lines = [
        first,
        *({name: _column(v) for name, v in zip(COLUMNS, row, strict=True)} for row in rows),
    ]
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    write_new(path, text.encode("utf-8", "surrogatepass"))
    fsync_dir(path.parent)
    return path


def _column(value: object) -> object:
    """A column value as JSON: a blob as ``{"base64": ...}``, anything else as it is."""
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode("ascii")}
    return value
