"""Zstandard framing of compressed session logs: encode, scan, decode and recover frames.

Implements spec/persistence.md §3.4 (Zstandard framing) and the torn-frame half of §3.5. A
compressed session log is a plain concatenation of independent standard Zstandard frames
(RFC 8878), each with the content-checksum flag set: frame 1 holds exactly the header line and
every later durable batch is one new frame, so any standard zstd tool decompresses the whole file
as one stream. This module works on ``bytes`` only; the store does the file I/O.

Reading is two steps. ``scan_frames`` walks the frame structure *without decompressing*: the
magic number, the frame header (descriptor, window, dictionary id and content size fields), the
3-byte block headers and the optional 4-byte checksum. It returns the byte ranges of the complete
frames and, when EOF falls anywhere inside the last frame (even inside its magic number), that
frame's start as ``torn_start``. ``decode_frames`` then decompresses each complete frame and
verifies its checksum; ``recover_torn_frame`` salvages what a torn frame still holds.

Two choices go beyond the spec's wording, both following RFC 8878:

- Skippable frames (magic ``0x184D2A50``-``0x184D2A5F``) are recognised and skipped, as every
  standard zstd decoder does; they hold no session text. They never appear in
  ``FrameScan.frames``, but a skippable frame cut off by EOF is torn like any other.
- Only bit 3 (``0x08``) of the frame header descriptor is *reserved* (must be zero); bit 4
  (``0x10``) is *unused*, which a decoder "shall not interpret", so a set bit 4 is accepted.

And one check the spec does not list: a block larger than RFC 8878's ``Block_Maximum_Size``
(the smaller of the frame's window size and 128 KiB; libzstd refuses such blocks too) is
corruption. Most bit flips in a block size field are then reported as damage instead of being
read as a frame that runs past EOF, which would look torn and be truncated away.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

import zstandard

from agentlog.errors import CorruptLog

__all__ = [
    "DEFAULT_LEVEL",
    "FrameScan",
    "decode_frames",
    "encode_frame",
    "later_frames",
    "recover_torn_frame",
    "scan_frames",
]

DEFAULT_LEVEL = 5
"""The compression level of new frames.

Not libzstd's (and dsh's) default of 3: on the small frames of a session (a turn, a few KB) level
5 is what reaches DESIGN.md's "zstd ≤ 30% of raw" (0.294× against 0.304× on the benchmark's
agent loop) for ~13 µs more per frame, nothing beside an fsync. Readers do not care: every
level is a standard frame.
"""

_MAGIC = b"\x28\xb5\x2f\xfd"
"""The magic number that starts every Zstandard frame (``0xFD2FB528`` little-endian)."""

_SKIPPABLE_TAIL = b"\x2a\x4d\x18"
"""Bytes 1-3 of a skippable frame's magic; byte 0 is ``0x50``-``0x5F``."""

_MAX_BLOCK_SIZE = 128 * 1024
"""RFC 8878 §3.1.1.2.3: no block is larger than 128 KiB, nor than the frame's window."""

_RESERVED_DESCRIPTOR_BIT = 0x08
_DICTIONARY_ID_SIZES = (0, 1, 2, 4)
_CONTENT_SIZE_SIZES = (0, 2, 4, 8)
_BLOCK_RLE = 1
_BLOCK_RESERVED = 3
_CHECKSUM_SIZE = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameScan:
    """Where the complete frames of a compressed session log are, and where a torn one starts."""

    frames: tuple[tuple[int, int], ...]
    """``(start, end)`` byte ranges of the complete Zstandard frames, in file order."""

    torn_start: int | None = None
    """Start of the frame cut off by EOF, or ``None`` when the bytes end on a frame boundary."""


def encode_frame(plaintext: bytes, level: int = DEFAULT_LEVEL) -> bytes:
    """Compress ``plaintext`` into one standard Zstandard frame with content size and checksum.

    Concatenations of such frames decompress as one stream with any standard zstd tool.

    Args:
        plaintext: The bytes to compress (a header line, or one durable batch of lines).
        level: The Zstandard compression level (1-22; negative levels are faster).

    Returns:
        The frame.
    """
    compressors: dict[int, zstandard.ZstdCompressor] = vars(_local).setdefault("compressors", {})
    compressor = compressors.get(level)
    if compressor is None:
        # Building a compressor costs several times a small frame's compression; a compressor
        # must not be shared between threads (write-behind writes on its own thread).
        compressor = compressors[level] = zstandard.ZstdCompressor(
            level=level, write_checksum=True, write_content_size=True
        )
    return compressor.compress(plaintext)


