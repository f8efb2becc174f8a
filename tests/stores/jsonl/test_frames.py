"""The Zstandard framing of compressed session logs (spec/persistence.md §3.4, rows 16-21 of §8).

Everything runs on real ``zstandard`` output. Frame layouts the encoder does not choose by itself
(other content-size field widths, a dictionary id field, the unused descriptor bit) are made by
re-writing a real frame's header: a content checksum covers the content only, so the blocks and
checksum stay valid. Test helpers walk blocks independently of the scanner, starting where
``zstandard.frame_header_size`` (libzstd) says the header ends.

Truncation is checked at every byte offset of a file's last frames, and bit flips at every bit
of a complete frame, asserting the exact outcome of each.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from itertools import pairwise
from typing import Required, TypedDict

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlog.errors import CorruptLog
from agentlog.stores.jsonl.frames import (
    FrameScan,
    decode_frames,
    encode_frame,
    recover_torn_frame,
    scan_frames,
)

MAGIC = b"\x28\xb5\x2f\xfd"
PATH = "/logs/p/s1/session.v4.jsonl.zst"
HEADER = b'{"type":"session","version":4,"id":"s1","createdAt":1,"delegationDepth":0}\n'


def _lines(count: int, *, start: int = 0, text: str = "hello") -> bytes:
    return b"".join(
        b'{"type":"assistant/chunk","seq":%d,"time":%d,"data":{"text":"%s %d"}}\n'
        % (seq, seq * 7, text.encode(), seq * seq)
        for seq in range(start, start + count)
    )


def _log(plaintexts: list[bytes]) -> tuple[bytes, list[tuple[int, int]]]:
    """Encode one frame per plaintext; return the file and each frame's byte range."""
    data = b""
    ranges = []
    for plaintext in plaintexts:
        frame = encode_frame(plaintext)
        ranges.append((len(data), len(data) + len(frame)))
        data += frame
    return data, ranges


def _whole_stream(data: bytes) -> bytes:
    """Decompress ``data`` as one stream, as a standard zstd tool does."""
    return zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True).readall()


def _decode(data: bytes, *, path: str | None = None) -> list[bytes]:
    return list(decode_frames(data, scan_frames(data, path=path), path=path))


def _blocks(frame: bytes) -> list[tuple[int, int, int]]:
    """``(header offset, type, size)`` of each block of ``frame``, header size from libzstd."""
    position = zstandard.frame_header_size(frame)
    blocks = []
    while True:
        header = int.from_bytes(frame[position : position + 3], "little")
        block_type, size = (header >> 1) & 3, header >> 3
        blocks.append((position, block_type, size))
        position += 3 + (1 if block_type == 1 else size)
        if header & 1:
            return blocks


def _read(data: bytes) -> tuple[FrameScan | None, list[bytes] | None, CorruptLog | None]:
    """Scan and decode ``data``: ``(scan, plaintexts, None)``, or ``(None, None, error)``."""
    try:
        scan = scan_frames(data)
        return scan, list(decode_frames(data, scan)), None
    except CorruptLog as error:
        return None, None, error


def _flipped(data: bytes, position: int, bit: int) -> bytes:
    damaged = bytearray(data)
    damaged[position] ^= 1 << bit
    return bytes(damaged)


def _with_header(
    frame: bytes,
    *,
    single_segment: bool,
    content_size_bytes: int,
    dictionary_id: bytes = b"",
    unused_bit: bool = False,
) -> bytes:
    """Re-write ``frame``'s header with the given field layout (RFC 8878 §3.1.1.1)."""
    parameters = zstandard.get_frame_parameters(frame)
    content_size = parameters.content_size
    descriptor = (
        {0: 0, 1: 0, 2: 1, 4: 2, 8: 3}[content_size_bytes] << 6
        | single_segment << 5
        | unused_bit << 4
        | parameters.has_checksum << 2
        | {0: 0, 1: 1, 2: 2, 4: 3}[len(dictionary_id)]
    )
    window = b"" if single_segment else b"\x50"  # 1 MiB: exponent 10, mantissa 0
    field = content_size - 256 if content_size_bytes == 2 else content_size
    return (
        MAGIC
        + bytes([descriptor])
        + window
        + dictionary_id
        + (field.to_bytes(content_size_bytes, "little") if content_size_bytes else b"")
        + frame[zstandard.frame_header_size(frame) :]
    )


