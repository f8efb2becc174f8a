"""The session-id rule: one check for every entry point, store and backend.

A session id names a session in every store and on every file system, and is printed by the
CLI, so it must survive UTF-8 encoding, file names and terminals: a non-empty ``str`` of at most
255 UTF-8 bytes, with no NUL, no other control character (Unicode category ``Cc``) and no lone
surrogate. Anything else is refused with ``SeedRejected`` naming the reason, before anything is
written.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from agentlog.errors import SeedRejected

__all__ = ["MAX_ID_BYTES", "check_session_id", "session_id_problem"]

MAX_ID_BYTES: Final = 255
"""The longest session id, in UTF-8 bytes (the common file-name limit)."""


def session_id_problem(session_id: object) -> str | None:
    """Why ``session_id`` is not a valid session id, or ``None`` when it is."""
    if not isinstance(session_id, str) or not session_id:
        return f"session id must be a nonempty string, got {session_id!r}"
    for char in session_id:
        if char == "\x00":
            return f"session id {session_id!r} contains a NUL character"
        if "\ud800" <= char <= "\udfff":
            return (
                f"session id {session_id!r} contains a lone surrogate (U+{ord(char):04X}), "
                "which has no UTF-8 form"
            )
        if unicodedata.category(char) == "Cc":
            return f"session id {session_id!r} contains a control character (U+{ord(char):04X})"
    size = len(session_id.encode("utf-8"))
    if size > MAX_ID_BYTES:
        return (
            f"session id {session_id[:24]!r}... is {size} bytes in UTF-8; at most "
            f"{MAX_ID_BYTES} are allowed"
        )
    return None


def check_session_id(session_id: object) -> str:
    """Return ``session_id`` if it is a valid session id.

    Raises:
        SeedRejected: naming why it is not (``session_id`` is set when it is a string).
    """
    problem = session_id_problem(session_id)
    if problem is not None:
        raise SeedRejected(problem, session_id=session_id if isinstance(session_id, str) else None)
    return session_id  # type: ignore[return-value]  # checked to be a str just above
