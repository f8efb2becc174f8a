"""The SQL row codec: an event as a row and back, and a bad row located for ``CorruptLog``."""

from __future__ import annotations

import pytest

from agentlog.stores.sql.rows import (
    BadRow,
    corrupt,
    decode,
    event_from_row,
    event_rows,
    header_text,
)


def _unpack(index: int, data: bytes) -> bytes:
    return data[::-1]


def test_an_event_survives_the_round_trip_with_its_optional_columns() -> None:
    event = {
        "type": "user/message",
        "seq": 3,
        "time": 7,
        "data": {"text": "é\ud800"},
        "sourceEventSeqs": [1, 2],
        "surfaceOp": {"op": "append"},
        "ignorable": True,
    }
    (row,) = event_rows("s", [event], lambda encoded: encoded[::-1])
    assert row[:4] == ("s", 3, "user/message", 7)
    assert row[5:] == ("[1,2]", '{"op":"append"}', 1)
    assert event_from_row(3, row[1:], _unpack) == event
    plain = {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}
    node = {"type": "user/message", "seq": 1, "time": 2, "data": {}, "surfaceOp": "append"}
    rows = event_rows("s", [plain, node], lambda encoded: encoded.decode(), "")
    assert rows[0][4:] == ('{"turn":1}', "", "", "")
    assert rows[1][1:] == (1, "user/message", 2, "{}", "", '"append"', "")
    stored = [tuple(None if column == "" else column for column in row) for row in rows]  # nullif
    assert [event_from_row(i, row[1:], _unpack) for i, row in enumerate(stored)] == [plain, node]


@pytest.mark.parametrize(
    ("columns", "what"),
    [
        ((4, "t", 1, "{}", None, None, None), "seq gap (expected 3, got 4)"),
        ((3, 5, 1, "{}", None, None, None), "type or time has the wrong column type"),
        ((3, "t", 1.5, "{}", None, None, None), "type or time has the wrong column type"),
        ((3, "t", 1, "{nope", None, None, None), "data is not JSON"),
        ((3, "t", 1, 12, None, None, None), "data is an integer, not JSON text"),
        ((3, "t", 1, "{}", 2.5, None, None), "source_event_seqs is a real number"),
        ((3, "t", 1, "{}", None, "[", None), "surface_op is not JSON"),
    ],
)
def test_a_row_that_cannot_be_an_event_says_why(columns: tuple[object, ...], what: str) -> None:
    with pytest.raises(BadRow, match=what.replace("(", r"\(").replace(")", r"\)")) as bad:
        event_from_row(3, columns, _unpack)
    assert bad.value.seq == 3


def test_headers_and_bad_rows_are_reported_where_they_are() -> None:
    assert header_text({"id": "s", "cwd": "\ud800"}) == '{"id":"s","cwd":"\\ud800"}'
    assert decode(-1, "header", '{"id":"s"}') == {"id": "s"}
    with pytest.raises(BadRow, match="header is NULL, not JSON text"):
        decode(-1, "header", None)
    error = corrupt("s", "/db", BadRow(4, "seq gap"), 2)
    assert str(error) == (
        'corrupt session "s" in "/db" at event row seq 4: seq gap (2 later row(s) follow)'
    )
    assert (error.seq, error.line, error.following, error.path) == (4, 4, 2, "/db")
    header = corrupt("s", "/db", BadRow(-1, "header is NULL"), 0)
    assert str(header) == 'corrupt session "s" in "/db" at its session row: header is NULL'
    assert (header.seq, header.following) == (None, None)
