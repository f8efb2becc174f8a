"""Transcript lines: the header record and one event per line (spec/persistence.md §3.3, §3.11)."""

from __future__ import annotations

import pytest

from agentlog import Event
from agentlog.stores.jsonl.codec import (
    decode_current_line,
    decode_event_line,
    decode_seq_ranges,
    encode_event_line,
    encode_event_lines,
    encode_header_line,
    encode_seq_ranges,
    header_problem,
)
from agentlog.values._snapshot import c_snapshot


def test_the_header_line_is_in_dsh_order_with_a_default_depth() -> None:
    header = {
        "extra": True,
        "delegationDepth": 1,
        "isSeeded": True,
        "parentSession": "p",
        "cwd": "/w",
        "createdAt": 5,
        "id": "s1",
        "version": 4,
    }
    assert encode_header_line(header) == (
        b'{"type":"session","version":4,"id":"s1","createdAt":5,"cwd":"/w","parentSession":"p",'
        b'"isSeeded":true,"delegationDepth":1,"extra":true}\n'
    )
    assert encode_header_line({"version": 4, "id": "é", "createdAt": 0}) == (
        '{"type":"session","version":4,"id":"é","createdAt":0,"delegationDepth":0}\n'.encode()
    )


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"type": "session", "version": 4, "id": "s1", "delegationDepth": 0}, None),
        ({"type": "session", "version": 0, "id": "s1", "delegationDepth": 0}, None),
        ([], "first line is not a session header"),
        ({"type": "event", "id": "s1", "delegationDepth": 0}, "first line is not a session header"),
        (
            {"type": "session", "id": "s1", "delegationDepth": 0},
            "session header has no numeric version",
        ),
        (
            {"type": "session", "version": "4", "id": "s1", "delegationDepth": 0},
            "session header has no numeric version",
        ),
        (
            {"type": "session", "version": 4, "id": 7, "delegationDepth": 0},
            "session header has no string id",
        ),
        (
            {"type": "session", "version": 4, "id": "s1"},
            "session header delegationDepth must be a non-negative safe integer",
        ),
        (
            {"type": "session", "version": 4, "id": "s1", "delegationDepth": -1},
            "session header delegationDepth must be a non-negative safe integer",
        ),
        (
            {"type": "session", "version": 4, "id": "s1", "delegationDepth": 0.5},
            "session header delegationDepth must be a non-negative safe integer",
        ),
        (
            {"type": "session", "version": 0, "id": "s1", "delegationDepth": 0, "sandboxMode": "x"},
            "session header uses retired policy baseline fields",
        ),
        (
            {"type": "session", "version": 0, "id": "s", "delegationDepth": 0, "approvalPolicy": 1},
            "session header uses retired policy baseline fields",
        ),
    ],
)
def test_header_problems(record: object, problem: str | None) -> None:
    assert header_problem(record) == problem


@pytest.mark.parametrize(
    ("seqs", "encoded"),
    [
        ([], []),
        ([4], [4]),
        ([1, 2], [1, 2]),
        ([1, 2, 3], [[1, 3]]),
        ([0, 1, 2, 3, 7, 9, 10, 11], [[0, 3], 7, [9, 11]]),
        ([5, 4, 3], [5, 4, 3]),
        ([1, 2, 4, 5], [1, 2, 4, 5]),
    ],
)
def test_runs_of_three_or_more_seqs_are_ranges(seqs: list[int], encoded: list[object]) -> None:
    assert encode_seq_ranges(seqs) == encoded
    assert decode_seq_ranges(encoded) == seqs


@pytest.mark.parametrize("items", [[[1, 2]], [[3, 1]], [[1, 2, 3]], [[-1, 3]], [[1.5, 4]]])
def test_malformed_ranges_are_refused(items: list[object]) -> None:
    assert decode_seq_ranges(items) is None


