"""Store URLs: SQLAlchemy-style slashes, the schemes, the default store (DESIGN.md, Public API)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentlog import AgentlogError
from agentlog.errors import StoreError
from agentlog.stores import default_home, default_store_url, open_store
from agentlog.stores.jsonl import JsonlBackend
from agentlog.stores.sqlite import SqliteBackend
from agentlog.stores.url import parse_store_url


@pytest.mark.parametrize(
    ("url", "scheme", "path"),
    [
        ("memory:", "memory", None),
        ("memory://", "memory", None),
        ("jsonl:///sessions", "jsonl", Path("sessions")),
        ("jsonl:////var/lib/sessions", "jsonl", Path("/var/lib/sessions")),
        ("jsonl+zstd:///a/b", "jsonl+zstd", Path("a/b")),
        ("sqlite:///sessions.db", "sqlite", Path("sessions.db")),
        ("sqlite:////abs/sessions.db", "sqlite", Path("/abs/sessions.db")),
        ("sqlite:///:memory:", "sqlite", Path(":memory:")),
        ("postgresql://user@host/db", "postgresql", None),
        ("postgres://host/db", "postgresql", None),
    ],
)
def test_parse_store_url(url: str, scheme: str, path: Path | None) -> None:
    parsed = parse_store_url(url)
    assert (parsed.scheme, parsed.path, parsed.url) == (scheme, path, url)


@pytest.mark.parametrize(
    ("url", "text"),
    [
        ("sessions.db", "unknown store URL 'sessions.db'; use memory:, jsonl:///dir"),
        ("mysql://host/db", "unknown store URL 'mysql://host/db'"),
        ("JSONL:///x", "unknown store URL 'JSONL:///x'"),
        ("memory:///x", "a memory store URL takes no path: 'memory:///x'"),
        ("sqlite://x.db", "store URL 'sqlite://x.db' needs three slashes and a path"),
        ("sqlite:x.db", "store URL 'sqlite:x.db' needs three slashes and a path"),
        ("jsonl:///", "store URL 'jsonl:///' needs three slashes and a path"),
    ],
)
def test_bad_store_urls_are_refused(url: str, text: str) -> None:
    with pytest.raises(StoreError) as refused:
        parse_store_url(url)
    assert str(refused.value).startswith(text)
    with pytest.raises(StoreError):
        open_store(url)


def test_three_slashes_are_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with open_store("sqlite:///dbs/sessions.db") as store, store.create("s1") as session:
        session.append("turn/start", {"turn": 1})
    assert (tmp_path / "dbs" / "sessions.db").is_file()
    with open_store("jsonl:///logs") as store, store.create("s1") as session:
        session.append("turn/start", {"turn": 1})
    assert (tmp_path / "logs" / "_no-cwd" / "s1" / "session.v4.jsonl").is_file()
    with open_store(f"jsonl+zstd:///{tmp_path / 'zlogs'}") as store:  # four slashes: absolute
        assert store.url == f"jsonl+zstd:///{tmp_path / 'zlogs'}"
        assert store.url.startswith("jsonl+zstd:////")


def test_postgresql_is_refused_with_a_clear_error() -> None:
    with pytest.raises(AgentlogError, match="PostgreSQL stores are not available in this build"):
        open_store("postgresql://localhost/agentlog")


def test_the_default_store_is_configured_by_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTLOG_STORE", raising=False)
    monkeypatch.setenv("AGENTLOG_HOME", str(tmp_path / "home"))
    assert default_home() == tmp_path / "home"
    assert default_store_url() == f"sqlite:///{tmp_path / 'home' / 'sessions.db'}"
    with open_store() as store:
        assert isinstance(store._backend, SqliteBackend)
        store.create("s1").close()
    assert (tmp_path / "home" / "sessions.db").is_file()
    monkeypatch.setenv("AGENTLOG_STORE", f"jsonl:///{tmp_path / 'env'}")
    assert default_store_url() == f"jsonl:///{tmp_path / 'env'}"
    with open_store(None) as store:
        assert isinstance(store._backend, JsonlBackend)


@pytest.mark.skipif(sys.platform != "linux", reason="the XDG rule is the Linux default")
def test_the_default_home_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTLOG_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_home() == tmp_path / "agentlog"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert default_home() == tmp_path / "user" / ".local" / "share" / "agentlog"
