"""``jsonl:///dir`` and ``jsonl+zstd:///dir`` — dsh-compatible transcript files.

Implements spec/persistence.md §3 for format 4: one directory per session under a project
directory (``_jsonl_layout``), a transcript of one header line and one event per line
(``_jsonl_codec``), optionally as one checksummed Zstandard frame per durable batch
(``_zstd_frames``), and a ``session.lock`` beside it.

Durability: a session becomes visible with its header and first batch at once (written to a
temporary file, fsynced, published with ``link()``, which never overwrites, then the directory
fsynced); every later batch is written with one ``write()`` and ``fdatasync``; a failed write is
truncated away before the error is raised. The single writer is enforced with a non-blocking
``flock`` on ``session.lock`` (the kernel drops it when the process dies; the file is never
deleted). Readers take no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import secrets
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentlog.errors import (
    CorruptLog,
    SessionAlreadyExists,
    SessionLocked,
    SessionNotFound,
    StoreError,
)
from agentlog.stores._jsonl_codec import (
    decode_event_line,
    encode_event_line,
    encode_header_line,
    header_problem,
)
from agentlog.stores._jsonl_layout import LOCK_NAME, encode_segment, log_name, session_dir
from agentlog.stores._zstd_frames import (
    decode_frames,
    encode_frame,
    recover_torn_frame,
    scan_frames,
)
from agentlog.stores.base import Backend, Lease, SessionInfo, StoredLog, TornTail
from agentlog.stores.recovery import FORMAT_VERSION, Record, check_format_version, committed_prefix
from agentlog.values import JsonValue, loads

__all__ = ["JsonlBackend"]

_logger = logging.getLogger("agentlog.stores")


class _FileLease(Lease):
    """A held ``flock`` on ``session.lock``, plus the open transcript of the session."""

    def __init__(self, session_id: str, directory: Path, lock_fd: int) -> None:
        self.session_id = session_id
        self.directory = directory
        self._lock_fd: int | None = lock_fd
        self.log_fd: int | None = None

    def release(self) -> None:
        if self.log_fd is not None:
            os.close(self.log_fd)
            self.log_fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None


class JsonlBackend(Backend):
    """Session transcripts under ``root``; ``compressed`` selects ``.jsonl.zstd``."""

    def __init__(self, root: Path, *, compressed: bool, url: str) -> None:
        self.url = url
        self.root = root
        self.compressed = compressed
        self._name = log_name(FORMAT_VERSION, compressed)
        self._other_name = log_name(FORMAT_VERSION, not compressed)
        if root.exists() and not root.is_dir():
            raise StoreError(f'store root "{root}" is not a directory')

    # --- finding --------------------------------------------------------------------------

    def _find(self, session_id: str) -> Path | None:
        """The transcript of ``session_id``, searched in every project directory."""
        if not self.root.is_dir():
            return None
        segment = encode_segment(session_id)
        found = [
            path
            for directory in self.root.glob(f"*/{_glob_escape(segment)}")
            for path in (directory / self._name, directory / self._other_name)
            if path.is_file()
        ]
        if not found:
            return None
        if len(found) > 1:
            raise CorruptLog(
                f'duplicate JSONL session id "{session_id}" appears in multiple places: '
                + ", ".join(f'"{path}"' for path in found),
                session_id=session_id,
                path=str(found[0]),
            )
        path = found[0]
        if path.name != self._name:
            raise StoreError(
                f'session artifact "{path}" uses {path.suffixes[-1]}, but this store is '
                f"{self.url!r}; use a store URL with the matching compression",
                session_id=session_id,
                path=str(path),
            )
        return path

    def exists(self, session_id: str) -> bool:
        """Whether a transcript of ``session_id`` exists."""
        return self._find(session_id) is not None

    # --- the writer lease -----------------------------------------------------------------

    def lease(self, session_id: str, *, cwd: str | None = None) -> Lease:
        """Lock ``session.lock`` of the session (creating its directory for a new session)."""
        found = self._find(session_id)
        directory = found.parent if found is not None else session_dir(self.root, session_id, cwd)
        _make_dirs(directory)
        lock_path = directory / LOCK_NAME
        for _attempt in range(3):
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise SessionLocked(
                    f'session "{session_id}" is open for writing by another writer '
                    f'(lock "{lock_path}")',
                    session_id=session_id,
                    path=str(lock_path),
                ) from None
            # The lock file may have been replaced between open and flock: lock what the path
            # names now, or try again.
            if _same_file(fd, lock_path):
                return _FileLease(session_id, directory, fd)
            os.close(fd)
        raise SessionLocked(
            f'session "{session_id}" lock file "{lock_path}" keeps changing',
            session_id=session_id,
            path=str(lock_path),
        )

    # --- writing --------------------------------------------------------------------------

    def append(
        self,
        lease: Lease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
        truncate: TornTail | None = None,
    ) -> None:
        """Durably append ``events``; at ``next_seq == 0``, publish header and batch at once."""
        assert isinstance(lease, _FileLease)
        path = lease.directory / self._name
        if next_seq == 0:
            self._materialize(lease, path, header, events)
            return
        if lease.log_fd is None:
            lease.log_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        fd = lease.log_fd
        if truncate is not None:
            os.ftruncate(fd, truncate.position)
            os.fsync(fd)
        if not events:
            return
        size = os.fstat(fd).st_size
        try:
            _write_all(fd, self._encode_batch(events))
            os.fdatasync(fd)
        except OSError as exc:
            _roll_back(fd, size, path, exc, lease.session_id)
            raise StoreError(
                f'append to "{path}" failed and was rolled back: {exc}',
                session_id=lease.session_id,
                path=str(path),
            ) from exc

    def _encode_batch(self, events: Sequence[Mapping[str, Any]]) -> bytes:
        plaintext = b"".join(encode_event_line(event) for event in events)
        return encode_frame(plaintext) if self.compressed else plaintext

    def _materialize(
        self,
        lease: _FileLease,
        path: Path,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
    ) -> None:
        if path.exists():
            raise SessionAlreadyExists(
                f'session "{lease.session_id}" already has a log at "{path}"',
                session_id=lease.session_id,
                path=str(path),
            )
        header_line = encode_header_line(header)
        if self.compressed:
            content = encode_frame(header_line) + (self._encode_batch(events) if events else b"")
        else:
            content = header_line + self._encode_batch(events)
        temporary = path.with_name(f"{path.name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            try:
                _write_all(fd, content)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(temporary, path)  # never overwrites, unlike rename
            except FileExistsError:
                raise SessionAlreadyExists(
                    f'session "{lease.session_id}" already has a log at "{path}"',
                    session_id=lease.session_id,
                    path=str(path),
                ) from None
            _fsync_dir(path.parent)
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink()
        lease.log_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)

    # --- reading --------------------------------------------------------------------------

    def read(self, session_id: str) -> StoredLog:
        """Read a transcript: header, committed events and the torn tail a crash left."""
        path = self._find(session_id)
        if path is None:
            raise SessionNotFound(f'session "{session_id}" not found', session_id=session_id)
        data = path.read_bytes()
        location = str(path)
        if self.compressed:
            header_line, records, torn_start, recovered_text = _scan_compressed(data, location)
        else:
            header_line, body_start = _split_header(data, location)
            records = list(_scan_lines(data, body_start, first_line=2))
            torn_start, recovered_text = None, b""
        header = _read_header(header_line, session_id, location)
        if torn_start is None:
            events, torn = committed_prefix(records, location=location, session_id=session_id)
        else:
            events = _all_committed(records, location)
            recovered = _recover(recovered_text, len(events))
            torn = TornTail(
                position=torn_start,
                reason=f"torn Zstandard frame at byte {torn_start}",
                recovered=tuple(recovered),
            )
        return StoredLog(header=header, events=events, torn=torn, location=location, first_line=2)

    def list(self) -> list[SessionInfo]:
        """Every transcript under the root, read from its header line."""
        infos: list[SessionInfo] = []
        if not self.root.is_dir():
            return infos
        for path in self.root.glob(f"*/*/{_glob_escape(self._name)}"):
            try:
                header = loads(self._first_line(path))
            except (CorruptLog, ValueError, OSError) as exc:
                _logger.warning('skipping unreadable session log "%s": %s', path, exc)
                continue
            if header_problem(header) is not None or type(header.get("version")) is not int:
                _logger.warning('skipping "%s": its first line is not a session header', path)
                continue
            infos.append(
                SessionInfo(
                    id=header["id"],
                    created_at=int(header.get("createdAt", 0)),
                    version=header["version"],
                    cwd=header.get("cwd"),
                    parent_session=header.get("parentSession"),
                    location=str(path),
                )
            )
        return infos

    def _first_line(self, path: Path) -> bytes:
        if not self.compressed:
            with path.open("rb") as file:
                line = file.readline()
            if not line.endswith(b"\n"):
                raise CorruptLog(f'empty or header-less session log "{path}"', path=str(path))
            return line
        data = path.read_bytes()
        scan = scan_frames(data, path=str(path), max_frames=1)
        if not scan.frames:
            raise CorruptLog(f'empty or header-less Zstandard session log "{path}"', path=str(path))
        return next(iter(decode_frames(data, scan, path=str(path))))


def _glob_escape(segment: str) -> str:
    return "".join(f"[{c}]" if c in "*?[]" else c for c in segment)


def _make_dirs(directory: Path) -> None:
    """Create ``directory`` (0700) and its missing parents, fsyncing each parent."""
    missing = []
    current = directory
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        current = path.stat()
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (opened.st_dev, opened.st_ino) == (current.st_dev, current.st_ino)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _roll_back(fd: int, size: int, path: Path, cause: OSError, session_id: str) -> None:
    """Truncate a failed append away; if even that fails, say so with both errors."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError as rollback:
        raise StoreError(
            f'failed to roll back append to "{path}": {cause}; rollback: {rollback}',
            session_id=session_id,
            path=str(path),
        ) from rollback


