"""Finding transcripts: highest generation wins, one encoding per root (persistence §3.2, §3.11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlog.errors import CorruptLog, StoreError
from agentlog.stores.jsonl.find import (
    check_layout,
    find_transcript,
    first_line,
    generation,
    glob_escape,
    transcript_in,
)
from agentlog.stores.jsonl.frames import encode_frame

URL = "jsonl:///store"


def touch(path: Path, text: bytes = b"{}\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)
    return path


def test_the_highest_generation_of_a_session_directory_is_its_transcript(tmp_path: Path) -> None:
    directory = tmp_path / "--w--" / "s1"
    touch(directory / "session.jsonl")
    touch(directory / "session.lock")
    touch(directory / "session.v4.jsonl.1a2b.tmp")  # an unpublished temporary file
    assert transcript_in(directory, compressed=False, url=URL) == directory / "session.jsonl"
    touch(directory / "session.v2.jsonl")
    touch(directory / "session.v10.jsonl")
    touch(directory / "session.v04.jsonl")  # not canonical: ignored
    assert transcript_in(directory, compressed=False, url=URL) == directory / "session.v10.jsonl"
    assert (
        find_transcript(tmp_path, "s1", compressed=False, url=URL)
        == directory / "session.v10.jsonl"
    )
    assert find_transcript(tmp_path, "s2", compressed=False, url=URL) is None
    assert transcript_in(tmp_path / "missing", compressed=False, url=URL) is None


def test_a_transcript_of_the_other_encoding_is_refused(tmp_path: Path) -> None:
    touch(tmp_path / "--w--" / "s1" / "session.jsonl.zstd")
    with pytest.raises(StoreError, match=r"uses \.zstd, but this store is 'jsonl:///store'"):
        find_transcript(tmp_path, "s1", compressed=False, url=URL)
    with pytest.raises(StoreError, match="use a separate root or the matching compression"):
        check_layout(tmp_path, compressed=False, url=URL)
    check_layout(tmp_path, compressed=True, url=URL)


def test_one_id_in_two_project_directories_is_corruption(tmp_path: Path) -> None:
    touch(tmp_path / "--a--" / "s1" / "session.jsonl")
    touch(tmp_path / "--b--" / "s1" / "session.v4.jsonl")
    with pytest.raises(CorruptLog, match='duplicate JSONL session id "s1" appears in multiple'):
        find_transcript(tmp_path, "s1", compressed=False, url=URL)


def test_flat_files_and_unnameable_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot encode an empty path segment"):
        find_transcript(tmp_path, "", compressed=False, url=URL)
    touch(tmp_path / "--w--" / "s1.jsonl")
    with pytest.raises(StoreError, match="unsupported flat-file layout"):
        check_layout(tmp_path, compressed=False, url=URL)


def test_the_header_line_is_read_alone(tmp_path: Path) -> None:
    plain = touch(tmp_path / "a" / "session.jsonl", b'{"type":"session"}\n{"torn')
    assert first_line(plain, compressed=False) == b'{"type":"session"}\n'
    packed = touch(tmp_path / "b" / "session.jsonl.zstd", encode_frame(b"H\n") + b"garbage")
    assert first_line(packed, compressed=True) == b"H\n"
    for path, compressed in (
        (touch(tmp_path / "c", b""), False),
        (touch(tmp_path / "d", b""), True),
    ):
        with pytest.raises(CorruptLog, match="empty or header-less"):
            first_line(path, compressed=compressed)


@pytest.mark.parametrize(
    ("name", "version"),
    [("session.jsonl", 0), ("session.v3.jsonl.zstd", 3), ("transcript.jsonl", None)],
)
def test_the_generation_a_name_declares(name: str, version: int | None) -> None:
    assert generation(Path(name)) == version


def test_glob_metacharacters_are_matched_literally() -> None:
    assert glob_escape("a*b?[c]") == "a[*]b[?][[]c[]]"
