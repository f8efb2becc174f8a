"""Reading a transcript back: committed events, torn tails, damage (spec/persistence.md §3.5)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from agentlog.errors import CorruptLog, FormatVersionError
from agentlog.stores._jsonl_codec import encode_event_line, encode_header_line
from agentlog.stores._jsonl_read import Transcript
from agentlog.stores._jsonl_read import read_transcript as read_file
from agentlog.stores._zstd_frames import encode_frame

HEADER = {"version": 4, "id": "s1", "createdAt": 0}


def read_transcript(data: bytes, session_id: str, location: str, *, compressed: bool) -> Transcript:
    return read_file(io.BytesIO(data), session_id, location, compressed=compressed)


def event(seq: int, kind: str = "user/message") -> dict[str, Any]:
    data: dict[str, Any] = {"text": f"m{seq}"} if kind == "user/message" else {"reason": "done"}
    return {"type": kind, "seq": seq, "time": seq, "data": data}


def plain(*lines: bytes, header: dict[str, Any] = HEADER) -> bytes:
    return encode_header_line(header) + b"".join(lines)


def test_a_clean_transcript_is_all_committed() -> None:
    events = [event(0), event(1), event(2, "turn/end")]
    data = plain(*(encode_event_line(e) for e in events))
    header, read, torn = read_transcript(data, "s1", "log", compressed=False)
    assert header == {"type": "session", **HEADER, "delegationDepth": 0}
    assert read == events
    assert torn is None


def test_a_header_only_transcript_has_no_events() -> None:
    assert read_transcript(plain(), "s1", "log", compressed=False)[1:] == ([], None)


@pytest.mark.parametrize("cut", [1, 10, -1])
def test_a_torn_final_line_is_the_torn_tail(cut: int) -> None:
    committed = plain(encode_event_line(event(0)))
    last = encode_event_line(event(1))
    _, read, torn = read_transcript(committed + last[:cut], "s1", "log", compressed=False)
    assert read == [event(0)]
    assert torn is not None
    assert torn.position == len(committed)
    assert torn.reason.startswith("line 3:")


def test_a_wrong_seq_at_the_end_is_torn_but_before_a_turn_end_is_corruption() -> None:
    gap = plain(encode_event_line(event(0)), encode_event_line(event(5)))
    _, read, torn = read_transcript(gap, "s1", "log", compressed=False)
    assert read == [event(0)]
    assert torn is not None
    assert "seq gap (expected 1, got 5)" in torn.reason

    damaged = plain(b"{oops\n", encode_event_line(event(1, "turn/end")))
    with pytest.raises(CorruptLog, match=r'"log" line 2: unparsable line .* turn/end at line 3'):
        read_transcript(damaged, "s1", "log", compressed=False)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", 'empty or header-less session log "log"'),
        (b'{"type":"event"}\n', 'corrupt session log "log" line 1: first line is not a session'),
        (plain(header={**HEADER, "id": "other"}), 'requested id "s1" does not match header id'),
    ],
)
def test_a_bad_header_is_corruption(data: bytes, message: str) -> None:
    with pytest.raises(CorruptLog, match=message):
        read_transcript(data, "s1", "log", compressed=False)


def test_a_newer_format_is_refused_before_anything_else() -> None:
    data = b'{"type":"session","version":9,"id":"zz"}\n{garbage'
    with pytest.raises(FormatVersionError, match="uses log format v9, but this build reads up"):
        read_transcript(data, "s1", "log", compressed=False)


def compressed(*lines: bytes) -> bytes:
    return encode_frame(encode_header_line(HEADER)) + b"".join(encode_frame(li) for li in lines)


def test_a_compressed_transcript_reads_like_a_plain_one() -> None:
    events = [event(0), event(1), event(2)]
    frames = compressed(encode_event_line(events[0]), b"".join(map(encode_event_line, events[1:])))
    assert read_transcript(frames, "s1", "log", compressed=True)[1:] == (events, None)


def test_a_line_split_across_complete_frames_is_joined() -> None:
    line = encode_event_line(event(0))
    frames = compressed(line[:7], line[7:] + encode_event_line(event(1)))
    assert read_transcript(frames, "s1", "log", compressed=True)[1:] == ([event(0), event(1)], None)


def test_a_complete_frame_ending_mid_line_is_corruption() -> None:
    data = compressed(encode_event_line(event(0))[:-1])
    with pytest.raises(CorruptLog, match="complete frame contains a torn JSONL record"):
        read_transcript(data, "s1", "log", compressed=True)


def test_a_torn_compressed_frame_keeps_its_complete_lines_as_recovered() -> None:
    good = compressed(encode_event_line(event(0)))
    last = encode_frame(encode_event_line(event(1)) + encode_event_line(event(2)))
    # cut inside the checksum: the content decompresses but cannot be verified
    _, read, torn = read_transcript(good + last[:-3], "s1", "log", compressed=True)
    assert read == [event(0)]
    assert torn is not None
    assert torn.position == len(good)
    assert torn.reason == f"torn Zstandard frame at byte {len(good)}"
    assert torn.recovered == (event(1), event(2))  # offered as recovered, never as committed
    # cut inside the compressed block: nothing can be salvaged
    torn = read_transcript(good + last[:-10], "s1", "log", compressed=True)[2]
    assert torn is not None
    assert torn.recovered == ()


def test_a_bad_line_inside_a_complete_frame_is_corruption_even_at_the_end() -> None:
    data = compressed(encode_event_line(event(0)), b'{"type":"user/message"}\n')
    with pytest.raises(
        CorruptLog, match=r'Zstandard session log "log" line 3: seq gap \(expected 1, got null\)'
    ):
        read_transcript(data, "s1", "log", compressed=True)


def test_a_well_formed_line_in_sequence_is_committed_even_with_a_bad_envelope() -> None:
    """Only a line's seq makes it torn; restore refuses a bad envelope, naming its line."""
    odd = {**event(1), "ignorable": False}
    plain_log = plain(encode_event_line(event(0)), encode_event_line(odd))
    assert read_transcript(plain_log, "s1", "log", compressed=False)[1:] == ([event(0), odd], None)
    frames = compressed(encode_event_line(event(0)), encode_event_line(odd))
    assert read_transcript(frames, "s1", "log", compressed=True)[1:] == ([event(0), odd], None)