def _split_header(data: bytes, location: str) -> tuple[bytes, int]:
    end = data.find(b"\n")
    if end < 0:
        raise CorruptLog(f'empty or header-less session log "{location}"', path=location, line=1)
    return data[: end + 1], end + 1


def _read_header(line: bytes, session_id: str, location: str) -> dict[str, Any]:
    """Parse and check the header record; the version is checked before the shape."""
    try:
        record = loads(line)
    except ValueError:
        record = None
    if isinstance(record, dict) and type(record.get("version")) is int:
        check_format_version(record["version"], session_id, location, lambda _version: False)
    problem = header_problem(record)
    if problem is not None:
        raise CorruptLog(
            f'corrupt session log "{location}" line 1: {problem}', path=location, line=1
        )
    assert isinstance(record, dict)
    if record["id"] != session_id:
        raise CorruptLog(
            f'corrupt session log "{location}": requested id "{session_id}" does not match '
            f'header id "{record["id"]}"',
            session_id=session_id,
            path=location,
            line=1,
        )
    return record


def _scan_lines(data: bytes, start: int, *, first_line: int) -> Iterator[Record]:
    """One record per line of ``data[start:]``; a final fragment without newline is torn."""
    position, line_number = start, first_line
    end = len(data)
    while position < end:
        newline = data.find(b"\n", position)
        if newline < 0:
            yield Record(None, "incomplete final line (torn write)", position, line_number)
            return
        event, problem = decode_event_line(data[position:newline])
        yield Record(event, problem, position, line_number)
        position, line_number = newline + 1, line_number + 1


