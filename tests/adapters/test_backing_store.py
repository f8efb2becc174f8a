"""The adapters' ``store`` argument: a Store, a URL, a path or nothing (DESIGN.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentlog
from agentlog.adapters._backing_store import resolve_store


def test_a_store_is_used_as_given_and_left_to_its_owner() -> None:
    with agentlog.open_store("memory:") as store:
        assert resolve_store(store) == (store, False)


def test_a_url_is_opened_for_the_adapter(tmp_path: Path) -> None:
    store, owned = resolve_store(f"jsonl:///{tmp_path}/j")
    with store:
        assert owned
        assert store.url == f"jsonl:///{tmp_path}/j"


def test_a_path_is_a_sqlite_file_or_an_existing_jsonl_directory(tmp_path: Path) -> None:
    sqlite, _ = resolve_store(tmp_path / "sessions.db")
    with sqlite:
        assert sqlite.url == f"sqlite:///{tmp_path}/sessions.db"
    jsonl, _ = resolve_store(str(tmp_path))
    with jsonl:
        assert jsonl.url == f"jsonl:///{tmp_path}"


def test_nothing_is_the_default_embedded_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLOG_HOME", str(tmp_path))
    monkeypatch.delenv("AGENTLOG_STORE", raising=False)
    store, owned = resolve_store(None)
    with store:
        assert owned
        assert store.url == f"sqlite:///{tmp_path.resolve()}/sessions.db"


def test_anything_else_is_refused() -> None:
    with pytest.raises(TypeError, match="store must be an agentlog Store"):
        resolve_store(42)  # type: ignore[arg-type]  # the wrong type, on purpose