_local = threading.local()


def scan_frames(
    data: bytes, *, path: str | None = None, max_frames: int | None = None
) -> FrameScan:
    """Find the complete frames in ``data`` and the start of a torn final frame, if any.

    Implements the structural scanner of spec/persistence.md §3.4: nothing is decompressed.
    Pure truncation never raises; whatever EOF cuts off (including a partial magic number)
    becomes ``torn_start``. Skippable frames are passed over (see the module docstring).

    Args:
        data: The bytes of a compressed session log, or a prefix of them.
        path: The log's path, used in error messages and set on the error.
        max_frames: Stop after this many complete frames (listing needs only the first);
            ``None`` scans to the end.

    Returns:
        The complete frames' byte ranges and ``torn_start``.

    Raises:
        CorruptLog: A bad magic number, a reserved frame header bit, a reserved block type or an
            oversized block; the message and ``offset`` give the byte offset.
    """
    frames: list[tuple[int, int]] = []
    position = 0
    while position < len(data) and (max_frames is None or len(frames) < max_frames):
        end, is_data = _frame_end(data, position, path)
        if end is None:
            return FrameScan(frames=tuple(frames), torn_start=position)
        if is_data:
            frames.append((position, end))
        position = end
    return FrameScan(frames=tuple(frames))


def decode_frames(data: bytes, scan: FrameScan, *, path: str | None = None) -> Iterator[bytes]:
    """Decompress each complete frame of ``scan``, verifying its content checksum.

    Implements the decoding rule of spec/persistence.md §3.4 with one reused decompressor. The
    plaintexts are yielded frame by frame, so a caller may pause between frames.

    Args:
        data: The bytes that ``scan`` was made from.
        scan: The result of ``scan_frames(data)``.
        path: The log's path, used in error messages and set on the error.

    Yields:
        Each complete frame's plaintext, in file order.

    Raises:
        CorruptLog: A frame fails to decompress, fails its checksum or content size, or ends
            where the scanner did not expect; ``offset`` is the frame's start.
    """
    decompressor = zstandard.ZstdDecompressor()
    view = memoryview(data)
    for start, end in scan.frames:
        # A decompression object, not the one-shot ``decompress``: one-shot allocates the size
        # the frame header claims up front, which a damaged header can make enormous, and it
        # refuses frames that do not record their content size at all.
        stream = decompressor.decompressobj()
        try:
            plaintext = stream.decompress(view[start:end])
        except zstandard.ZstdError as exc:
            raise _failed_validation(path, start) from exc
        if not stream.eof or stream.unused_data:
            raise _failed_validation(path, start)
        yield plaintext


def recover_torn_frame(fragment: bytes) -> bytes:
    """Decompress what a frame cut off by EOF still holds; best effort.

    Implements the torn-frame recovery of spec/persistence.md §3.5: a partial (flush-mode)
    decompression of ``data[scan.torn_start:]``. The result is a prefix of the frame's plaintext
    (its checksum cannot be verified) and may end mid-line: keep only its complete lines. A frame
    missing only its checksum yields its whole plaintext.

    Args:
        fragment: The bytes from the torn frame's start to EOF.

    Returns:
        The recovered plaintext, or ``b""`` when nothing can be recovered.
    """
    try:
        return zstandard.ZstdDecompressor().decompressobj().decompress(fragment)
    except zstandard.ZstdError:
        return b""


def later_frames(data: bytes, start: int) -> Iterator[tuple[int, int, bytes]]:
    """``(start, end, plaintext)`` of each valid frame that lies anywhere after byte ``start``.

    Used only once a log is known to be damaged at ``start``: it tells a torn final frame
    (nothing valid after it) from a damaged one that committed frames follow. Each occurrence of
    the magic number is tried; a frame counts only if it is complete and passes its checksum.
    """
    decompressor = zstandard.ZstdDecompressor()
    position = data.find(_MAGIC, start)
    while position >= 0:
        try:
            end = _data_frame_end(data, position, None)
        except CorruptLog:
            end = None
        if end is not None:
            stream = decompressor.decompressobj()
            try:
                plaintext = stream.decompress(data[position:end])
            except zstandard.ZstdError:
                plaintext = None
            if plaintext is not None and stream.eof and not stream.unused_data:
                yield position, end, plaintext
                position = data.find(_MAGIC, end)
                continue
        position = data.find(_MAGIC, position + 1)


