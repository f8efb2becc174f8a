"""The scheme → backend registry: lazy imports, aliases, and a clear refusal when missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentlog.errors import AgentlogError, StoreError
from agentlog.stores import open_backend, open_store, registry
from agentlog.stores.memory import MemoryBackend
from agentlog.stores.registry import backend_entry, register_backend, schemes
from agentlog.stores.sqlite import SqliteBackend
from agentlog.stores.url import parse_store_url


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Schemes a test registers vanish with it."""
    monkeypatch.setattr(registry, "_ENTRIES", dict(registry._ENTRIES))


def test_every_builtin_scheme_is_registered_with_its_class() -> None:
    assert {"memory", "jsonl", "jsonl+zstd", "sqlite", "postgresql", "postgres"} <= set(schemes())
    assert backend_entry("sqlite").load("sqlite:///x.db") is SqliteBackend
    assert backend_entry("memory").load("memory:") is MemoryBackend
    assert backend_entry("postgres") is backend_entry("postgresql")
    assert backend_entry("postgres").scheme == "postgresql"
    with pytest.raises(StoreError, match="no store backend is registered for the scheme 'x'"):
        backend_entry("x")


def test_backends_are_imported_only_when_a_store_of_theirs_opens(tmp_path: Path) -> None:
    probe = (
        "import sys, agentlog, agentlog.stores; "
        "assert 'agentlog.stores.sqlite' not in sys.modules, 'imported eagerly'; "
        f"agentlog.stores.open_store('sqlite:///{tmp_path / 'x.db'}').close(); "
        "assert 'agentlog.stores.sqlite' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def test_a_scheme_whose_module_is_missing_is_refused_clearly() -> None:
    register_backend(
        "nosuch", "agentlog.stores.nosuch:NoSuchBackend", kind="server", label="NoSuch"
    )
    with pytest.raises(AgentlogError, match=r"NoSuch stores are not available in this build"):
        open_store("nosuch://host/db")


def test_a_missing_dependency_of_a_backend_module_is_not_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "needs_a_driver.py").write_text("import nosuch_driver_xyz\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_backend("broken", "needs_a_driver:Backend", kind="server", label="Broken")
    with pytest.raises(ModuleNotFoundError, match="nosuch_driver_xyz"):
        open_store("broken://host/db")


def test_a_registered_class_opens_from_its_scheme() -> None:
    class Custom(MemoryBackend):
        pass

    register_backend("custom", Custom, kind="memory", label="custom", aliases=("cust",))
    assert parse_store_url("cust:").scheme == "custom"
    backend = open_backend("cust:")
    assert type(backend) is Custom
    assert backend.url == "cust:"
    with open_store("custom:") as store, store.create("s1") as session:
        session.append("turn/start", {"turn": 1})
        assert [info.id for info in store.list()] == ["s1"]
