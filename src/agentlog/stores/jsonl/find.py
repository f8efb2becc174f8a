"""Finding transcripts on disk: a session's highest generation, the root's layout, headers.

Implements the discovery half of spec/persistence.md §3.2 and §3.11: a session lives in
``<root>/<project dir>/<escaped id>/``; beside its current transcript may lie older
generations (``session.jsonl`` for format 0, ``session.v<N>.jsonl``) that a migrated session
left untouched, and the highest generation is the session. A root holds one encoding, and
never flat ``<project>/<id>.jsonl`` files.
"""

from __future__ import annotations

import logging
from pathlib import Path

from agentlog.errors import CorruptLog, StoreError
from agentlog.stores.base import SessionInfo
from agentlog.stores.jsonl.codec import header_problem
from agentlog.stores.jsonl.frames import decode_frames, scan_frames
from agentlog.stores.jsonl.layout import encode_segment, parse_log_name
from agentlog.values import loads

__all__ = [
    "check_layout",
    "find_transcript",
    "first_line",
    "generation",
    "glob_escape",
    "session_info",
    "transcript_in",
]

_logger = logging.getLogger("agentlog.stores")


def find_transcript(root: Path, session_id: str, *, compressed: bool, url: str) -> Path | None:
    """The transcript of ``session_id``: its highest generation, in any project directory.

    Raises:
        StoreError: for an id no directory can be named after, or a transcript of the other
            encoding.
        CorruptLog: when the id has transcripts in more than one directory.
    """
    try:
        segment = encode_segment(session_id)
    except ValueError as exc:
        # An id no directory can be named after (empty, or too long once escaped): refuse it
        # here, before the root is even looked at, so create() fails up front and every
        # caller gets a StoreError rather than a bare ValueError.
        raise StoreError(str(exc), session_id=session_id) from None
    if not root.is_dir():
        return None
    found = [
        path
        for directory in root.glob(f"*/{glob_escape(segment)}")
        if (path := transcript_in(directory, compressed=compressed, url=url)) is not None
    ]
    if len(found) > 1:
        raise CorruptLog(
            f'duplicate JSONL session id "{session_id}" appears in multiple places: '
            + ", ".join(f'"{path}"' for path in found),
            session_id=session_id,
            path=str(found[0]),
        )
    return found[0] if found else None


def transcript_in(directory: Path, *, compressed: bool, url: str) -> Path | None:
    """The highest-generation transcript in one session directory, if any.

    Raises:
        StoreError: when the directory holds a transcript of the other encoding.
    """
    if not directory.is_dir():
        return None
    generations: list[tuple[int, Path]] = []
    for path in directory.iterdir():
        parsed = parse_log_name(path.name)
        if parsed is None or not path.is_file():
            continue
        version, is_compressed = parsed
        if is_compressed != compressed:
            raise StoreError(
                f'session artifact "{path}" uses {path.suffixes[-1]}, but this store is '
                f"{url!r}; use a store URL with the matching compression",
                path=str(path),
            )
        generations.append((version, path))
    return max(generations)[1] if generations else None


def check_layout(root: Path, *, compressed: bool, url: str) -> None:
    """A root holds one encoding, in project/session directories (spec/persistence.md §3.2).

    Raises:
        StoreError: for a transcript of the other encoding, or a flat legacy file.
    """
    other = next(
        (
            path
            for path in root.glob("*/*/session*.jsonl*")
            if (parsed := parse_log_name(path.name)) is not None and parsed[1] != compressed
        ),
        None,
    )
    if other is not None:
        raise StoreError(
            f'session artifact "{other}" uses {other.suffixes[-1]}, but this store is '
            f"{url!r}; use a separate root or the matching compression",
            path=str(other),
        )
    flat = next((p for p in root.glob("*/*.jsonl*") if p.is_file()), None)
    if flat is not None:
        raise StoreError(
            f'session artifact "{flat}" uses the unsupported flat-file layout; use a separate '
            "root or move it into a project/session directory before loading",
            path=str(flat),
        )


def first_line(path: Path, *, compressed: bool) -> bytes:
    """The header line of a transcript, read without decoding the rest.

    Raises:
        CorruptLog: for an empty file or one without a complete first line (frame).
    """
    if not compressed:
        with path.open("rb") as file:
            line = file.readline()
        if not line.endswith(b"\n"):
            raise CorruptLog(f'empty or header-less session log "{path}"', path=str(path))
        return line
    data = path.read_bytes()
    scan = scan_frames(data, path=str(path), max_frames=1)
    if not scan.frames:
        raise CorruptLog(f'empty or header-less Zstandard session log "{path}"', path=str(path))
    return next(iter(decode_frames(data, scan, path=str(path))))


def generation(path: Path) -> int | None:
    """The format version a transcript's name declares (``None`` for a file named otherwise)."""
    parsed = parse_log_name(path.name)
    return None if parsed is None else parsed[0]


def glob_escape(segment: str) -> str:
    """``segment`` with glob metacharacters bracketed, to match it literally."""
    return "".join(f"[{c}]" if c in "*?[]" else c for c in segment)


def session_info(path: Path, compressed: bool) -> SessionInfo | None:
    """What ``list`` reports of one transcript; ``None`` (and a warning) if unreadable."""
    try:
        header = loads(first_line(path, compressed=compressed))
        modified = path.stat().st_mtime_ns // 1_000_000
    except (CorruptLog, ValueError, OSError) as exc:
        _logger.warning('skipping unreadable session log "%s": %s', path, exc)
        return None
    if header_problem(header) is not None or type(header.get("version")) is not int:
        _logger.warning('skipping "%s": its first line is not a session header', path)
        return None
    created_at = header.get("createdAt")
    cwd, parent = header.get("cwd"), header.get("parentSession")
    return SessionInfo(
        id=header["id"],
        created_at=created_at if type(created_at) is int else 0,
        version=header["version"],
        cwd=cwd if isinstance(cwd, str) else None,
        parent_session=parent if isinstance(parent, str) else None,
        location=str(path),
        updated_at=modified,
    )
