"""Store URLs and paths, and the default store location.

File URLs follow SQLAlchemy's convention: three slashes and a relative path, four slashes (three
plus the leading ``/``) for an absolute one — ``sqlite:///rel/x.db``, ``jsonl:////abs/dir``.
A plain filesystem path is accepted wherever a URL is: a ``*.db`` / ``*.sqlite`` file (or any
existing SQLite file) is a SQLite store, a directory a JSONL store (``jsonl+zstd`` when it holds
compressed transcripts). A file URL takes one query parameter, ``mode=ro`` (open read-only:
never create or write anything); any other is an error rather than part of the file name.
With no URL, ``open_store()`` uses ``$AGENTLOG_STORE`` if set, else a SQLite file in
``$AGENTLOG_HOME`` (default: the platform's user data directory).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import parse_qsl

from agentlog.errors import StoreError
from agentlog.stores.registry import backend_entry, schemes

__all__ = ["StoreURL", "default_home", "default_store_url", "parse_store_url"]

SQLITE_SUFFIXES: Final = (".db", ".sqlite", ".sqlite3")
"""File names that make a plain path a SQLite store."""
_SQLITE_MAGIC: Final = b"SQLite format 3\x00"
_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")  # two letters at least: C:\ is a path
_HINT: Final = (
    "use memory:, jsonl:///dir, jsonl+zstd:///dir, sqlite:///file.db, postgresql://... or a "
    "path (a directory or a .db file)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreURL:
    """A parsed store URL (or path)."""

    scheme: str
    """The canonical scheme (``memory``, ``jsonl``, ``jsonl+zstd``, ``sqlite``, ``postgresql``
    or another registered one; an alias is resolved)."""
    path: Path | None
    """The file or directory of a file store."""
    url: str
    """The URL: as given, or the URL of the path given (``sqlite:///x.db`` for ``x.db``)."""
    read_only: bool = False
    """Open without creating or writing anything (``?mode=ro``)."""


def parse_store_url(url: str) -> StoreURL:
    """Parse a store URL, or a plain path to a store.

    Raises:
        StoreError: for an unknown scheme, a file URL without ``:///``, an unknown query
            parameter, or a path that is a file but not a store.
    """
    if _URL.match(url) is None:
        return _parse_path(url)
    scheme, _, rest = url.partition(":")
    if scheme not in schemes():
        raise StoreError(f"unknown store URL {url!r}; {_HINT}")
    entry = backend_entry(scheme)
    scheme = entry.scheme
    if entry.kind == "server":
        return StoreURL(scheme=scheme, path=None, url=url)
    rest, _, query = rest.partition("?")
    read_only = _read_only(url, query)
    if entry.kind == "memory":
        if rest not in ("", "//"):
            raise StoreError(f"a memory store URL takes no path: {url!r}")
        return StoreURL(scheme=scheme, path=None, url=url, read_only=read_only)
    if not rest.startswith("///") or len(rest) == 3:
        raise StoreError(
            f"store URL {url!r} needs three slashes and a path: {scheme}:///relative/path or "
            f"{scheme}:////absolute/path"
        )
    return StoreURL(scheme=scheme, path=Path(rest[3:]), url=url, read_only=read_only)


def _read_only(url: str, query: str) -> bool:
    """The ``mode=ro`` flag of a URL's query; anything else is refused, never ignored."""
    if not query:
        return False
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        pairs = [(query, "")]
    read_only = False
    for key, value in pairs:
        if (key, value) != ("mode", "ro"):
            raise StoreError(
                f"unknown query parameter {f'{key}={value}'!r} in store URL {url!r}; the only "
                "one is mode=ro (read-only)"
            )
        read_only = True
    return read_only


def _parse_path(text: str) -> StoreURL:
    """A plain path: a SQLite file by name or content, else a JSONL directory."""
    if not text:
        raise StoreError(f"empty store URL; {_HINT}")
    path = Path(text).expanduser()
    if path.is_dir():
        compressed = _holds_compressed(path)
        scheme = "jsonl+zstd" if compressed else "jsonl"
    elif path.suffix in SQLITE_SUFFIXES or _is_sqlite_file(path):
        scheme = "sqlite"
    elif path.is_file():
        raise StoreError(
            f'"{path}" is a file, not a store: a store is a directory (JSONL) or a SQLite '
            "database (.db); pass a session file where a session is expected"
        )
    else:
        scheme = "jsonl"
    return StoreURL(scheme=scheme, path=path, url=f"{scheme}:///{path}")


def _holds_compressed(root: Path) -> bool:
    """Whether a JSONL root holds ``.jsonl.zstd`` transcripts and no plain ones."""
    plain = next(root.glob("*/*/session*.jsonl"), None)
    return plain is None and next(root.glob("*/*/session*.jsonl.zstd"), None) is not None


def _is_sqlite_file(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def default_home() -> Path:
    """``$AGENTLOG_HOME``, else the platform's user data directory for agentlog."""
    home = os.environ.get("AGENTLOG_HOME")
    if home:
        return Path(home).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "agentlog"
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "agentlog"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "agentlog"


def default_store_url() -> str:
    """``$AGENTLOG_STORE``, else the SQLite file ``sessions.db`` in ``default_home()``."""
    configured = os.environ.get("AGENTLOG_STORE")
    if configured:
        return configured
    return f"sqlite:///{(default_home() / 'sessions.db').resolve()}"
