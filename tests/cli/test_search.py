"""``search``: full-text across sessions, through an index outside the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.support import demo_in, files, run


def test_search_finds_events_across_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    url = str(tmp_path / "store")
    demo_in(url, "one")
    demo_in(url, "two")
    before = files(tmp_path / "store")
    ran = run(
        "search", "empty input", "--store", url, env={"XDG_CACHE_HOME": str(tmp_path / "cache")}
    )
    assert ran.code == 0, ran.stderr
    assert ran.stdout.splitlines()[0].split() == ["session", "seq", "type", "match"]
    hits = run(
        "search", "drops the last token", "--json", "--store", url,
        env={"XDG_CACHE_HOME": str(tmp_path / "cache")},
    ).json()  # fmt: skip
    assert {hit["session"] for hit in hits} == {"one", "two"}
    assert all("[drops the last token]" in hit["snippet"] for hit in hits)
    assert files(tmp_path / "store") == before
    assert list((tmp_path / "cache" / "agentlog" / "search").glob("*.db"))


def test_search_in_one_session_with_an_explicit_index(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    demo_in(url, "one")
    demo_in(url, "two")
    index = str(tmp_path / "index.db")
    hits = run("search", "parser", "--session", "two", "--index", index, "--json", "--store", url)
    assert hits.code == 0
    assert {hit["session"] for hit in hits.json()} == {"two"}
    none = run("search", "no such words anywhere", "--index", index, "--store", url)
    assert (none.code, none.stdout) == (0, "no event contains 'no such words anywhere'\n")
    assert run("search", "  ", "--index", index, "--store", url).code == 2