# --- encode_frame ------------------------------------------------------------------------


def test_encoded_frame_records_its_content_size_and_checksum() -> None:
    frame = encode_frame(HEADER)
    parameters = zstandard.get_frame_parameters(frame)
    assert frame.startswith(MAGIC)
    assert parameters.has_checksum
    assert parameters.content_size == len(HEADER)
    assert zstandard.ZstdDecompressor().decompress(frame) == HEADER


@pytest.mark.parametrize("level", [-5, 1, 3, 19])
def test_every_level_writes_a_checksummed_frame(level: int) -> None:
    plaintext = _lines(50)
    frame = encode_frame(plaintext, level)
    assert zstandard.get_frame_parameters(frame).has_checksum
    assert _decode(frame) == [plaintext]


def test_empty_plaintext_is_one_complete_frame() -> None:
    frame = encode_frame(b"")
    assert scan_frames(frame) == FrameScan(frames=((0, len(frame)),))
    assert _decode(frame) == [b""]


# --- round trips ---------------------------------------------------------------------------


def test_header_frame_and_batch_frames_round_trip() -> None:
    batches = [HEADER, _lines(3), _lines(1, start=3), _lines(40, start=4), _lines(2, start=44)]
    data, ranges = _log(batches)
    assert scan_frames(data, path=PATH) == FrameScan(frames=tuple(ranges))
    assert ranges[0][0] == 0
    assert all(a[1] == b[0] for a, b in pairwise(ranges))
    assert ranges[-1][1] == len(data)
    assert _decode(data) == batches
    assert _whole_stream(data) == b"".join(batches)


@settings(max_examples=200)
@given(st.lists(st.binary(max_size=300), max_size=8))
def test_any_batches_round_trip_and_match_whole_stream_decoding(batches: list[bytes]) -> None:
    data, ranges = _log([HEADER, *batches])
    assert scan_frames(data) == FrameScan(frames=tuple(ranges))
    assert _decode(data) == [HEADER, *batches]
    assert _whole_stream(data) == HEADER + b"".join(batches)


@pytest.mark.skipif(shutil.which("zstd") is None, reason="no zstd command-line tool")
def test_zstd_command_line_tool_decompresses_the_whole_log() -> None:
    batches = [HEADER, _lines(5), _lines(500, start=5), _lines(1, start=505)]
    data, _ = _log(batches)
    completed = subprocess.run(
        ["zstd", "-d", "-c", "-q"], input=data, capture_output=True, check=True
    )
    assert completed.stdout == b"".join(batches)


# --- frame layouts -------------------------------------------------------------------------

_SMALL = _lines(2)  # under 256 bytes: fits a 1-byte content size field
_MEDIUM = _lines(20)  # 256..65791 bytes: fits every content size field


class _Layout(TypedDict, total=False):
    """Keyword arguments of ``_with_header``."""

    single_segment: Required[bool]
    content_size_bytes: Required[int]
    dictionary_id: bytes
    unused_bit: bool


_REWRITTEN: dict[str, tuple[bytes, _Layout]] = {
    "single-segment, 1-byte content size": (
        _SMALL, {"single_segment": True, "content_size_bytes": 1}
    ),
    "single-segment, 2-byte content size": (
        _MEDIUM, {"single_segment": True, "content_size_bytes": 2}
    ),
    "single-segment, 4-byte content size": (
        _MEDIUM, {"single_segment": True, "content_size_bytes": 4}
    ),
    "single-segment, 8-byte content size": (
        _MEDIUM, {"single_segment": True, "content_size_bytes": 8}
    ),
    "window, no content size": (_MEDIUM, {"single_segment": False, "content_size_bytes": 0}),
    "window, 2-byte content size": (_MEDIUM, {"single_segment": False, "content_size_bytes": 2}),
    "window, 4-byte content size": (_MEDIUM, {"single_segment": False, "content_size_bytes": 4}),
    "window, 8-byte content size": (_MEDIUM, {"single_segment": False, "content_size_bytes": 8}),
    "1-byte dictionary id 0": (
        _MEDIUM, {"single_segment": True, "content_size_bytes": 2, "dictionary_id": b"\x00"}
    ),
    "2-byte dictionary id 0": (
        _MEDIUM, {"single_segment": False, "content_size_bytes": 0, "dictionary_id": b"\x00" * 2}
    ),
    "4-byte dictionary id 0": (
        _MEDIUM, {"single_segment": False, "content_size_bytes": 4, "dictionary_id": b"\x00" * 4}
    ),
    "unused descriptor bit 4 set": (
        _MEDIUM, {"single_segment": True, "content_size_bytes": 2, "unused_bit": True}
    ),
}  # fmt: skip


