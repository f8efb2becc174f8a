"""Reading a stored log back: the gates every backend shares.

Implements spec/persistence.md §2.8 (refusal texts), §5.4 (the fork cut of an old seeded log)
and spec/core.md §8.1 (unknown event types). Pure functions over stored headers and events;
the torn-tail rule of file stores is ``agentlog.stores.jsonl.torn``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentlog.errors import FormatVersionError
from agentlog.events import is_declared
from agentlog.formats import FORMAT_VERSION

__all__ = [
    "FORMAT_VERSION",
    "check_format_version",
    "check_known_types",
    "inherited_event_count",
]


def check_format_version(version: object, session_id: str, location: str | None) -> int:
    """Refuse a header version this build cannot read (spec/persistence.md §2.8, §5.2).

    Every older version down to 0 is readable: the migration chain (``agentlog.formats``)
    starts there.

    Args:
        version: The stored ``version``.
        session_id: For the message.
        location: The raw log, appended to the message when known.

    Raises:
        FormatVersionError: direction-aware text naming the raw log.
    """
    suffix = f' (raw log: "{location}")' if location else ""
    if type(version) is not int:
        raise FormatVersionError(
            f'session "{session_id}" has an invalid log format version {version!r}{suffix}',
            session_id=session_id,
            path=location,
            version=version,
        )
    if version > FORMAT_VERSION:
        raise FormatVersionError(
            f'session "{session_id}" uses log format v{version}, but this build reads up to '
            f"v{FORMAT_VERSION}: the log was written by a newer harness — upgrade agentlog to "
            f"open it{suffix}",
            session_id=session_id,
            path=location,
            version=version,
        )
    if version < 0:
        raise FormatVersionError(
            f'session "{session_id}" uses log format v{version}, older than the supported '
            f"v{FORMAT_VERSION}, and this build ships no upgrade path for it{suffix}",
            session_id=session_id,
            path=location,
            version=version,
        )
    return version


def check_known_types(
    events: Sequence[Mapping[str, Any]], session_id: str, location: str | None
) -> None:
    """Refuse a log holding an undeclared type not marked ``ignorable`` (spec/core.md §8.1).

    Raises:
        FormatVersionError: with the spec's text.
    """
    for event in events:
        event_type = event.get("type")
        if type(event_type) is not str:
            continue  # not an envelope at all: restore refuses it, naming where it is
        if not is_declared(event_type) and event.get("ignorable") is not True:
            seq = event.get("seq")
            suffix = f' (raw log: "{location}")' if location else ""
            raise FormatVersionError(
                f'session "{session_id}" contains event type "{event_type}" (seq {seq}) '
                "unknown to this harness and not marked ignorable; refusing to interpret the log "
                f"— it was likely written by a newer harness{suffix}",
                session_id=session_id,
                path=location,
            )


def inherited_event_count(header: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> int:
    """The fork cut of a stored seeded session: the seq of its last ``{inherited: true}`` marker.

    An unseeded session inherits nothing (spec/persistence.md §5.4, v1→v2: the cut is derived
    from the last tagged ``session/end-seed``).
    """
    if header.get("isSeeded") is not True:
        return 0
    for event in reversed(events):
        data = event.get("data")
        if (
            event.get("type") == "session/end-seed"
            and isinstance(data, dict)
            and data.get("inherited") is True
        ):
            return int(event["seq"])
    return 0