def _frame_end(data: bytes, start: int, path: str | None) -> tuple[int | None, bool]:
    """Return the end of the frame at ``start`` (``None`` if EOF cuts it) and whether it is data.

    Follows RFC 8878 §3.1.1 (data frames) and §3.1.2 (skippable frames).
    """
    magic = data[start : start + 4]
    if magic == _MAGIC:
        return _data_frame_end(data, start, path), True
    if _is_skippable_magic(magic):
        if len(magic) < 4 or start + 8 > len(data):
            return None, False
        end = start + 8 + int.from_bytes(data[start + 4 : start + 8], "little")
        return (end if end <= len(data) else None), False
    if len(magic) < 4 and _MAGIC.startswith(magic):
        return None, True
    raise _corrupt(path, "bad frame magic", start)


def _is_skippable_magic(magic: bytes) -> bool:
    """Whether ``magic`` is a skippable frame's magic number, or a prefix of one."""
    return bool(magic) and magic[0] & 0xF0 == 0x50 and _SKIPPABLE_TAIL.startswith(magic[1:])


def _data_frame_end(data: bytes, start: int, path: str | None) -> int | None:
    """Return the end of the Zstandard data frame at ``start``, or ``None`` if EOF cuts it."""
    size = len(data)
    position = start + len(_MAGIC)
    if position >= size:
        return None
    descriptor = data[position]
    if descriptor & _RESERVED_DESCRIPTOR_BIT:
        raise _corrupt(path, "reserved frame header bit set", position)
    single_segment = bool(descriptor & 0x20)
    window_at = position + 1  # single-segment frames have no window descriptor
    content_size_at = window_at + (0 if single_segment else 1)
    content_size_at += _DICTIONARY_ID_SIZES[descriptor & 0x03]
    content_size_bytes = _CONTENT_SIZE_SIZES[descriptor >> 6] or (1 if single_segment else 0)
    position = content_size_at + content_size_bytes
    if position > size:
        return None
    if single_segment:  # the window is exactly the content
        window_size = _content_size(data[content_size_at:position])
    else:
        window_size = _window_size(data[window_at])
    max_block_size = min(window_size, _MAX_BLOCK_SIZE)
    while True:
        if position + 3 > size:
            return None
        header = int.from_bytes(data[position : position + 3], "little")
        block_type = (header >> 1) & 0x03
        block_size = header >> 3
        if block_type == _BLOCK_RESERVED:
            raise _corrupt(path, "reserved block type", position)
        if block_size > max_block_size:
            raise _corrupt(path, "block larger than the frame allows", position)
        position += 3 + (1 if block_type == _BLOCK_RLE else block_size)
        if header & 0x01:  # the last block
            break
    if descriptor & 0x04:  # the content checksum flag
        position += _CHECKSUM_SIZE
    return position if position <= size else None


def _window_size(descriptor: int) -> int:
    """Decode a window descriptor byte (RFC 8878 §3.1.1.1.2)."""
    window_base = 1 << (10 + (descriptor >> 3))
    return window_base + (window_base >> 3) * (descriptor & 0x07)


def _content_size(field: bytes) -> int:
    """Decode a frame content size field of 1, 2, 4 or 8 bytes (RFC 8878 §3.1.1.1.4)."""
    value = int.from_bytes(field, "little")
    return value + 256 if len(field) == 2 else value


def _prefix(path: str | None) -> str:
    return "corrupt Zstandard session log" + (f' "{path}"' if path is not None else "")


def _corrupt(path: str | None, what: str, offset: int) -> CorruptLog:
    return CorruptLog(f"{_prefix(path)}: {what} at byte {offset}", path=path, offset=offset)


def _failed_validation(path: str | None, offset: int) -> CorruptLog:
    return CorruptLog(
        f"{_prefix(path)}: frame at byte {offset} failed validation", path=path, offset=offset
    )
