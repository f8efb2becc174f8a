"""Full-text search across sessions through a separate, disposable SQLite FTS5 index.

Implements the idea of spec/persistence.md §6.4 (``session-query-sqlite``): the index is its
own database, never the store; it is brought up to date by comparing each session's revision
with the one it indexed and reading only new or changed sessions, through the non-mutating
``Store.inspection`` (so searching never repairs or writes a log). One row per event holds the
event's text (message text, tool calls and results, any other string in its data). Queries are
literal phrases: FTS syntax in them is matched as text. Deleting the index file loses nothing.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from agentlog.errors import StoreError
from agentlog.events import Event
from agentlog.stores.store import Store
from agentlog.surface import derive_event_message

__all__ = ["SearchHit", "SearchIndex", "default_index_path", "event_text"]

APPLICATION_ID: Final = 0x41474C53
"""``PRAGMA application_id`` of an agentlog search index ("AGLS")."""
SCHEMA_VERSION: Final = 1
_SCHEMA: Final = """
CREATE TABLE indexed_sessions (
    store TEXT NOT NULL,
    session_id TEXT NOT NULL,
    revision TEXT,
    PRIMARY KEY (store, session_id)
) STRICT;
CREATE VIRTUAL TABLE docs USING fts5(
    text, store UNINDEXED, session_id UNINDEXED, seq UNINDEXED, type UNINDEXED,
    time UNINDEXED, tokenize = 'unicode61'
);
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchHit:
    """One event that matched."""

    session_id: str
    seq: int
    type: str
    time: int
    snippet: str
    """The matching text around the match, the match in ``[brackets]``."""

    def to_json(self) -> dict[str, Any]:
        """The hit as a JSON object."""
        return {
            "session": self.session_id,
            "seq": self.seq,
            "type": self.type,
            "time": self.time,
            "snippet": self.snippet,
        }


def default_index_path(store_url: str) -> Path:
    """Where the index of a store lives by default: the user's cache directory."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    digest = hashlib.sha256(store_url.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return Path(cache) / "agentlog" / "search" / f"{digest}.db"


def event_text(event: Event) -> str:
    """The searchable text of an event.

    For an event that shows the model a message: its text, reasoning, tool calls (name and
    arguments) and tool-result content. For any other event: every string in its data.
    """
    message = derive_event_message(event)
    if isinstance(message, Mapping):
        return "\n".join(_message_strings(message.get("content")))
    return "\n".join(_strings(event.data))


def _message_strings(content: Any) -> Iterator[str]:
    for block in content if isinstance(content, list | tuple) else ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind in ("text", "reasoning") and isinstance(block.get("text"), str):
            yield block["text"]
        elif kind == "tool-call":
            yield from (str(block.get("name", "")), str(block.get("arguments", "")))
        elif kind == "tool-result":
            yield from _message_strings(block.get("content"))


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))


class SearchIndex:
    """A disposable full-text index of the sessions of one or more stores.

    Args:
        path: The index database (created with its directory when missing).

    Raises:
        StoreError: when ``path`` is a database of something else.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None)
            self._own_schema()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f'search index "{path}": {exc}', path=str(path)) from exc

    def _own_schema(self) -> None:
        db = self._db
        version = db.execute("PRAGMA user_version").fetchone()[0]
        application = db.execute("PRAGMA application_id").fetchone()[0]
        objects = db.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0]
        if application != APPLICATION_ID and (application != 0 or objects):
            db.close()
            raise StoreError(
                f'"{self.path}" is not an agentlog search index; refusing to change it',
                path=str(self.path),
            )
        if application == APPLICATION_ID and version == SCHEMA_VERSION:
            return
        # Empty, or an index of another schema: it is disposable, so it is rebuilt in place.
        for table in ("docs", "indexed_sessions"):
            db.execute(f"DROP TABLE IF EXISTS {table}")
        db.executescript(_SCHEMA)
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def update(self, store: Store, *, progress: Callable[[int, int], None] | None = None) -> int:
        """Index new and changed sessions of ``store``, forget deleted ones; nothing else.

        Returns:
            How many sessions were (re)indexed.
        """
        db = self._db
        known = dict(
            db.execute(
                "SELECT session_id, revision FROM indexed_sessions WHERE store = ?", (store.url,)
            ).fetchall()
        )
        infos = store.list()
        listed = {info.id for info in infos}
        for gone in set(known) - listed:
            self._forget(store.url, gone)
        indexed = 0
        for done, info in enumerate(infos, 1):
            revision = store.revision(info.id)
            if revision is None or known.get(info.id) != revision or info.id not in known:
                self._index(store, info.id, revision)
                indexed += 1
            if progress is not None:
                progress(done, len(infos))
        return indexed

    def _forget(self, store_url: str, session_id: str) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM docs WHERE store = ? AND session_id = ?", (store_url, session_id))
        db.execute(
            "DELETE FROM indexed_sessions WHERE store = ? AND session_id = ?",
            (store_url, session_id),
        )
        db.execute("COMMIT")

    def _index(self, store: Store, session_id: str, revision: str | None) -> None:
        inspection = store.inspection(session_id)
        events = inspection.session.events[: inspection.stored_events]
        rows = [
            (event_text(event), store.url, session_id, event.seq, event.type, event.time)
            for event in events
        ]
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "DELETE FROM docs WHERE store = ? AND session_id = ?", (store.url, session_id)
            )
            db.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?)", rows)
            db.execute(
                "INSERT OR REPLACE INTO indexed_sessions VALUES (?, ?, ?)",
                (store.url, session_id, revision),
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def search(
        self, query: str, *, store: Store, session_id: str | None = None, limit: int = 20
    ) -> list[SearchHit]:
        """The events of ``store`` whose text contains ``query`` (a literal phrase), best first.

        Raises:
            ValueError: for an empty query.
        """
        if not query.strip():
            raise ValueError("the search query is empty")
        phrase = '"' + query.replace('"', '""') + '"'
        sql = (
            "SELECT session_id, seq, type, time, snippet(docs, 0, '[', ']', '…', 12) FROM docs "
            "WHERE docs MATCH ? AND store = ?"
        )
        params: list[Any] = [phrase, store.url]
        if session_id is not None:
            sql += " AND session_id = ?"
            params.append(session_id)
        sql += " ORDER BY rank LIMIT ?"
        params.append(limit)
        return [
            SearchHit(session_id=row[0], seq=row[1], type=row[2], time=row[3], snippet=row[4])
            for row in self._db.execute(sql, params)
        ]

    def close(self) -> None:
        """Close the index."""
        self._db.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