def test_an_event_line_is_its_wire_form_with_ranged_citations() -> None:
    event = {
        "type": "user/message",
        "seq": 9,
        "time": 1,
        "data": {"text": "é"},
        "surfaceOp": {"op": "replace", "startSeq": 2, "endSeq": 5},
        "sourceEventSeqs": [2, 3, 4, 5],
    }
    line = encode_event_line(event)
    assert line == (
        '{"type":"user/message","seq":9,"time":1,"data":{"text":"é"},"surfaceOp":{"op":"replace",'
        '"startSeq":2,"endSeq":5},"sourceEventSeqs":[[2,5]]}\n'.encode()
    )
    assert event["sourceEventSeqs"] == [2, 3, 4, 5]  # the caller's event is not changed
    assert decode_event_line(line.rstrip(b"\n")) == (event, None)
    loose = {**event, "sourceEventSeqs": [2, 4, 5]}
    assert b'"sourceEventSeqs":[2,4,5]' in encode_event_line(loose)


def test_a_batch_is_the_lines_of_its_events_joined() -> None:
    """Plain events, ranged citations and a lone surrogate (orjson refuses it) in one batch."""
    events = [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {"type": "x", "seq": 1, "time": 1, "data": None, "sourceEventSeqs": [0, 1, 2]},
        {"type": "user/message", "seq": 2, "time": 1, "data": {"text": "\ud800"}},
        {"type": "turn/end", "seq": 3, "time": 1, "data": {"turn": 1}, "surfaceOp": "append"},
    ]
    assert encode_event_lines(events) == b"".join(encode_event_line(e) for e in events)
    assert encode_event_lines(events).count(b"\n") == 4
    assert b'"sourceEventSeqs":[[0,2]]' in encode_event_lines(events)
    assert encode_event_lines([]) == b""


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"[1, 2]", "line is not a JSON object"),
        (b'"text"', "line is not a JSON object"),
        (b'{"type":"x","sourceEventSeqs":[[4,5]]}', "malformed sourceEventSeqs range"),
    ],
)
def test_lines_that_are_not_events(line: bytes, problem: str) -> None:
    assert decode_event_line(line) == (None, problem)


@pytest.mark.parametrize("line", [b"{oops", b"\xff\xfe", b'{"a":NaN}', b""])
def test_unparsable_lines(line: bytes) -> None:
    event, problem = decode_event_line(line)
    assert event is None
    assert problem is not None
    assert problem.startswith("unparsable line (")


def test_decoded_events_of_one_type_share_one_string() -> None:
    first, _ = decode_event_line(b'{"type":"user/message","seq":0}')
    second, _ = decode_event_line(b'{"type":"user/message","seq":1}')
    assert first is not None
    assert second is not None
    assert first["type"] is second["type"]  # a loaded log holds one string per type


# --- current-format lines: settled into events while fresh --------------------------------

_GOOD = b'{"type":"turn/start","seq":0,"time":5,"data":{"turn":1}}'
_RANGED = (
    b'{"type":"user/message","seq":9,"time":1,"data":{"role":"user","id":"u","content":[],'
    b'"source":{"kind":"compaction"}},"surfaceOp":{"op":"replace","startSeq":2,"endSeq":5},'
    b'"sourceEventSeqs":[[2,5]]}'
)


@pytest.mark.parametrize("line", [_GOOD, _RANGED])
def test_a_good_current_line_is_read_as_the_plain_decoder_reads_it(line: bytes) -> None:
    settled, problem = decode_current_line(line)
    plain, _ = decode_event_line(line)
    assert problem is None
    assert settled == plain
    assert type(settled) is (Event if c_snapshot is not None else dict)


def test_a_current_line_that_breaks_a_rule_is_read_but_left_for_the_rebuild() -> None:
    line = b'{"type":"tool/result","seq":0,"time":5,"data":"not an object"}'
    settled, problem = decode_current_line(line)
    assert problem is None
    assert settled == {"type": "tool/result", "seq": 0, "time": 5, "data": "not an object"}
    assert type(settled) is not Event


@pytest.mark.parametrize(
    "line", [b"[1, 2]", b'{"type":"x","sourceEventSeqs":[[4,5]]}', b"{oops", b'{"a":NaN}']
)
def test_a_current_line_that_is_no_event_gets_the_plain_decoders_problem(line: bytes) -> None:
    assert decode_current_line(line) == decode_event_line(line)
