"""Store URLs: SQLAlchemy-style slashes, the schemes, the default store (DESIGN.md, Public API)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
        ("mysql:///x", "unknown store URL 'mysql:///x'; use memory:, jsonl:///dir"),
        ("mysql://host/db", "unknown store URL 'mysql://host/db'"),
        ("JSONL:///x", "unknown store URL 'JSONL:///x'"),
        ("memory:///x", "a memory store URL takes no path: 'memory:///x'"),
        ("sqlite://x.db", "store URL 'sqlite://x.db' needs three slashes and a path"),
        ("sqlite:x.db", "store URL 'sqlite:x.db' needs three slashes and a path"),
        ("jsonl:///", "store URL 'jsonl:///' needs three slashes and a path"),
        ("sqlite:///a.db?mode=rw", "unknown query parameter 'mode=rw' in store URL"),
        ("sqlite:///a.db?cache=shared", "unknown query parameter 'cache=shared' in store URL"),
        ("jsonl:///d?ro", "unknown query parameter 'ro=' in store URL 'jsonl:///d?ro'"),
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


_WITHOUT_PSYCOPG = """
import sys
sys.modules["psycopg"] = None  # as if the postgres extra were not installed
sys.modules["psycopg_pool"] = None
import agentlog
from agentlog.stores import open_store
try:
    open_store("postgresql://postgres@127.0.0.1:5432/test")
except ImportError as exc:
    print(exc)
"""


def test_import_agentlog_needs_no_psycopg() -> None:
    code = "import sys, agentlog, agentlog.stores, agentlog.aio; print('psycopg' in sys.modules)"
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert completed.stdout == "False\n"


def test_a_postgresql_url_without_the_extra_names_it() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PSYCOPG], capture_output=True, text=True, check=True
    )
    assert "pip install 'agentlog[postgres]'" in completed.stdout, completed.stderr


@pytest.mark.parametrize(
    ("url", "text"),
    [
        ("postgresql://h/db?schema=Bad-Name", "schema 'Bad-Name' in store URL"),
        ("postgresql://h/db?schema=", "schema '' in store URL"),
        ("postgresql://h/db?lease_seconds=soon", "lease_seconds='soon' in store URL"),
        ("postgresql://h/db?lease_seconds=0", "must be a number of seconds from 0.5 to 86400"),
        ("postgresql://h/db?mode=rw", "unknown mode 'rw' in store URL"),
        ("postgresql://u:secret@h/db?mode=rw", "'postgresql://u:***@h/db?mode=rw'"),
    ],
)
def test_a_bad_postgresql_url_is_refused_before_connecting(url: str, text: str) -> None:
    with pytest.raises(StoreError) as refused:
        open_store(url)
    assert text in str(refused.value)
    assert "secret" not in str(refused.value)


def test_an_unreachable_postgresql_server_is_reported_with_its_cause() -> None:
    with pytest.raises(StoreError) as refused:
        open_store("postgresql://postgres@127.0.0.1:9/test?connect_timeout=2")
    assert "PostgreSQL store 'postgresql://postgres@127.0.0.1:9/test?connect_timeout=2'" in str(
        refused.value
    )
    assert ": cannot reach the server (" in str(refused.value)


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


@pytest.mark.parametrize(
    ("given", "scheme"),
    [("x.db", "sqlite"), ("x.sqlite", "sqlite"), ("x.sqlite3", "sqlite"), ("new-dir", "jsonl")],
)
def test_a_plain_path_names_a_store_by_its_suffix(
    given: str, scheme: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    parsed = parse_store_url(given)
    assert (parsed.scheme, parsed.path, parsed.url) == (scheme, Path(given), f"{scheme}:///{given}")
    assert list(tmp_path.iterdir()) == []  # parsing looks, never creates


def test_an_existing_directory_is_a_jsonl_store_and_zstd_when_it_holds_zstd(
    tmp_path: Path,
) -> None:
    with open_store(f"jsonl+zstd:///{tmp_path / 'z'}") as store, store.create("s1") as session:
        session.append("turn/start", {"turn": 1})
    assert parse_store_url(str(tmp_path / "z")).scheme == "jsonl+zstd"
    (tmp_path / "empty").mkdir()
    assert parse_store_url(str(tmp_path / "empty")).scheme == "jsonl"
    with open_store(str(tmp_path / "z")) as store:
        assert [info.id for info in store.list()] == ["s1"]


def test_an_existing_sqlite_file_is_recognised_by_its_content(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'sessions.data'}") as store:
        store.create("s1").close()
    assert parse_store_url(str(tmp_path / "sessions.data")).scheme == "sqlite"


def test_an_empty_url_is_refused_by_the_parser() -> None:
    with pytest.raises(StoreError, match="empty store URL"):
        parse_store_url("")


def test_a_file_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    transcript = tmp_path / "session.v4.jsonl"
    transcript.write_text("{}\n")
    with pytest.raises(StoreError, match="is a file, not a store"):
        parse_store_url(str(transcript))


def test_mode_ro_opens_without_creating_anything(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}?mode=ro"
    assert parse_store_url(url).read_only
    with pytest.raises(StoreError, match=r'no SQLite store at ".*a.db" \(no such file\)'):
        open_store(url)
    with pytest.raises(StoreError, match="no JSONL store at"):
        open_store(f"jsonl:///{tmp_path / 'logs'}?mode=ro")
    with pytest.raises(StoreError, match="no SQLite store at"):
        open_store(f"sqlite:///{tmp_path / 'nodir' / 'sub' / 'x.db'}", read_only=True)
    assert list(tmp_path.iterdir()) == []
