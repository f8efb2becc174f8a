"""``load_file``: one transcript, read wherever it lies, repaired only in the returned view.

``load_file`` must give the same session a store's ``inspect`` gives, for raw and Zstandard
transcripts, and must never write: not the transcript, not a lock file, nothing beside it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from agentlog import check_invariants, check_provider_history, open_turn_closers
from agentlog.errors import CorruptLog, FormatVersionError
from agentlog.stores import load_file, open_store
from tests.stores.contract import (
    CLOCK,
    CWD,
    ask_tools,
    clock,
    end_seed,
    one_turn,
    run_tool,
    start_turn,
    wire,
)


def write_transcript(
    tmp_path: Path, *, compressed: bool, crashed: bool
) -> tuple[Path, list[dict[str, Any]]]:
    """A stored log (ending inside a turn when ``crashed``), copied out of its store."""
    scheme = "jsonl+zstd" if compressed else "jsonl"
    with open_store(f"{scheme}:///{tmp_path / 'store'}", clock=clock) as store:
        with store.create("s1", cwd=CWD) as session:
            one_turn(session)
            if crashed:
                start_turn(session, 2)
                ask_tools(session, 2, 1, "c")
                run_tool(session, 2, 1, "c", answer=False)
        [info] = store.list()
    assert info.location is not None
    loose = tmp_path / "elsewhere" / ("transcript.jsonl.zstd" if compressed else "transcript.jsonl")
    loose.parent.mkdir()
    shutil.copyfile(info.location, loose)
    return loose, wire(session.events)


def timeless(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with the marker's time dropped: ``load_file`` stamps it with the wall clock."""
    *stored, marker = events
    assert marker["type"] == "session/end-seed"
    return [*stored, {**marker, "time": CLOCK}]


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in directory.iterdir()}


@pytest.mark.parametrize("compressed", [False, True], ids=["raw", "zstd"])
def test_load_file_reads_a_transcript_as_its_store_does(tmp_path: Path, compressed: bool) -> None:
    path, events = write_transcript(tmp_path, compressed=compressed, crashed=False)
    before = snapshot(path.parent)
    loaded = load_file(path)
    assert timeless(wire(loaded.events)) == [*events, end_seed(len(events))]
    assert loaded.header["cwd"] == CWD
    assert loaded.id == "s1"
    scheme = "jsonl+zstd" if compressed else "jsonl"
    with open_store(f"{scheme}:///{tmp_path / 'store'}") as store:
        assert timeless(wire(store.inspect("s1").events)) == timeless(wire(loaded.events))
    assert snapshot(path.parent) == before
    assert load_file(str(path)).derive_messages() == loaded.derive_messages()


@pytest.mark.parametrize("compressed", [False, True], ids=["raw", "zstd"])
def test_load_file_repairs_a_crashed_log_in_the_view_only(tmp_path: Path, compressed: bool) -> None:
    path, events = write_transcript(tmp_path, compressed=compressed, crashed=True)
    with path.open("ab") as file:
        file.write(b'{"type":"tool/res' if not compressed else b"\x28\xb5\x2f")  # a torn write
    before = snapshot(path.parent)
    loaded = load_file(path)
    closers = wire(open_turn_closers(events, "interrupted"))
    assert [e["type"] for e in closers] == ["tool/result", "step/end", "turn/end"]
    expected = [*events, *closers, end_seed(len(events) + len(closers))]
    assert timeless(wire(loaded.events)) == expected
    check_invariants(loaded.events)
    check_provider_history(loaded.derive_messages())
    assert snapshot(path.parent) == before  # no repair, no lock file


def test_load_file_refuses_a_newer_format_naming_the_file(tmp_path: Path) -> None:
    path, _ = write_transcript(tmp_path, compressed=False, crashed=False)
    lines = path.read_bytes().split(b"\n", 1)
    path.write_bytes(lines[0].replace(b'"version":4', b'"version":5') + b"\n" + lines[1])
    with pytest.raises(FormatVersionError) as refused:
        load_file(path)
    assert str(refused.value).endswith(f'(raw log: "{path}")')
    assert refused.value.version == 5


def test_load_file_refuses_damage_before_the_last_turn(tmp_path: Path) -> None:
    path, _ = write_transcript(tmp_path, compressed=False, crashed=True)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"{broken"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(CorruptLog) as refused:
        load_file(path)
    assert (refused.value.path, refused.value.line) == (str(path), 3)


def test_load_file_refuses_a_file_without_a_header(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b'{"hello": "world"}\n')
    with pytest.raises(CorruptLog, match="first line is not a session header"):
        load_file(path)
    path.write_bytes(b"")
    with pytest.raises(CorruptLog, match="empty or header-less session log"):
        load_file(path)
