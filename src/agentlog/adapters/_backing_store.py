"""The ``store`` argument of the ADK and LangGraph adapters: a Store, a URL, a path or nothing.

DESIGN.md pins it for every framework adapter: a ``Store`` is used as given (and left open), a
store URL (``sqlite:///x.db``, ``jsonl:///dir`` ...) or a file-system path is opened (a path
that is an existing directory is a JSONL store, anything else a SQLite file), and ``None`` is
the default embedded store, ``agentlog.open_store()``. A store the adapter opened is the
adapter's to close.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentlog.stores import Store, open_store
from agentlog.stores.registry import schemes

__all__ = ["StoreArgument", "resolve_store"]

StoreArgument = Store | str | os.PathLike[str] | None
"""What an adapter's ``store`` parameter accepts."""


def resolve_store(store: StoreArgument) -> tuple[Store, bool]:
    """The store ``store`` names, and whether the caller opened it (and so must close it).

    Raises:
        StoreError: for a URL with an unknown scheme or no path.
        TypeError: for anything that is not a store, a URL, a path or ``None``.
    """
    if isinstance(store, Store):
        return store, False
    if store is None:
        return open_store(), True
    if isinstance(store, str) and store.partition(":")[0] in schemes():
        return open_store(store), True
    if isinstance(store, str | os.PathLike):
        path = Path(store).expanduser().resolve()
        scheme = "jsonl" if path.is_dir() else "sqlite"
        return open_store(f"{scheme}:///{path}"), True
    raise TypeError(
        f"store must be an agentlog Store, a store URL, a path or None, not {type(store).__name__}"
    )
