"""The torn-tail rule of transcripts: ``committed_prefix`` over scanned records.

spec/persistence.md §2.6 as a pure function; the JSONL reader's use of it is in
``test_read.py`` and the contract.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from agentlog.errors import CorruptLog
from agentlog.stores import TornTail
from agentlog.stores.jsonl.torn import Record, committed_prefix

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
