"""Where a JSONL session lives: dsh's directory layout (spec/persistence.md §3.2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlog.stores.jsonl.layout import encode_segment, log_name, project_key, session_dir


@pytest.mark.parametrize(
    ("session_id", "segment"),
    [
        ("s1", "s1"),
        ("a.b-c_d", "a.b-c_d"),
        (".", "~002E"),
        ("..", "~002E~002E"),
        ("...", "..."),
        ("../x", "..~002Fx"),
        ("/abs", "~002Fabs"),
        ("a\\b", "a~005Cb"),
        ("C:x", "C~003Ax"),
        ("~", "~007E"),
        (" ", "~0020"),
        ("\x00", "~0000"),
        ("é", "~00E9"),
        ("😀", "~D83D~DE00"),
        ("\ud800", "~D800"),
    ],
)
def test_ids_are_escaped_per_utf16_code_unit(session_id: str, segment: str) -> None:
    assert encode_segment(session_id) == segment


def test_the_escape_is_injective_on_tricky_ids() -> None:
    ids = ["~", "~007E", "a/b", "a~002Fb", ".", "~002E", "A", "a", "\ud800", "~D800", "😀"]
    segments = [encode_segment(i) for i in ids]
    assert len(set(segments)) == len(set(ids))


def test_an_empty_id_cannot_name_a_directory() -> None:
    with pytest.raises(ValueError, match="cannot encode an empty path segment"):
        encode_segment("")


def test_an_id_too_long_once_escaped_keeps_a_prefix_and_its_hash() -> None:
    assert encode_segment("x" * 255) == "x" * 255
    long = encode_segment("é" * 60)  # 60 x ~00E9 = 300 characters
    prefix, digest = long.split("~~")
    assert prefix == "~00E9" * 36  # no escape is cut in half
    assert len(digest) == 64
    assert len(long) <= 255
    assert encode_segment("é" * 61) != long
    assert "~~" not in encode_segment("~~ a tilde is escaped ~~")


@pytest.mark.parametrize(
    ("cwd", "key"),
    [
        (None, "_no-cwd"),
        ("/home/u/proj", "--home-u-proj--"),
        ("/home/u//proj/", "--home-u-proj---"),
        ("C:\\Users\\me", "--C-Users-me--"),
        ("/", "--root--"),
        ("/my project/~x", "--my~0020project-~007Ex--"),
    ],
)
def test_project_keys_are_lossy_slugs_of_the_cwd(cwd: str | None, key: str) -> None:
    assert project_key(cwd) == key


def test_project_keys_are_bounded() -> None:
    assert project_key("/" + "a" * 400) == "--" + "a" * 251 + "--"


def test_log_names_follow_the_format_generation() -> None:
    assert log_name(4, False) == "session.v4.jsonl"
    assert log_name(4, True) == "session.v4.jsonl.zstd"
    assert log_name(0, False) == "session.jsonl"
    assert log_name(0, True) == "session.jsonl.zstd"


def test_a_session_directory_is_under_its_project() -> None:
    root = Path("/store")
    assert session_dir(root, "../x", "/w") == root / "--w--" / "..~002Fx"
    assert session_dir(root, "..", None) == root / "_no-cwd" / "~002E~002E"