def _encoded_layouts() -> dict[str, tuple[bytes, bytes]]:
    """Frames in layouts the encoder picks by itself: ``name -> (plaintext, frame)``."""
    checksummed = zstandard.ZstdCompressor(write_checksum=True)
    streamed = checksummed.compressobj()  # size unknown: a window and no content size
    small_window = zstandard.ZstdCompressor(
        compression_params=zstandard.ZstdCompressionParameters.from_level(
            3, window_log=10, write_checksum=1, write_content_size=1
        )
    )
    noise = random.Random(7).randbytes(3000)
    big_noise = random.Random(8).randbytes(300_000)
    zeros = b"\x00" * 300_000
    repetitive = b"hello\n" * 50_000
    return {
        "streamed, no content size": (_MEDIUM, streamed.compress(_MEDIUM) + streamed.flush()),
        "window smaller than content, raw blocks": (noise, small_window.compress(noise)),
        "multi-block raw": (big_noise, encode_frame(big_noise)),
        "multi-block RLE": (zeros, encode_frame(zeros)),
        "multi-block compressed": (repetitive, encode_frame(repetitive)),
        "no checksum": (_MEDIUM, zstandard.ZstdCompressor().compress(_MEDIUM)),
    }


_ENCODED = _encoded_layouts()


def _assert_scans_and_decodes(plaintext: bytes, frame: bytes) -> None:
    """``frame`` between two ordinary frames scans to exact ranges and decodes exactly."""
    before, after = encode_frame(HEADER), encode_frame(_SMALL)
    data = before + frame + after
    middle = (len(before), len(before) + len(frame))
    assert scan_frames(data) == FrameScan(frames=((0, len(before)), middle, (middle[1], len(data))))
    assert _decode(data) == [HEADER, plaintext, _SMALL]
    assert _whole_stream(data) == HEADER + plaintext + _SMALL


@pytest.mark.parametrize("name", list(_REWRITTEN))
def test_rewritten_header_layouts_scan_and_decode(name: str) -> None:
    plaintext, layout = _REWRITTEN[name]
    frame = _with_header(encode_frame(plaintext), **layout)
    _assert_scans_and_decodes(plaintext, frame)


@pytest.mark.parametrize("name", list(_ENCODED))
def test_encoder_chosen_layouts_scan_and_decode(name: str) -> None:
    plaintext, frame = _ENCODED[name]
    _assert_scans_and_decodes(plaintext, frame)


def test_layouts_cover_rle_and_multiple_blocks() -> None:
    """Guards the layout tests above against libzstd choosing other block types."""
    assert [b[1] for b in _blocks(_ENCODED["multi-block raw"][1])] == [0, 0, 0]
    assert 1 in [b[1] for b in _blocks(_ENCODED["multi-block RLE"][1])]
    assert {b[1] for b in _blocks(_ENCODED["multi-block compressed"][1])} == {2}
    assert len(_blocks(_ENCODED["multi-block compressed"][1])) > 1
    assert not zstandard.get_frame_parameters(_ENCODED["no checksum"][1]).has_checksum
    streamed = _ENCODED["streamed, no content size"][1]
    assert zstandard.get_frame_parameters(streamed).content_size == zstandard.CONTENTSIZE_UNKNOWN


def test_frame_needing_a_dictionary_scans_but_fails_validation() -> None:
    samples: list[bytes | bytearray | memoryview] = [
        b"%d common session text %d\n" % (i, i * 31) * 4 for i in range(400)
    ]
    dictionary = zstandard.train_dictionary(1024, samples)
    frame = zstandard.ZstdCompressor(dict_data=dictionary, write_checksum=True).compress(samples[0])
    assert zstandard.get_frame_parameters(frame).dict_id == dictionary.dict_id() != 0
    data = encode_frame(HEADER) + frame
    scan = scan_frames(data)
    assert scan.frames[1] == (len(data) - len(frame), len(data))
    with pytest.raises(CorruptLog) as caught:
        list(decode_frames(data, scan))
    assert caught.value.offset == len(data) - len(frame)


