"""Reading a stored log back: the version and vocabulary gates every backend shares.

The gates are spec/persistence.md §2.8's refusal texts; the torn-tail rule of transcripts is
``tests/stores/jsonl/test_torn.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog.errors import FormatVersionError
from agentlog.stores.recovery import (
    FORMAT_VERSION,
    check_format_version,
    check_known_types,
    inherited_event_count,
)

LOG = "/logs/p/s1/session.v4.jsonl"


def event(seq: int, event_type: str = "step/start", **extra: Any) -> dict[str, Any]:
    return {"type": event_type, "seq": seq, "time": 0, "data": {}, **extra}


def test_a_record_without_a_type_is_left_to_the_envelope_check() -> None:
    """The vocabulary gate must not crash on a record whose "type" is damaged (a fuzz find)."""
    check_known_types([{"seq": 0, "time": 0, "data": {}}, {**event(1), "type": 5}], "s1", LOG)


# --- the version gate -----------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3, FORMAT_VERSION])
def test_the_current_version_and_every_one_the_chain_upgrades_are_read(version: int) -> None:
    assert check_format_version(version, "s1", LOG) == version


@pytest.mark.parametrize(
    ("version", "location", "text"),
    [
        (
            5,
            LOG,
            'session "s1" uses log format v5, but this build reads up to v4: the log was written '
            f'by a newer harness — upgrade agentlog to open it (raw log: "{LOG}")',
        ),
        (
            5,
            None,
            'session "s1" uses log format v5, but this build reads up to v4: the log was written '
            "by a newer harness — upgrade agentlog to open it",
        ),
        (
            -1,
            None,
            'session "s1" uses log format v-1, older than the supported v4, and this build ships '
            "no upgrade path for it",
        ),
        ("4", None, "session \"s1\" has an invalid log format version '4'"),
        (True, None, 'session "s1" has an invalid log format version True'),
        (4.0, None, 'session "s1" has an invalid log format version 4.0'),
        (None, LOG, f'session "s1" has an invalid log format version None (raw log: "{LOG}")'),
    ],
)
def test_unreadable_versions_are_refused(version: object, location: str | None, text: str) -> None:
    with pytest.raises(FormatVersionError) as refused:
        check_format_version(version, "s1", location)
    assert str(refused.value) == text
    assert (refused.value.version, refused.value.path) == (version, location)


# --- the vocabulary gate --------------------------------------------------------------------


def test_declared_and_ignorable_types_pass() -> None:
    check_known_types([event(0, "turn/start"), event(1, "vendor/thing", ignorable=True)], "s1", LOG)


def test_an_undeclared_type_without_ignorable_is_refused() -> None:
    events = [event(0, "turn/start"), event(1, "vendor/thing", ignorable=False)]
    with pytest.raises(FormatVersionError) as refused:
        check_known_types(events, "s1", LOG)
    assert str(refused.value) == (
        'session "s1" contains event type "vendor/thing" (seq 1) unknown to this harness and not '
        "marked ignorable; refusing to interpret the log — it was likely written by a newer "
        f'harness (raw log: "{LOG}")'
    )


# --- the fork cut ---------------------------------------------------------------------------


def test_the_inherited_count_is_the_last_inherited_marker() -> None:
    events = [
        event(0, "turn/start"),
        event(1, "session/end-seed") | {"data": {"inherited": True}},
        event(2, "turn/end"),
        event(3, "session/end-seed"),
    ]
    assert inherited_event_count({"isSeeded": True}, events) == 1
    assert inherited_event_count({"isSeeded": False}, events) == 0
    assert inherited_event_count({}, events) == 0
    assert inherited_event_count({"isSeeded": True}, events[:1]) == 0
