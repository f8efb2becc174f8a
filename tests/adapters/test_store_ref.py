"""The ``store`` argument: a Store, a URL, a path, or None for the default embedded store."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlog import open_store
from agentlog.adapters._store_ref import resolve_store


def test_a_store_is_used_as_given_and_not_closed() -> None:
    store = open_store("memory:")
    assert resolve_store(store) == (store, False)


def test_a_url_opens_that_store(tmp_path: Path) -> None:
    store, owned = resolve_store(f"jsonl:///{tmp_path}/j")
    assert (store.url, owned) == (f"jsonl:///{tmp_path}/j", True)
    store.close()


def test_a_path_is_a_sqlite_file_or_an_existing_directory_of_jsonl(tmp_path: Path) -> None:
    sqlite, _ = resolve_store(tmp_path / "chats.db")
    jsonl, _ = resolve_store(str(tmp_path))
    assert sqlite.url == f"sqlite:///{tmp_path}/chats.db"
    assert jsonl.url == f"jsonl:///{tmp_path}"
    sqlite.close()
    jsonl.close()


def test_none_is_the_default_embedded_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLOG_HOME", str(tmp_path))
    monkeypatch.delenv("AGENTLOG_STORE", raising=False)
    store, owned = resolve_store(None)
    assert (store.url, owned) == (f"sqlite:///{tmp_path.resolve()}/sessions.db", True)
    store.close()
