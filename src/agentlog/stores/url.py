"""Store URLs and the default store location.

File URLs follow SQLAlchemy's convention: three slashes and a relative path, four slashes (three
plus the leading ``/``) for an absolute one — ``sqlite:///rel/x.db``, ``jsonl:////abs/dir``.
With no URL, ``open_store()`` uses ``$AGENTLOG_STORE`` if set, else a SQLite file in
``$AGENTLOG_HOME`` (default: the platform's user data directory).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agentlog.errors import StoreError

__all__ = ["StoreURL", "default_home", "default_store_url", "parse_store_url"]

SCHEMES: Final = ("memory", "jsonl", "jsonl+zstd", "sqlite", "postgresql", "postgres")


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreURL:
    """A parsed store URL."""

    scheme: str
    """``memory``, ``jsonl``, ``jsonl+zstd``, ``sqlite`` or ``postgresql``."""
    path: Path | None
    """The file or directory of a file store."""
    url: str
    """The URL as given."""


def parse_store_url(url: str) -> StoreURL:
    """Parse a store URL.

    Raises:
        StoreError: for an unknown scheme or a file URL without ``:///``.
    """
    scheme, sep, rest = url.partition(":")
    if not sep or scheme not in SCHEMES:
        raise StoreError(
            f"unknown store URL {url!r}; use memory:, jsonl:///dir, jsonl+zstd:///dir, "
            "sqlite:///file.db or postgresql://..."
        )
    if scheme == "memory":
        if rest not in ("", "//"):
            raise StoreError(f"a memory store URL takes no path: {url!r}")
        return StoreURL(scheme="memory", path=None, url=url)
    if scheme in ("postgresql", "postgres"):
        return StoreURL(scheme="postgresql", path=None, url=url)
    if not rest.startswith("///") or len(rest) == 3:
        raise StoreError(
            f"store URL {url!r} needs three slashes and a path: {scheme}:///relative/path or "
            f"{scheme}:////absolute/path"
        )
    return StoreURL(scheme=scheme, path=Path(rest[3:]), url=url)


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
