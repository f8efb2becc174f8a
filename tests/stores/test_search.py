"""The full-text index: disposable, separate from the store, updated from revisions only."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentlog import messages as m
from agentlog import open_store
from agentlog.errors import StoreError
from agentlog.stores.search import SearchIndex, default_index_path
from tests.stores.saved import store_url


def _files(root: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_search_finds_an_event_by_its_text_without_touching_the_store(tmp_path: Path) -> None:
    url = store_url("jsonl", tmp_path / "store")
    with open_store(url) as store, store.create("s1") as session:
        session.append(
            "user/message", m.user("The parser drops a token", id="u1"), surface_op="append"
        )
        session.append("user/message", m.user("unrelated words", id="u2"), surface_op="append")
    before = _files(tmp_path / "store")
    with open_store(url, read_only=True) as store, SearchIndex(tmp_path / "index.db") as index:
        assert index.update(store) == 1
        (hit,) = index.search("drops a", store=store)
        assert (hit.session_id, hit.seq, hit.type) == ("s1", 0, "user/message")
        assert hit.snippet == "The parser [drops a] token"
        assert index.search('"quoted" OR NOT', store=store) == []  # FTS syntax is only text
        assert index.update(store) == 0  # nothing changed: nothing read again
    assert _files(tmp_path / "store") == before


def test_an_appended_session_is_indexed_again_and_a_deleted_one_forgotten(tmp_path: Path) -> None:
    url = store_url("sqlite", tmp_path)
    with open_store(url) as store, SearchIndex(tmp_path / "index.db") as index:
        session = store.create("s1")
        session.append("user/message", m.user("first", id="u1"), surface_op="append")
        index.update(store)
        session.append("user/message", m.user("second words", id="u2"), surface_op="append")
        session.close()
        assert index.update(store) == 1
        assert [hit.seq for hit in index.search("second", store=store)] == [1]


def test_an_unrelated_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE mine (x)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="is not an agentlog search index"):
        SearchIndex(path)


def test_the_default_index_lives_in_the_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = default_index_path("sqlite:///x.db")
    assert path.parent == tmp_path / "agentlog" / "search"
    assert path != default_index_path("sqlite:///y.db")
