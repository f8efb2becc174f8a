"""The ``store`` argument every framework adapter takes: a Store, a URL or path, or ``None``.

Implements DESIGN.md's adapter rule ("every ``store`` argument takes a Store, a store URL or
path, or None"). A URL is any string ``agentlog.open_store`` reads (``sqlite:///…``,
``jsonl:///…``, ``memory:``, ``postgresql://…``); a path names a SQLite file, or a JSONL store
when it is an existing directory; ``None`` is the default embedded store.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeAlias

from agentlog.stores import Store, open_store
from agentlog.stores.registry import schemes

__all__ = ["StoreRef", "resolve_store"]

StoreRef: TypeAlias = Store | str | os.PathLike[str] | None
"""What an adapter's ``store`` argument accepts."""


def resolve_store(store: StoreRef) -> tuple[Store, bool]:
    """The store ``store`` names, and whether the caller opened it (and so must close it).

    Raises:
        StoreError: for a URL no store reads.
    """
    if isinstance(store, Store):
        return store, False
    if store is None:
        return open_store(), True
    text = os.fspath(store)
    scheme, sep, _ = text.partition(":")
    if sep and scheme in schemes():
        return open_store(text), True
    path = Path(text).expanduser().resolve()
    scheme = "jsonl" if path.is_dir() else "sqlite"
    return open_store(f"{scheme}:///{path}"), True
