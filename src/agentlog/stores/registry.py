"""Which backend a store URL's scheme names: a lazy scheme → backend registry.

``open_store`` parses the URL (``agentlog.stores.url``), looks its scheme up here and opens the
class with ``Backend.from_url``. Entries name their class as ``"module:Class"`` and the module is
imported only when a store of that scheme is opened, so ``import agentlog`` never pulls in a
driver (a PostgreSQL store needs psycopg; a JSONL one does not). A scheme whose module is not
part of this build is refused with a clear error, not an ``ImportError`` from deep inside.

A backend is added with one line (docs/stores.md, "Adding a backend")::

    register_backend("mydb", "mypackage.mydb:MyDbBackend", kind="server", label="MyDB")
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from agentlog.errors import AgentlogError, StoreError

if TYPE_CHECKING:
    from agentlog.stores.aio_base import AsyncBackend
    from agentlog.stores.base import Backend

__all__ = ["BackendEntry", "Kind", "backend_entry", "register_backend", "schemes"]

Kind = Literal["memory", "file", "server"]
"""How a scheme's URL is read: ``memory:`` (no path), ``scheme:///path`` (a file or directory),
or a server URL passed to the backend as it is (``postgresql://user@host/db``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BackendEntry:
    """One registered scheme."""

    scheme: str
    """The canonical scheme (an alias resolves to it)."""
    target: str | type[Backend]
    """The backend class as ``"module:Class"``, imported on first use (or the class)."""
    kind: Kind
    """How the URL is parsed."""
    label: str
    """The store's name in messages (``SQLite``, ``PostgreSQL``)."""
    async_target: str | None = None
    """The ``AsyncBackend`` class as ``"module:Class"``, for ``agentlog.aio`` (``None``: the
    scheme has none, and ``agentlog.aio`` runs the sync backend in worker threads)."""

    def load(self, url: str) -> type[Backend]:
        """The backend class, imported now.

        Raises:
            AgentlogError: when its module is not part of this build (``url`` names the store).
        """
        if not isinstance(self.target, str):
            return self.target
        module_name, _, class_name = self.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not (module_name + ".").startswith(exc.name + "."):
                raise  # a dependency of the module is missing: its own error says which
            raise AgentlogError(
                f"{self.label} stores are not available in this build of agentlog ({url!r}); "
                "use sqlite:/// or jsonl:///"
            ) from exc
        backend: type[Backend] = getattr(module, class_name)
        return backend

    def load_async(self, url: str) -> type[AsyncBackend] | None:
        """The ``AsyncBackend`` class, imported now (``None`` when the scheme has none)."""
        if self.async_target is None:
            return None
        module_name, _, class_name = self.async_target.partition(":")
        self.load(url)  # the sync module first: a missing extra is reported as for it
        backend: type[AsyncBackend] = getattr(importlib.import_module(module_name), class_name)
        return backend


_ENTRIES: Final[dict[str, BackendEntry]] = {}


def register_backend(
    scheme: str,
    target: str | type[Backend],
    *,
    kind: Kind,
    label: str,
    aliases: tuple[str, ...] = (),
    async_target: str | None = None,
) -> None:
    """Make ``scheme`` (and each of ``aliases``) open the backend class ``target``.

    Args:
        scheme: The URL scheme, lower case (``sqlite``, ``jsonl+zstd``).
        target: ``"module:Class"`` (imported when first opened), or the class itself: a
            ``Backend`` subclass with ``from_url``.
        kind: How its URLs are parsed (``Kind``).
        label: The store's name in messages.
        aliases: Other schemes meaning the same (``postgres`` for ``postgresql``).
        async_target: ``"module:Class"`` of the scheme's ``AsyncBackend``, if it has one.
    """
    entry = BackendEntry(
        scheme=scheme, target=target, kind=kind, label=label, async_target=async_target
    )
    for name in (scheme, *aliases):
        _ENTRIES[name] = entry


def backend_entry(scheme: str) -> BackendEntry:
    """The entry of a scheme or alias.

    Raises:
        StoreError: for a scheme nothing is registered under.
    """
    entry = _ENTRIES.get(scheme)
    if entry is None:
        raise StoreError(f"no store backend is registered for the scheme {scheme!r}")
    return entry


def schemes() -> tuple[str, ...]:
    """Every registered scheme and alias."""
    return tuple(_ENTRIES)


register_backend("memory", "agentlog.stores.memory:MemoryBackend", kind="memory", label="memory")
register_backend("jsonl", "agentlog.stores.jsonl:JsonlBackend", kind="file", label="JSONL")
register_backend(
    "jsonl+zstd", "agentlog.stores.jsonl:JsonlBackend", kind="file", label="compressed JSONL"
)
register_backend("sqlite", "agentlog.stores.sqlite:SqliteBackend", kind="file", label="SQLite")
register_backend(
    "postgresql",
    "agentlog.stores.postgres:PostgresBackend",
    kind="server",
    label="PostgreSQL",
    aliases=("postgres",),
    async_target="agentlog.stores.postgres_aio:AsyncPostgresBackend",
)
