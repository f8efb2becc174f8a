"""Older logs in a JSONL store: read through the chain, migrated on continue (§5.5, §3.11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agentlog.stores.restore
from agentlog import load_file, open_store
from agentlog import messages as m
from agentlog.errors import MigrationRefused
from agentlog.formats import Artifact, v0_to_v1
from tests.stores.legacy import TIME, format_0_log, write_log


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("zstd", [False, True], ids=["jsonl", "jsonl+zstd"])
def test_inspect_reads_an_older_log_through_the_chain_and_writes_nothing(
    tmp_path: Path, zstd: bool
) -> None:
    write_log(tmp_path, *format_0_log(), zstd=zstd)
    before = snapshot(tmp_path)
    scheme = "jsonl+zstd" if zstd else "jsonl"
    with open_store(f"{scheme}:///{tmp_path}") as store:
        (info,) = store.list()
        assert info.version == 0
        session = store.inspect("old")
    assert session.header["version"] == 4
    assert [msg["role"] for msg in session.derive_messages()] == ["user", "system", "assistant"]
    assert session.derive_messages()[0]["id"] == "legacy-message:old:1"
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("zstd", [False, True], ids=["jsonl", "jsonl+zstd"])
def test_continuing_publishes_format_4_beside_the_untouched_original(
    tmp_path: Path, zstd: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = write_log(tmp_path, *format_0_log(), zstd=zstd)
    original_bytes = original.read_bytes()
    scheme = "jsonl+zstd" if zstd else "jsonl"
    with open_store(f"{scheme}:///{tmp_path}") as store:
        session = store.open("old")
        session.append("turn/start", {"turn": 2})
        session.append("user/message", m.user("again", id="u2"), surface_op="append")
        session.close()
    migrated = original.with_name("session.v4.jsonl.zstd" if zstd else "session.v4.jsonl")
    assert migrated.is_file()
    assert original.read_bytes() == original_bytes  # byte-identical

    # The next open reads format 4 directly: the chain is not run again.
    def no_migration(*_args: Any, **_kwargs: Any) -> Artifact:
        raise AssertionError("a migrated session must reopen without migration")

    monkeypatch.setattr(agentlog.stores.restore, "migrate", no_migration)
    with open_store(f"{scheme}:///{tmp_path}") as store:
        (info,) = store.list()
        assert (info.version, info.location) == (4, str(migrated))
        resumed = store.open("old")
        assert [msg.get("id") for msg in resumed.derive_messages()][-1] == "u2"
        assert resumed.event_at(0).data == {"turn": 1}  # the trigger was dropped by v0→v1
        resumed.close()
    assert original.read_bytes() == original_bytes
    assert sorted(p.name for p in original.parent.iterdir() if "jsonl" in p.name) == sorted(
        [original.name, migrated.name]
    )


def test_a_refused_migration_leaves_everything_as_it_was(tmp_path: Path) -> None:
    header, events = format_0_log()
    events.insert(2, {"type": "mode/set", "seq": 2, "time": TIME, "data": {"mode": "plan"}})
    for seq, event in enumerate(events):
        event["seq"] = seq
    events[9]["sourceEventSeqs"] = [5, 6, 7, 8, 9]
    write_log(tmp_path, header, events)
    before = snapshot(tmp_path)
    with open_store(f"jsonl:///{tmp_path}") as store:
        with pytest.raises(MigrationRefused) as refused:
            store.open("old")
        assert refused.value.step == "session-format-v0-to-v1"
        assert "contains unsupported legacy mode/set event at seq 2" in str(refused.value)
        # the lease was released: a second attempt is refused the same way
        with pytest.raises(MigrationRefused):
            store.open("old")
    after = snapshot(tmp_path)
    after.pop("--work--/old/session.lock")  # the writer lease's lock file, nothing else
    assert after == before


def test_a_torn_older_log_is_migrated_from_its_committed_part(tmp_path: Path) -> None:
    path = write_log(tmp_path, *format_0_log())
    torn = path.read_bytes() + b'{"type":"turn/start","seq":13,"ti'
    path.write_bytes(torn)
    with open_store(f"jsonl:///{tmp_path}") as store:
        session = store.open("old")
        assert session.events[-1].type == "session/end-seed"
        session.close()
    assert path.read_bytes() == torn  # the original keeps even its torn tail


def test_a_fork_of_an_older_log_inherits_the_migrated_events(tmp_path: Path) -> None:
    write_log(tmp_path, *format_0_log())
    with open_store(f"jsonl:///{tmp_path}") as store:
        child = store.fork("old", child_id="child")
        assert child.header["isSeeded"] is True
        assert [msg["role"] for msg in child.derive_messages()] == ["user", "system", "assistant"]
        child.close()
        assert {info.id: info.version for info in store.list()} == {"old": 0, "child": 4}


def test_load_file_reads_every_generation_it_is_named_for(tmp_path: Path) -> None:
    header, events = format_0_log()
    v1 = v0_to_v1.migrate(Artifact(header=header, events=events))
    path = write_log(tmp_path, {**header, "version": 1}, [dict(e) for e in v1.events])
    renamed = path.rename(path.with_name("session.v1.jsonl"))
    assert load_file(renamed).header["version"] == 4
    loose = tmp_path / "exported.jsonl"
    loose.write_bytes(renamed.read_bytes())
    assert load_file(loose).header["version"] == 4  # a file named otherwise: its header decides