def _scan_compressed(data: bytes, location: str) -> tuple[bytes, list[Record], int | None, bytes]:
    """Header line, the records of the complete frames, the torn frame's start and text."""
    scan = scan_frames(data, path=location)
    if not scan.frames:
        raise CorruptLog(
            f'empty or header-less Zstandard session log "{location}"', path=location, line=1
        )
    frames = list(decode_frames(data, scan, path=location))
    header_line = frames[0]
    if header_line.count(b"\n") != 1 or not header_line.endswith(b"\n"):
        raise CorruptLog(
            f'corrupt Zstandard session log "{location}": first frame is not exactly one header '
            "line",
            path=location,
            offset=0,
        )
    body = b"".join(frames[1:])
    if body and not body.endswith(b"\n"):
        raise CorruptLog(
            f'corrupt Zstandard session log "{location}": complete frame contains a torn JSONL '
            "record",
            path=location,
        )
    records = list(_scan_lines(body, 0, first_line=2))
    recovered = b""
    if scan.torn_start is not None:
        recovered = recover_torn_frame(data[scan.torn_start :])
        _logger.warning(
            'session log "%s": dropping a torn Zstandard frame at byte %d',
            location,
            scan.torn_start,
        )
    return header_line, records, scan.torn_start, recovered


def _all_committed(records: list[Record], location: str) -> list[Mapping[str, Any]]:
    """Records inside checksummed frames must all be good: any bad one is corruption."""
    events: list[Mapping[str, Any]] = []
    for index, record in enumerate(records):
        event = record.event
        problem = record.problem
        if problem is None and (event is None or event.get("seq") != index):
            problem = f"seq gap (expected {index})"
        if problem is not None:
            raise CorruptLog(
                f'corrupt Zstandard session log "{location}" line {record.line}: {problem}',
                path=location,
                line=record.line,
            )
        assert event is not None
        events.append(event)
    return events


def _recover(text: bytes, next_seq: int) -> list[Mapping[str, Any]]:
    """The complete, contiguous events at the start of a torn frame's recovered text."""
    recovered: list[Mapping[str, Any]] = []
    for record in _scan_lines(text, 0, first_line=0):
        event = record.event
        if event is None or event.get("seq") != next_seq + len(recovered):
            break
        recovered.append(event)
    return recovered
