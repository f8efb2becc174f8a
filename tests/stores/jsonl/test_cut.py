"""Planning the cut of a transcript (``Store.repair`` on JSONL stores), as a pure function."""

from __future__ import annotations

import io
from typing import Any

import pytest

from agentlog.errors import CorruptLog, FormatVersionError, StoreError
from agentlog.stores.jsonl.codec import encode_event_line, encode_header_line
from agentlog.stores.jsonl.cut import CutPlan, plan_cut
from agentlog.stores.jsonl.frames import decode_frames, encode_frame, scan_frames
from agentlog.stores.jsonl.read import read_transcript

HEADER = {"version": 4, "id": "s1", "createdAt": 0}


def event(seq: int) -> dict[str, Any]:
    return {"type": "user/message", "seq": seq, "time": seq, "data": {"text": f"m{seq}"}}


def lines(*seqs: int) -> bytes:
    return b"".join(encode_event_line(event(seq)) for seq in seqs)


def plan(data: bytes, cut_at: int, *, compressed: bool = False) -> CutPlan:
    return plan_cut(data, compressed=compressed, cut_at=cut_at, session_id="s1", location="log")


def test_a_plain_log_is_cut_at_a_line_boundary() -> None:
    head = encode_header_line(HEADER) + lines(0, 1)
    data = head + lines(2, 3) + b"{garbage\n" + lines(5)
    assert plan(data, 2) == CutPlan(keep=len(head), removed=3, damaged=1)
    assert plan(data, 0) == CutPlan(keep=len(encode_header_line(HEADER)), removed=5, damaged=1)
    assert plan(head, 2) == CutPlan(keep=len(head))  # nothing after the cut


def test_an_incomplete_final_line_is_removed_as_damaged() -> None:
    head = encode_header_line(HEADER) + lines(0)
    assert plan(head + b'{"type":', 1) == CutPlan(keep=len(head), damaged=1)


def test_a_cut_never_keeps_damage() -> None:
    data = encode_header_line(HEADER) + lines(0) + b"{garbage\n" + lines(2)
    with pytest.raises(CorruptLog) as refused:
        plan(data, 3)
    assert str(refused.value) == (
        'cannot cut session "s1" at seq 3: "log" line 3 (seq 1) is damaged (unparsable line '
        "(invalid JSON text: unexpected character, expected a string key: line 1 column 2 (char "
        "1))); cut at seq 1 or before"
    )
    assert (refused.value.line, refused.value.seq) == (3, 1)
    gap = encode_header_line(HEADER) + lines(0, 2)
    with pytest.raises(CorruptLog, match=r"line 3 \(seq 1\) is damaged \(seq gap"):
        plan(gap, 2)


def test_a_cut_past_the_end_is_refused() -> None:
    data = encode_header_line(HEADER) + lines(0, 1)
    with pytest.raises(StoreError, match='"log" holds 2 complete event'):
        plan(data, 3)
    with pytest.raises(StoreError, match="holds 1 complete event"):
        plan(data[:-3], 2)


def test_a_newer_or_damaged_header_is_refused() -> None:
    newer = encode_header_line({**HEADER, "version": 9}) + lines(0)
    with pytest.raises(FormatVersionError):
        plan(newer, 0)
    with pytest.raises(CorruptLog, match="first line is not a session header"):
        plan(b"{}\n" + lines(0), 0)


def compressed(*frames: bytes) -> bytes:
    return encode_frame(encode_header_line(HEADER)) + b"".join(encode_frame(f) for f in frames)


def test_a_compressed_log_is_cut_at_a_frame_boundary() -> None:
    head = compressed(lines(0, 1))
    data = head + encode_frame(lines(2, 3))
    assert plan(data, 2, compressed=True) == CutPlan(keep=len(head), removed=2)


def test_a_cut_inside_a_frame_re_encodes_its_kept_lines() -> None:
    head = compressed(lines(0))
    data = head + encode_frame(lines(1, 2, 3)) + encode_frame(lines(4))
    cut = plan(data, 3, compressed=True)
    assert (cut.keep, cut.removed, cut.damaged) == (len(head), 2, 0)
    result = data[: cut.keep] + cut.tail
    assert list(decode_frames(result, scan_frames(result)))[-1] == lines(1, 2)
    _, events, torn = read_transcript(_io(result), "s1", "log", compressed=True)
    assert (events, torn) == ([event(seq) for seq in range(3)], None)


def test_a_line_split_across_frames_is_kept_whole() -> None:
    line = lines(1)
    data = compressed(lines(0), line[:5], line[5:] + lines(2))
    cut = plan(data, 2, compressed=True)
    result = data[: cut.keep] + cut.tail
    _, events, _ = read_transcript(_io(result), "s1", "log", compressed=True)
    assert events == [event(0), event(1)]
    assert cut.removed == 1


def test_a_damaged_frame_and_a_torn_one_are_counted_as_damaged_records() -> None:
    head = compressed(lines(0))
    bad = bytearray(encode_frame(lines(1, 2)))
    bad[-1] ^= 0xFF
    torn = encode_frame(lines(4))[:-3]
    data = head + bytes(bad) + encode_frame(lines(3)) + torn
    assert plan(data, 1, compressed=True) == CutPlan(keep=len(head), removed=1, damaged=2)
    with pytest.raises(CorruptLog, match=r"line 3 \(seq 1\) is damaged"):
        plan(data, 2, compressed=True)


def _io(data: bytes) -> io.BytesIO:
    return io.BytesIO(data)
