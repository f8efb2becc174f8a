"""Where a JSONL session lives on disk: dsh's directory layout (spec/persistence.md §3.2).

``<root>/<project-dir>/<session-dir>/session.v4.jsonl[.zstd]`` plus ``session.lock`` beside it.
The project dir is a lossy slug of the session's cwd (``_no-cwd`` without one); the session dir
is the id escaped injectively per UTF-16 code unit, so no id can climb out of the root
(``..`` becomes ``~002E~002E``, ``/`` becomes ``~002F``). An escaped id too long for a file name
keeps its first characters and ends with ``~~`` and the SHA-256 of the id (``~~`` never occurs
in an escaped id), so every valid session id has a directory.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Final

__all__ = [
    "LOCK_NAME",
    "NO_CWD",
    "encode_segment",
    "log_name",
    "parse_log_name",
    "project_key",
    "session_dir",
]

NO_CWD: Final = "_no-cwd"
LOCK_NAME: Final = "session.lock"
_SAFE: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_SEPARATORS: Final = re.compile(r"[/\\:]+")
_MAX_SEGMENT: Final = 255
_KEPT_PREFIX: Final = 180
_LOG_NAME: Final = re.compile(r"session(?:\.v([1-9][0-9]*))?\.jsonl(\.zstd)?")


def _utf16_units(text: str) -> list[int]:
    """The UTF-16 code units of ``text`` (lone surrogates kept as themselves)."""
    raw = text.encode("utf-16-le", "surrogatepass")
    return [raw[i] | raw[i + 1] << 8 for i in range(0, len(raw), 2)]


def _escape(text: str) -> str:
    return "".join(
        chr(unit) if chr(unit) in _SAFE else f"~{unit:04X}" for unit in _utf16_units(text)
    )


def encode_segment(session_id: str) -> str:
    """The directory name of a session: its id, escaped injectively (hashed when too long).

    Raises:
        ValueError: for an empty id.
    """
    if not session_id:
        raise ValueError("cannot encode an empty path segment")
    encoded = _escape(session_id)
    if encoded in (".", ".."):
        encoded = encoded.replace(".", "~002E")
    if len(encoded) > _MAX_SEGMENT:
        digest = hashlib.sha256(session_id.encode("utf-16-le", "surrogatepass")).hexdigest()
        prefix = encoded[:_KEPT_PREFIX]
        cut = prefix.rfind("~")
        if cut > _KEPT_PREFIX - 5:  # never keep half of an escape
            prefix = prefix[:cut]
        encoded = f"{prefix}~~{digest}"
    return encoded


def project_key(cwd: str | None) -> str:
    """The project directory of a cwd: ``--<slug>--``, or ``_no-cwd``."""
    if cwd is None:
        return NO_CWD
    slug = _escape(_SEPARATORS.sub("-", cwd)).lstrip("-") or "root"
    return f"--{slug[:251]}--"


def log_name(version: int, compressed: bool) -> str:
    """The transcript file name of a format version: ``session.v4.jsonl[.zstd]``.

    Format 0 logs are ``session.jsonl[.zstd]`` (spec/persistence.md §3.11).
    """
    stem = "session.jsonl" if version == 0 else f"session.v{version}.jsonl"
    return stem + ".zstd" if compressed else stem


def parse_log_name(name: str) -> tuple[int, bool] | None:
    """The format version and compression of a canonical transcript name, else None.

    ``session.jsonl`` is format 0, ``session.v<N>.jsonl`` format N (no leading zeros; ``.v0``
    is not canonical); ``.zstd`` marks compression (spec/persistence.md §3.11).
    """
    match = _LOG_NAME.fullmatch(name)
    if match is None:
        return None
    return int(match[1] or 0), match[2] is not None


def session_dir(root: Path, session_id: str, cwd: str | None) -> Path:
    """The directory holding one session's transcript and lock."""
    return root / project_key(cwd) / encode_segment(session_id)