# --- skippable frames ----------------------------------------------------------------------


def _skippable(content: bytes, nibble: int = 0) -> bytes:
    magic = (0x184D2A50 + nibble).to_bytes(4, "little")
    return magic + len(content).to_bytes(4, "little") + content


def test_skippable_frames_are_passed_over() -> None:
    header, batch = encode_frame(HEADER), encode_frame(_SMALL)
    first, second = _skippable(b"meta", 0x0), _skippable(b"", 0xF)
    data = first + header + second + batch + first
    start = len(first)
    assert scan_frames(data) == FrameScan(
        frames=(
            (start, start + len(header)),
            (start + len(header) + len(second), len(data) - len(first)),
        )
    )
    assert _decode(data) == [HEADER, _SMALL]
    assert _whole_stream(data) == HEADER + _SMALL


@pytest.mark.parametrize("cut", range(1, 12))
def test_skippable_frame_cut_by_eof_is_torn(cut: int) -> None:
    header = encode_frame(HEADER)
    skippable = _skippable(b"meta")
    data = header + skippable[:cut]
    assert scan_frames(data) == FrameScan(frames=((0, len(header)),), torn_start=len(header))
    assert recover_torn_frame(skippable[:cut]) == b""


# --- truncation ----------------------------------------------------------------------------


def _truncation_log() -> tuple[bytes, list[tuple[int, int]], list[bytes]]:
    plaintexts = [
        HEADER,
        _lines(3),
        b"\x00" * 300_000,  # RLE blocks
        _lines(150, start=3, text="x" * 40),  # one compressed block
        b"hello\n" * 50_000,  # several compressed blocks
    ]
    data, ranges = _log(plaintexts)
    return data, ranges, plaintexts


def test_truncation_at_every_offset_of_the_last_frames_is_torn_never_corrupt() -> None:
    data, ranges, plaintexts = _truncation_log()
    for cut in range(ranges[-3][0], len(data) + 1):
        scan = scan_frames(data[:cut], path=PATH)
        complete = tuple(r for r in ranges if r[1] <= cut)
        cut_frame = next((i for i, (s, e) in enumerate(ranges) if s < cut < e), None)
        if cut_frame is None:
            assert scan == FrameScan(frames=complete), cut
            continue
        start, end = ranges[cut_frame]
        assert scan == FrameScan(frames=complete, torn_start=start), cut
        recovered = recover_torn_frame(data[start:cut])
        assert plaintexts[cut_frame].startswith(recovered), cut
        if cut >= end - 4:  # every block present; only (part of) the checksum is missing
            assert recovered == plaintexts[cut_frame], cut


def test_torn_frame_recovers_exactly_its_complete_compressed_blocks() -> None:
    """Spec/persistence.md §8 row 16: a torn frame holding 2 complete lines and part of a third."""
    lines = [_lines(1, start=seq, text="abc" * 30) for seq in range(3)]
    compressor = zstandard.ZstdCompressor(write_checksum=True).compressobj()
    frame = b""
    for line in lines:  # one compressed block per line
        frame += compressor.compress(line) + compressor.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
    frame += compressor.flush()
    third = _blocks(frame)[2]
    assert third[1] == 2
    cut = third[0] + 3 + third[2] // 2  # halfway through the third line's block
    data = encode_frame(HEADER) + frame[:cut]
    scan = scan_frames(data)
    assert scan.torn_start == len(data) - cut
    assert recover_torn_frame(data[scan.torn_start :]) == lines[0] + lines[1]


def test_torn_raw_block_recovers_the_bytes_present() -> None:
    """libzstd streams a raw block's bytes as they arrive; compressed blocks come whole."""
    plaintext, frame = _ENCODED["multi-block raw"]
    for cut in (5, 100, 1000, 131_080, 200_000, len(frame) - 4):
        recovered = recover_torn_frame(frame[:cut])
        present = sum(min(max(cut - (at + 3), 0), size) for at, _, size in _blocks(frame))
        assert recovered == plaintext[:present], cut


