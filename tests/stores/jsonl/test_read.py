"""Reading a transcript back: committed events, torn tails, damage (spec/persistence.md §3.5)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from agentlog.errors import CorruptLog, FormatVersionError
from agentlog.stores.jsonl.codec import encode_event_line, encode_header_line
from agentlog.stores.jsonl.frames import encode_frame
from agentlog.stores.jsonl.read import Transcript
from agentlog.stores.jsonl.read import read_transcript as read_file

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


def test_an_unparsable_last_line_with_nothing_well_formed_after_it_is_torn() -> None:
    committed = plain(encode_event_line(event(0)))
    for tail in (b"{oops\n", b"\x00\x00\x00\n", b"{oops\n\x00\x00\n{half"):
        _, read, torn = read_transcript(committed + tail, "s1", "log", compressed=False)
        assert read == [event(0)]
        assert torn is not None
        assert torn.position == len(committed)


def test_a_well_formed_record_out_of_sequence_is_corruption_even_at_the_end() -> None:
    """A torn write leaves an incomplete record; a whole one with a wrong seq is damage."""
    for wrong in (event(5), event(0), {"type": "user/message", "data": {}}):
        gap = plain(encode_event_line(event(0)), encode_event_line(wrong))
        with pytest.raises(CorruptLog) as refused:
            read_transcript(gap, "s1", "log", compressed=False)
        assert str(refused.value).startswith(
            'corrupt session log "log" line 3: seq gap (expected 1'
        )
        assert str(refused.value).endswith("(seq 1; 0 well-formed record(s) follow)")
        assert (refused.value.line, refused.value.seq, refused.value.following) == (3, 1, 0)


def test_a_bad_line_followed_by_any_well_formed_record_is_corruption() -> None:
    """No turn/end needed: a well-formed record after the damage was written (and acknowledged)
    after it, so the damage is not a torn tail."""
    later = [encode_event_line(event(seq)) for seq in (2, 3, 4)]
    damaged = plain(encode_event_line(event(0)), b"{oops\n", *later, b"\x00\n")
    with pytest.raises(CorruptLog) as refused:
        read_transcript(damaged, "s1", "log", compressed=False)
    assert str(refused.value).startswith('corrupt session log "log" line 3: unparsable line (')
    assert str(refused.value).endswith("(seq 1; 3 well-formed record(s) follow)")
    assert (refused.value.path, refused.value.line) == ("log", 3)
    assert (refused.value.seq, refused.value.following) == (1, 3)
    gap = plain(encode_event_line(event(0)), *later)
    with pytest.raises(CorruptLog, match=r"line 3: seq gap \(expected 1, got 2\) \(seq 1; 2 well"):
        read_transcript(gap, "s1", "log", compressed=False)


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


def test_a_cut_off_frame_followed_by_a_valid_one_is_corruption() -> None:
    """Only the final frame may be incomplete: valid frames after it show it was not."""
    good = compressed(encode_event_line(event(0)))
    later = encode_frame(encode_event_line(event(2)) + encode_event_line(event(3)))
    cut = encode_frame(encode_event_line(event(1)))[:-6]
    with pytest.raises(CorruptLog) as refused:
        read_transcript(good + cut + later, "s1", "log", compressed=True)
    assert str(refused.value).startswith(
        f'corrupt Zstandard session log "log" line 3: frame at byte {len(good)} '
    )
    assert str(refused.value).endswith("(seq 1; 2 well-formed record(s) follow)")
    assert (refused.value.seq, refused.value.following) == (1, 2)


def test_a_frame_running_past_eof_with_valid_frames_inside_it_is_corruption() -> None:
    """A damaged block size can make a frame look cut off by EOF; a valid frame after its
    start shows it was not the last write."""
    good = compressed(encode_event_line(event(0)))
    # magic, descriptor (checksum flag), window 1 KiB, a last raw block claiming 1000 bytes
    header = b"\x28\xb5\x2f\xfd\x04\x00" + (1000 << 3 | 1).to_bytes(3, "little")
    later = encode_frame(encode_event_line(event(2)) + encode_event_line(event(3)))
    with pytest.raises(CorruptLog) as refused:
        read_transcript(good + header + b"x" * 10 + later, "s1", "log", compressed=True)
    assert str(refused.value) == (
        f'corrupt Zstandard session log "log" line 3: frame at byte {len(good)} is incomplete '
        "(seq 1; 2 well-formed record(s) follow)"
    )
    _, read, torn = read_transcript(good + header + b"x" * 10, "s1", "log", compressed=True)
    assert (read, torn is not None) == ([event(0)], True)  # alone at the end: torn


def test_a_frame_failing_its_checksum_is_located_by_line_and_seq() -> None:
    good = compressed(encode_event_line(event(0)), encode_event_line(event(1)))
    bad = bytearray(encode_frame(encode_event_line(event(2))))
    bad[-1] ^= 0xFF  # the checksum
    later = encode_frame(encode_event_line(event(3)))
    with pytest.raises(CorruptLog) as refused:
        read_transcript(good + bytes(bad) + later, "s1", "log", compressed=True)
    assert str(refused.value) == (
        f'corrupt Zstandard session log "log" line 4: frame at byte {len(good)} failed '
        "validation (seq 2; 1 well-formed record(s) follow)"
    )
    assert (refused.value.line, refused.value.offset) == (4, len(good))


def test_a_frame_with_a_bad_structure_is_located_by_line_and_seq() -> None:
    good = compressed(encode_event_line(event(0)))
    bad = bytearray(encode_frame(encode_event_line(event(1))))
    bad[4] |= 0x08  # a reserved frame header bit
    with pytest.raises(CorruptLog) as refused:
        read_transcript(good + bytes(bad), "s1", "log", compressed=True)
    assert str(refused.value) == (
        f'corrupt Zstandard session log "log" line 3: reserved frame header bit set at byte '
        f"{len(good) + 4} (seq 1; 0 well-formed record(s) follow)"
    )


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
        CorruptLog,
        match=r'Zstandard session log "log" line 3: seq gap \(expected 1, got null\) \(seq 1; 0 ',
    ):
        read_transcript(data, "s1", "log", compressed=True)


def test_a_well_formed_line_in_sequence_is_committed_even_with_a_bad_envelope() -> None:
    """Only a line's seq makes it torn; restore refuses a bad envelope, naming its line."""
    odd = {**event(1), "ignorable": False}
    plain_log = plain(encode_event_line(event(0)), encode_event_line(odd))
    assert read_transcript(plain_log, "s1", "log", compressed=False)[1:] == ([event(0), odd], None)
    frames = compressed(encode_event_line(event(0)), encode_event_line(odd))
    assert read_transcript(frames, "s1", "log", compressed=True)[1:] == ([event(0), odd], None)
