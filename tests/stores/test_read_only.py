"""A store opened read-only reads as usual and refuses every write before touching the disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlog import open_store
from agentlog.errors import StoreError
from agentlog.stores.read_only import ReadOnlyBackend
from tests.stores.saved import STORE_KINDS, store_url


def _files(root: Path) -> list[Path]:
    return sorted(root.rglob("*"))


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_a_read_only_store_reads_and_refuses_writes(kind: str, tmp_path: Path) -> None:
    url = store_url(kind, tmp_path)
    with open_store(url) as store, store.create("s1") as session:
        session.append("turn/start", {"turn": 1})
    files = _files(tmp_path)
    with open_store(url, read_only=True) as store:
        assert isinstance(store._backend, ReadOnlyBackend)
        assert [info.id for info in store.list()] == ["s1"]
        assert store.inspect("s1").event_at(0).type == "turn/start"
        with pytest.raises(StoreError, match="is open read-only"):
            store.create("s2").append("turn/start", {"turn": 1})
        with pytest.raises(StoreError, match="is open read-only"):
            store.open("s1")
        with pytest.raises(StoreError, match="is open read-only"):
            store.fork("s1")
    assert _files(tmp_path) == files  # no lock file, no -wal, no -shm


def test_mode_ro_in_the_url_is_the_same_as_read_only(tmp_path: Path) -> None:
    url = store_url("sqlite", tmp_path)
    open_store(url).close()
    with open_store(f"{url}?mode=ro") as store:
        assert isinstance(store._backend, ReadOnlyBackend)