def test_frame_missing_only_its_checksum_is_torn_and_fully_recovered() -> None:
    """Spec/persistence.md §8 row 18."""
    header, batch = encode_frame(HEADER), encode_frame(_lines(12))
    data = header + batch[:-4]
    assert scan_frames(data) == FrameScan(frames=((0, len(header)),), torn_start=len(header))
    assert recover_torn_frame(batch[:-4]) == _lines(12)


@pytest.mark.parametrize("appended", [MAGIC[:1], MAGIC[:2], MAGIC[:3], b"\x5a", b"\x5a\x2a\x4d"])
def test_part_of_a_magic_number_appended_is_torn(appended: bytes) -> None:
    """Spec/persistence.md §8 row 17 (2 bytes of a frame magic), and the other magic prefixes."""
    data, ranges = _log([HEADER, _lines(2)])
    assert scan_frames(data + appended) == FrameScan(frames=tuple(ranges), torn_start=len(data))
    assert recover_torn_frame(appended) == b""


@pytest.mark.parametrize("appended", [b"\x00", b"\x28\xb5\x00", b"\n\n"])
def test_trailing_bytes_that_begin_no_frame_are_a_bad_magic(appended: bytes) -> None:
    """A write that EOF cut off leaves a prefix of a frame; anything else is damage."""
    data, _ = _log([HEADER, _lines(2)])
    with pytest.raises(CorruptLog, match=f"bad frame magic at byte {len(data)}$"):
        scan_frames(data + appended)


def test_empty_input_has_no_frames_and_nothing_torn() -> None:
    assert scan_frames(b"") == FrameScan(frames=())


def test_max_frames_stops_before_later_damage() -> None:
    data, ranges = _log([HEADER, _lines(2)])
    damaged = data[: ranges[1][0]] + b"junk" + data[ranges[1][0] + 4 :]
    assert scan_frames(damaged, max_frames=1) == FrameScan(frames=(ranges[0],))
    assert scan_frames(data[:10], max_frames=1) == FrameScan(frames=(), torn_start=0)


@settings(max_examples=200)
@given(st.lists(st.binary(min_size=1, max_size=400), min_size=1, max_size=5), st.data())
def test_any_truncation_is_torn_and_recovers_a_prefix(
    batches: list[bytes], draw: st.DataObject
) -> None:
    plaintexts = [HEADER, *batches]
    data, ranges = _log(plaintexts)
    cut = draw.draw(st.integers(0, len(data)))
    scan = scan_frames(data[:cut])
    assert scan.frames == tuple(r for r in ranges if r[1] <= cut)
    torn = [i for i, (s, e) in enumerate(ranges) if s < cut < e]
    assert scan.torn_start == (ranges[torn[0]][0] if torn else None)
    if torn:
        recovered = recover_torn_frame(data[ranges[torn[0]][0] : cut])
        assert plaintexts[torn[0]].startswith(recovered)


# --- corruption ----------------------------------------------------------------------------


def test_bad_magic_in_the_middle_names_its_offset_and_path() -> None:
    data, ranges = _log([HEADER, _lines(2), _lines(3, start=2)])
    start = ranges[1][0]
    damaged = data[:start] + b"\x28\xb5\x2f\xfe" + data[start + 4 :]
    with pytest.raises(CorruptLog) as caught:
        scan_frames(damaged, path=PATH)
    assert str(caught.value) == (
        f'corrupt Zstandard session log "{PATH}": bad frame magic at byte {start}'
    )
    assert caught.value.offset == start
    assert caught.value.path == PATH


def test_error_without_a_path_uses_the_spec_text() -> None:
    with pytest.raises(CorruptLog) as caught:
        scan_frames(b"JSON")
    assert str(caught.value) == "corrupt Zstandard session log: bad frame magic at byte 0"
    assert caught.value.path is None


def test_reserved_descriptor_bit_is_corruption() -> None:
    data, ranges = _log([HEADER, _lines(2)])
    damaged = _flipped(data, ranges[1][0] + 4, 3)
    with pytest.raises(CorruptLog) as caught:
        scan_frames(damaged, path=PATH)
    assert str(caught.value).endswith(f": reserved frame header bit set at byte {ranges[1][0] + 4}")
    assert caught.value.offset == ranges[1][0] + 4


