"""The session header: storage metadata outside the log (spec/core.md §2.2, format 4).

``build_header()`` validates a supplied header (texts E63–E75 of §14) or synthesizes
``{version: 4, id, createdAt: now, isSeeded: false}``. Unknown extra keys are retained.
``new_header()`` is the header of every session a store creates or forks, and
``stored_header()`` the key order a header is stored in (dsh's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from agentlog.errors import NotLosslessJson, SeedRejected
from agentlog.values import FrozenDict, JsonValue, is_safe_integer, js_text, snapshot

__all__ = ["FORMAT_VERSION", "HEADER_ORDER", "build_header", "new_header", "stored_header"]

FORMAT_VERSION: Final = 4
"""The session format agentlog reads and writes natively."""
HEADER_ORDER: Final = (
    "version",
    "id",
    "createdAt",
    "cwd",
    "parentSession",
    "isSeeded",
    "origin",
    "delegationDepth",
    "agentPreset",
)
"""The order dsh writes header keys in; other keys follow in their own order."""


def new_header(
    session_id: str, created_at: int, *, cwd: object = None, parent: str | None = None
) -> dict[str, Any]:
    """A format-4 header of a new session or fork child (spec/core.md §2.2, §10.1).

    ``isSeeded`` is true exactly for a fork child (``parent``). A store writes it as
    ``stored_header`` makes it (with ``delegationDepth``, as dsh writes it).
    """
    header: dict[str, Any] = {"version": FORMAT_VERSION, "id": session_id, "createdAt": created_at}
    if cwd is not None:
        header["cwd"] = cwd
    if parent is not None:
        header["parentSession"] = parent
    header["isSeeded"] = parent is not None
    return header


def stored_header(header: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    """``header`` as it is stored: dsh's key order, then the other keys in their order.

    ``delegationDepth`` is 0 when absent (dsh requires it on read).
    """
    record: dict[str, JsonValue] = {}
    for key in HEADER_ORDER:
        if key in header:
            record[key] = header[key]
        elif key == "delegationDepth":
            record[key] = 0
    for key, value in header.items():
        if key not in record:
            record[key] = value
    return record


def build_header(session_id: str, header: object, clock: Callable[[], int]) -> FrozenDict:
    """Validate ``header`` for session ``session_id``, or synthesize one when it is ``None``.

    Raises:
        SeedRejected: with the exact catalogue text (E63–E75).
    """
    if header is None:
        header = new_header(session_id, clock())
    try:
        value = snapshot(header)
    except NotLosslessJson as exc:
        spec_text = "session header is not losslessly JSON-serializable"
        raise SeedRejected(
            f"{spec_text}: {exc.detail}", spec_text=spec_text, session_id=session_id
        ) from exc
    if not isinstance(value, FrozenDict):
        raise _rejected("session header is not a plain JSON record", session_id)
    frozen: FrozenDict = value
    problem = _problem(frozen, session_id)
    if problem is not None:
        raise _rejected(problem, session_id)
    return frozen


def _rejected(message: str, session_id: str) -> SeedRejected:
    return SeedRejected(message, session_id=session_id)


def _is_count(value: Any) -> bool:
    return is_safe_integer(value) and value >= 0


def _problem(header: dict[str, Any], session_id: str) -> str | None:
    version = header.get("version", _ABSENT)
    if version != FORMAT_VERSION or type(version) is bool:
        return f"session header version must be {FORMAT_VERSION}, got {js_text(version)}"
    if header.get("id") != session_id:
        return (
            f'session header id "{js_text(header.get("id", _ABSENT))}" does not match session '
            f'id "{session_id}"'
        )
    if not _is_count(header.get("createdAt")):
        return "session header createdAt must be a non-negative safe integer"
    if "cwd" in header:
        cwd = header["cwd"]
        if not isinstance(cwd, str):
            return "session header cwd must be a string"
        if not cwd.startswith("/"):
            return f'session header cwd must be an absolute path, got "{cwd}"'
    if "parentSession" in header and not isinstance(header["parentSession"], str):
        return "session header parentSession must be a string"
    if "seedLength" in header:
        return 'session header has invalid field "seedLength"'
    if "origin" in header and header["origin"] != "subagent":
        return 'session header origin must be "subagent"'
    if "delegationDepth" in header and not _is_count(header["delegationDepth"]):
        return "session header delegationDepth must be a non-negative safe integer"
    if "agentPreset" in header and not isinstance(header["agentPreset"], str):
        return "session header agentPreset must be a string"
    if not isinstance(header.get("isSeeded"), bool):
        return "session header isSeeded must be a boolean"
    return None


_ABSENT: Final[Any] = object()
