"""Reading a stored log back: the torn-tail rule and the version and vocabulary gates.

``committed_prefix`` is spec/persistence.md §2.6 as a pure function over scanned records; the
gates are §2.8's refusal texts. The backends' use of them is in the contract and the JSONL tests.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from agentlog.errors import CorruptLog, FormatVersionError
from agentlog.stores import TornTail
from agentlog.stores.recovery import (
    FORMAT_VERSION,
    Record,
    check_format_version,
    check_known_types,
    committed_prefix,
    inherited_event_count,
)

LOG = "/logs/p/s1/session.v4.jsonl"


def event(seq: int, event_type: str = "step/start", **extra: Any) -> dict[str, Any]:
    return {"type": event_type, "seq": seq, "time": 0, "data": {}, **extra}


def good(seq: int, event_type: str = "step/start", *, position: int | None = None) -> Record:
    return Record(
        event=event(seq, event_type),
        problem=None,
        position=100 * seq if position is None else position,
        line=seq + 2,
    )


def bad(line: int, position: int, problem: str = "unparsable line (boom)") -> Record:
    return Record(event=None, problem=problem, position=position, line=line)


def test_a_clean_log_is_all_committed() -> None:
    records = [good(0, "turn/start"), good(1), good(2, "turn/end")]
    events, torn = committed_prefix(records, location=LOG, session_id="s1")
    assert events == [record.event for record in records]
    assert torn is None
    assert committed_prefix([], location=LOG, session_id="s1") == ([], None)


def test_a_bad_last_record_is_a_torn_tail(caplog: pytest.LogCaptureFixture) -> None:
    records = [good(0, "turn/start"), good(1), bad(4, 200, "incomplete final line (torn write)")]
    with caplog.at_level(logging.WARNING, logger="agentlog.stores"):
        events, torn = committed_prefix(records, location=LOG, session_id="s1")
    assert events == [records[0].event, records[1].event]
    assert torn == TornTail(position=200, reason="line 4: incomplete final line (torn write)")
    assert caplog.messages == [
        f'session "s1": dropping a torn tail of 1 record(s) from line 4 of "{LOG}" '
        "(incomplete final line (torn write))"
    ]


def test_unparsable_records_with_nothing_well_formed_after_them_are_torn() -> None:
    records = [
        good(0, "turn/start"),
        bad(3, 100),
        bad(4, 150),
        bad(5, 170, "incomplete final line (torn write)"),
    ]
    events, torn = committed_prefix(records, location=LOG, session_id="s1")
    assert events == [records[0].event]
    assert torn == TornTail(position=100, reason="line 3: unparsable line (boom)")


def test_a_bad_record_followed_by_any_well_formed_record_is_corruption() -> None:
    records = [good(0, "turn/start"), bad(3, 100), good(2), bad(5, 300), good(3, "step/end")]
    with pytest.raises(CorruptLog) as refused:
        committed_prefix(records, location=LOG, session_id="s1")
    assert str(refused.value) == (
        f'corrupt session log "{LOG}" line 3: unparsable line (boom) (seq 1; 2 well-formed '
        "record(s) follow)"
    )
    assert (refused.value.path, refused.value.line, refused.value.session_id) == (LOG, 3, "s1")
    assert (refused.value.seq, refused.value.following) == (1, 2)


def test_a_record_that_parsed_is_never_torn() -> None:
    """Well-formed JSON is a whole record: a writer finished it, so it is committed data."""
    for problem in ("line is not a JSON object", "a value outside the lossless JSON domain (x)"):
        records = [good(0, "turn/start"), bad(3, 100, problem)]
        with pytest.raises(CorruptLog, match=r"line 3: .* \(seq 1; 0 well-formed record\(s\)"):
            committed_prefix(records, location=LOG, session_id="s1")


def test_the_seq_of_a_suffix_counts_from_first_seq() -> None:
    records = [good(7), bad(10, 100), good(9)]
    with pytest.raises(CorruptLog) as refused:
        committed_prefix(records, location=LOG, session_id="s1", first_seq=7)
    assert (refused.value.seq, refused.value.following) == (8, 1)


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        (
            Record(event=event(5), problem=None, position=100, line=3),
            "seq gap (expected 1, got 5)",
        ),
        (
            Record(event={"type": "x", "data": {}}, problem=None, position=100, line=3),
            "seq gap (expected 1, got null)",
        ),
        (
            Record(event={**event(1), "seq": "1"}, problem=None, position=100, line=3),
            "seq gap (expected 1, got 1)",
        ),
    ],
    ids=["seq-gap", "no-seq", "string-seq"],
)
def test_a_parsed_record_that_is_not_the_next_event_is_corruption(
    record: Record, problem: str
) -> None:
    for records in ([good(0, "turn/start"), record, good(2, "turn/end")], [good(0), record]):
        with pytest.raises(CorruptLog, match=re.escape(f"line 3: {problem} (seq 1; ")):
            committed_prefix(records, location=LOG, session_id="s1")


@pytest.mark.parametrize(
    "record",
    [
        {"type": "x", "seq": 1, "time": 0},  # no data
        {**event(1), "extra": True},
        {**event(1), "ignorable": False},
    ],
    ids=["no-data", "extra-envelope-key", "ignorable-false"],
)
def test_a_well_formed_record_in_sequence_is_committed_whatever_its_envelope(
    record: dict[str, object],
) -> None:
    """A torn write leaves an unparsable line, never a wrong but well-formed one: such a record
    is committed data, refused later with its location (``restore``), never dropped here."""
    records = [good(0, "turn/start"), Record(event=record, problem=None, position=100, line=3)]
    events, torn = committed_prefix(records, location=LOG, session_id="s1")
    assert torn is None
    assert events[1] is record


def test_sql_records_are_located_by_seq() -> None:
    records = [good(0, "turn/start"), bad(1, 1), good(2, "turn/end")]
    with pytest.raises(CorruptLog) as refused:
        committed_prefix(records, location=None, session_id="s1", unit="seq")
    assert str(refused.value) == (
        "corrupt session log seq 1: unparsable line (boom) (seq 1; 1 well-formed record(s) follow)"
    )


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