def test_reserved_block_type_is_corruption() -> None:
    data, ranges = _log([HEADER, _lines(2)])
    block = ranges[1][0] + _blocks(encode_frame(_lines(2)))[0][0]
    damaged = data[:block] + bytes([data[block] | 0b110]) + data[block + 1 :]
    with pytest.raises(CorruptLog, match=f": reserved block type at byte {block}$") as caught:
        scan_frames(damaged)
    assert caught.value.offset == block


def test_block_larger_than_the_frame_allows_is_corruption() -> None:
    """A single-segment frame's window is its content size, and blocks fit the window."""
    frame = encode_frame(_SMALL)
    block, block_type, _ = _blocks(frame)[0]
    header = (len(_SMALL) + 1) << 3 | block_type << 1 | 1
    damaged = frame[:block] + header.to_bytes(3, "little") + frame[block + 3 :]
    with pytest.raises(CorruptLog, match=f": block larger than the frame allows at byte {block}$"):
        scan_frames(damaged)


def test_wrong_content_size_fails_validation() -> None:
    frame = _with_header(encode_frame(_MEDIUM), single_segment=False, content_size_bytes=4)
    wrong = frame[:6] + (len(_MEDIUM) - 1).to_bytes(4, "little") + frame[10:]
    with pytest.raises(CorruptLog, match=r"frame at byte 0 failed validation$"):
        _decode(wrong)


def test_flipped_checksum_fails_validation_naming_the_frame() -> None:
    """Spec/persistence.md §8 row 20."""
    data, ranges = _log([HEADER, _lines(10), _lines(2, start=10)])
    start, end = ranges[1]
    for position in range(end - 4, end):
        damaged = _flipped(data, position, 0)
        assert scan_frames(damaged) == scan_frames(data)
        with pytest.raises(CorruptLog) as caught:
            _decode(damaged, path=PATH)
        assert str(caught.value) == (
            f'corrupt Zstandard session log "{PATH}": frame at byte {start} failed validation'
        )
        assert caught.value.offset == start
        assert caught.value.path == PATH


def test_every_bit_flip_in_a_complete_frame_is_caught_or_harmless() -> None:
    """Each flip of a middle frame raises, looks torn at that frame, or decodes identically.

    Flips in block content and in the checksum leave the structure as it was, and the checksum
    (or the decoder) catches them at the frame's start; a few bits libzstd never reads change
    nothing. Flips in the header or a block header usually break the structure (bad magic,
    reserved bit, oversized block, or a later "frame" that is not one). A flip that grows a block
    without exceeding the frame's block limit can carry the frame past EOF: the scanner cannot
    tell that from a torn write, so the frame is reported torn, as spec/persistence.md §3.4's
    scanner would.
    """
    plaintexts = [HEADER, _lines(20), _lines(1, start=20)]
    data, ranges = _log(plaintexts)
    start, end = ranges[1]
    blocks = _blocks(data[start:end])
    payload = range(start + blocks[0][0] + 3, end)  # after the only block header
    assert len(blocks) == 1
    outcomes: dict[str, int] = {"corrupt": 0, "torn": 0, "identical": 0}
    for position in range(start, end):
        for bit in range(8):
            scan, decoded, error = _read(_flipped(data, position, bit))
            if error is not None:
                assert error.offset is not None
                assert start <= error.offset < len(data)
                assert str(error).endswith(
                    (f"at byte {error.offset}", f"frame at byte {error.offset} failed validation")
                )
                if position in payload:
                    assert str(error).endswith(f"frame at byte {start} failed validation")
                outcomes["corrupt"] += 1
            elif scan is not None and scan.torn_start is not None:
                assert scan == FrameScan(frames=(ranges[0],), torn_start=start)
                assert position in range(start + blocks[0][0], start + blocks[0][0] + 3)
                outcomes["torn"] += 1
            else:
                assert decoded == plaintexts  # never different data
                assert (position, bit) == (start + 4, 4) or position in payload
                outcomes["identical"] += 1
    total = (end - start) * 8
    assert outcomes["corrupt"] >= 0.95 * total, outcomes
    assert outcomes["torn"] <= 8, outcomes
