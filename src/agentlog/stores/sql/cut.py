"""``Store.repair`` on a SQL store: delete the rows from a seq on, keeping a copy of them.

Runs inside the backend's write transaction. A cut deletes rows, so what they held is first
kept by the backend's ``_keep_removed`` hook — for a database file, as JSON lines in a new file
beside it (``<database>.cut-at-seq-<N>.<UTC time>.removed.jsonl``, ``save_removed_rows``),
synced: a first line naming the session, the cut and the stored tail, then one line per removed
row with its columns as stored (a blob as base64), so even a row that cannot be decoded is kept
as it was.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from agentlog.errors import CorruptLog, StoreError
from agentlog.stores._durable_files import fsync_dir, write_new
from agentlog.stores.base import session_not_found
from agentlog.stores.sql.rows import EVENT_COLUMNS

__all__ = ["COLUMNS", "Cursor", "Execute", "cut_rows", "save_removed_rows"]

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


class Cursor(Protocol):
    """What the template needs of a DB-API cursor (sqlite3's and psycopg's both are)."""

    rowcount: int

    def fetchone(self) -> Any:
        """The next row, or ``None``."""

    def fetchall(self) -> list[Any]:
        """The remaining rows."""

    def __iter__(self) -> Any:
        """The remaining rows, one at a time."""


Execute = Callable[[str, Sequence[Any]], Cursor]
"""Run one statement (written with ``?`` and ``{sessions}`` / ``{events}``) in the open
transaction."""


def cut_rows(
    execute: Execute,
    session_id: str,
    *,
    cut_at: int,
    location: str,
    problem: Callable[[tuple[Any, ...]], str | None],
    keep: Callable[[int, list[tuple[Any, ...]]], str | None],
) -> tuple[list[tuple[Any, ...]], str | None]:
    """Delete the session's rows from seq ``cut_at`` on (inside the caller's transaction).

    Args:
        execute: Runs a statement in the write transaction.
        session_id: The session.
        cut_at: The first seq removed.
        location: The database, for messages.
        problem: Why a kept row (``seq, type, time, data, ...``) cannot be read, or ``None``.
        keep: Keeps a durable copy of the removed rows (given the stored next seq); returns
            where, or ``None`` when the store keeps none.

    Returns:
        The removed rows, and where their copy is (``None`` when nothing was removed or the
        store keeps no copy).

    Raises:
        SessionNotFound: when there is no such session.
        CorruptLog: when a row before ``cut_at`` is missing or damaged (a cut keeps no damage).
        StoreError: when the session holds fewer than ``cut_at`` events.
    """
    stored = execute("SELECT next_seq FROM {sessions} WHERE id = ?", (session_id,)).fetchone()
    if stored is None:
        raise session_not_found(session_id)
    kept = execute(
        f"SELECT {EVENT_COLUMNS} FROM {{events}} WHERE session_id = ? AND seq >= 0 AND seq < ? "
        "ORDER BY seq",
        (session_id, cut_at),
    )
    count = 0
    for index, row in enumerate(kept):
        why = f"it has no event row for seq {index}" if row[0] != index else problem(tuple(row))
        if why is not None:
            raise CorruptLog(
                f'cannot cut session "{session_id}" at seq {cut_at}: "{location}" event row seq '
                f"{index} is damaged ({why}); cut at seq {index} or before",
                session_id=session_id,
                path=location,
                line=index,
                seq=index,
            )
        count += 1
    if count < cut_at:
        raise StoreError(
            f'cannot cut session "{session_id}" at seq {cut_at}: "{location}" holds {count} '
            "complete event(s)",
            session_id=session_id,
            path=location,
        )
    removed = "session_id = ? AND (seq >= ? OR seq < 0)"
    rows = [
        tuple(row)
        for row in execute(
            f"SELECT {', '.join(COLUMNS)} FROM {{events}} WHERE {removed} ORDER BY seq",
            (session_id, cut_at),
        ).fetchall()
    ]
    if not rows and stored[0] == cut_at:
        return rows, None
    saved = keep(stored[0], rows)
    execute(f"DELETE FROM {{events}} WHERE {removed}", (session_id, cut_at))
    execute("UPDATE {sessions} SET next_seq = ? WHERE id = ?", (cut_at, session_id))
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
