"""``jsonl:///dir`` and ``jsonl+zstd:///dir`` — dsh-compatible transcript files.

Implements spec/persistence.md §3 for format 4: one directory per session under a project
directory (``_jsonl_layout``), a transcript of one header line and one event per line
(``_jsonl_codec``), optionally as one checksummed Zstandard frame per durable batch
(``_zstd_frames``), and a ``session.lock`` beside it.

Durability: a session becomes visible with its header and first batch at once (written to a
temporary file, fsynced, published with ``link()``, which never overwrites, then the directory
fsynced; publishing holds an ``flock`` on the store root, so one id gets one log even when two
writers create it with different cwds, hence in different directories); every later batch is
written with one ``write()`` and ``fdatasync``; a failed write is truncated away before the
error is raised. The single writer is enforced with a non-blocking ``flock`` on
``session.lock`` (the kernel drops it when the process dies; the file is never deleted).
Readers take no lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from agentlog.errors import CorruptLog, SessionAlreadyExists, StoreError
from agentlog.formats import FORMAT_VERSION
from agentlog.stores._causes import os_cause
from agentlog.stores._durable_files import (
    fsync_dir,
    make_dirs,
    roll_back,
    root_locked,
    write_all,
    write_new,
)
from agentlog.stores._file_lock import lock_session, unlock_session
from agentlog.stores._jsonl_codec import (
    encode_event_line,
    encode_header_line,
    header_problem,
)
from agentlog.stores._jsonl_cut import plan_cut
from agentlog.stores._jsonl_find import (
    check_layout,
    find_transcript,
    first_line,
    generation,
    glob_escape,
    transcript_in,
)
from agentlog.stores._jsonl_layout import LOCK_NAME, log_name, session_dir
from agentlog.stores._jsonl_read import read_transcript
from agentlog.stores._zstd_frames import (
    encode_frame,
)
from agentlog.stores.base import (
    Backend,
    Lease,
    RepairResult,
    SessionInfo,
    StoredLog,
    TornTail,
    session_not_found,
    suffix,
)
from agentlog.values import JsonValue, loads

if TYPE_CHECKING:
    from agentlog.stores.url import StoreURL

__all__ = ["JsonlBackend"]

_logger = logging.getLogger("agentlog.stores")


class _FileLease(Lease):
    """A held ``flock`` on ``session.lock``, plus the open transcript of the session.

    The lease of a session not stored yet is *unplaced* (``directory`` is ``None``): its
    directory depends on the header's ``cwd``, so the lock is taken when the first append
    materializes it (``JsonlBackend._place``).
    """

    def __init__(self, session_id: str, directory: Path | None, lock_fd: int | None) -> None:
        self.session_id = session_id
        self.directory = directory
        self._lock_fd: int | None = lock_fd
        self.log_fd: int | None = None
        self.log_size: int | None = None
        """The transcript's size after this lease's last write (``None``: not known yet)."""

    def release(self, *, remove_lock: bool = False) -> None:
        if self.log_fd is not None:
            os.close(self.log_fd)
            self.log_fd = None
            self.log_size = None
        if self._lock_fd is not None:
            assert self.directory is not None
            unlock_session(self._lock_fd, self.directory / LOCK_NAME if remove_lock else None)
            self._lock_fd = None

    @property
    def placed(self) -> Path:
        """The session's directory (the lease holds its lock)."""
        assert self.directory is not None, "the session was never materialized"
        return self.directory


class JsonlBackend(Backend):
    """Session transcripts under ``root``; ``compressed`` selects ``.jsonl.zstd``."""

    def __init__(self, root: Path, *, compressed: bool, url: str) -> None:
        self.url = url
        self.root = root
        self.compressed = compressed
        self._name = log_name(FORMAT_VERSION, compressed)
        if root.exists() and not root.is_dir():
            raise StoreError(f'store root "{root}" is not a directory')

    @classmethod
    def from_url(cls, url: StoreURL, *, read_only: bool = False) -> Self:
        """The root directory of ``jsonl:///dir`` or ``jsonl+zstd:///dir``.

        Raises:
            StoreError: read-only, when the directory does not exist.
        """
        assert url.path is not None
        if read_only and not url.path.is_dir():
            raise StoreError(
                f'no JSONL store at "{url.path}" (no such directory)', path=str(url.path)
            )
        return cls(url.path, compressed=url.scheme == "jsonl+zstd", url=url.url)

    # --- finding --------------------------------------------------------------------------

    def _find(self, session_id: str) -> Path | None:
        """The transcript of ``session_id`` (its highest generation), or None."""
        return find_transcript(self.root, session_id, compressed=self.compressed, url=self.url)

    def exists(self, session_id: str) -> bool:
        """Whether a transcript of ``session_id`` exists."""
        return self._find(session_id) is not None

    # --- the writer lease -----------------------------------------------------------------

    def lease(self, session_id: str) -> Lease:
        """Lock ``session.lock`` of a stored session; a new one's is locked when it is placed."""
        with self._errors(session_id):
            found = self._find(session_id)
            if found is None:
                return _FileLease(session_id, None, None)
            return _FileLease(
                session_id, found.parent, lock_session(found.parent / LOCK_NAME, session_id)
            )

    def _place(self, lease: _FileLease, header: Mapping[str, JsonValue]) -> Path:
        """The directory of a session being materialized: its cwd's, locked by the lease.

        Raises:
            SessionLocked: when another writer holds that directory's ``session.lock``.
        """
        if lease.directory is None:
            cwd = header.get("cwd")
            directory = session_dir(
                self.root, lease.session_id, cwd if isinstance(cwd, str) else None
            )
            make_dirs(directory)
            lease._lock_fd = lock_session(directory / LOCK_NAME, lease.session_id)
            lease.directory = directory
        return lease.directory

    @contextlib.contextmanager
    def _errors(self, session_id: str | None = None) -> Iterator[None]:
        """Translate an ``OSError`` escaping a backend operation into a ``StoreError``, once.

        STYLE.md §16: file-system errors are this backend's driver errors. Failures the methods
        already explain (a rolled-back append, a lock held elsewhere) are raised as agentlog
        errors inside; this catches the rest (directories that cannot be made, a
        materialization whose write or fsync fails, an unreadable transcript) and names the
        real cause first (disk full, read-only file system, permission ...).
        """
        try:
            yield
        except OSError as exc:
            path = None if exc.filename is None else str(exc.filename)
            subject = f' (session "{session_id}")' if session_id is not None else ""
            raise StoreError(
                f'JSONL store "{self.root}"{subject}: {os_cause(exc)}',
                session_id=session_id,
                path=path,
            ) from exc

    # --- writing --------------------------------------------------------------------------

    def append(
        self,
        lease: Lease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        """Durably append ``events``; at ``next_seq == 0``, publish header and batch at once."""
        assert isinstance(lease, _FileLease)
        with self._errors(lease.session_id):
            self._append(lease, header, events, next_seq=next_seq)

    def drop_torn_tail(self, lease: Lease, session_id: str, torn: TornTail) -> None:
        """Truncate the transcript to its committed prefix and sync it (``DropsTornTails``).

        ``torn.position`` is the byte offset where the committed prefix ends.
        """
        assert isinstance(lease, _FileLease)
        with self._errors(session_id):
            fd = self._log_fd(lease)
            lease.log_size = None
            os.ftruncate(fd, torn.position)
            os.fsync(fd)
            lease.log_size = torn.position

    def _log_fd(self, lease: _FileLease) -> int:
        """The lease's descriptor of the transcript, opened for appending on first use."""
        if lease.log_fd is None:
            lease.log_fd = os.open(
                lease.placed / self._name, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC
            )
        return lease.log_fd

    def _append(
        self,
        lease: _FileLease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        if next_seq == 0:
            self._materialize(lease, self._place(lease, header) / self._name, header, events)
            return
        if not events:
            return
        fd = self._log_fd(lease)
        # The lease holds the only writer: the size it wrote last is the size (no fstat).
        size = lease.log_size if lease.log_size is not None else os.fstat(fd).st_size
        data = self._encode_batch(events)
        lease.log_size = None  # unknown until the write is durable or rolled back
        try:
            write_all(fd, data)
            os.fdatasync(fd)
        except OSError as exc:
            path = lease.placed / self._name
            roll_back(fd, size, path, exc, lease.session_id)
            lease.log_size = size
            raise StoreError(
                f'session "{lease.session_id}": append to "{path}" failed and was rolled back: '
                f"{os_cause(exc)}",
                session_id=lease.session_id,
                path=str(path),
            ) from exc
        lease.log_size = size + len(data)

    def _encode_batch(self, events: Sequence[Mapping[str, Any]]) -> bytes:
        plaintext = b"".join([encode_event_line(event) for event in events])
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
        # Temporary files of writers that died before publishing: this lease's holder is the
        # only one who may publish here, so whatever is left over is theirs and unpublished.
        for leftover in path.parent.glob(f"{glob_escape(path.name)}.*.tmp"):
            with contextlib.suppress(OSError):
                leftover.unlink()
        header_line = encode_header_line(header)
        if self.compressed:
            content = encode_frame(header_line) + (self._encode_batch(events) if events else b"")
        else:
            content = header_line + self._encode_batch(events)
        temporary = path.with_name(f"{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            write_new(temporary, content)
            # One id, one log: a writer creating the same id with another cwd holds another
            # project directory's session.lock, so publishing is serialized on the store root
            # and refused when the id was published anywhere meanwhile.
            with root_locked(self.root):
                # An older generation in this very directory is the log being migrated.
                elsewhere = self._find(lease.session_id)
                if elsewhere is not None and (
                    elsewhere.parent != path.parent or not _older(elsewhere)
                ):
                    raise SessionAlreadyExists(
                        f'session "{lease.session_id}" already has a log at "{elsewhere}"',
                        session_id=lease.session_id,
                        path=str(elsewhere),
                    )
                try:
                    os.link(temporary, path)  # never overwrites, unlike rename
                except FileExistsError:
                    raise SessionAlreadyExists(
                        f'session "{lease.session_id}" already has a log at "{path}"',
                        session_id=lease.session_id,
                        path=str(path),
                    ) from None
            fsync_dir(path.parent)
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink()
        lease.log_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        lease.log_size = len(content)

    # --- removing -------------------------------------------------------------------------

    def delete(self, lease: Lease, session_id: str) -> None:
        """Remove the session's directory: every transcript generation, then the lock.

        The transcripts go first (the highest generation last, so a crash midway never leaves
        an older generation looking current); the lock file is removed while still held, so a
        writer that opened it meanwhile finds it replaced and locks a fresh one.
        """
        assert isinstance(lease, _FileLease)
        with self._errors(session_id):
            if self._find(session_id) is None:
                raise session_not_found(session_id)
            directory = lease.placed
            others = [path for path in directory.iterdir() if path.name != LOCK_NAME]
            for path in sorted(others, key=lambda path: generation(path) or -1):
                path.unlink()
            fsync_dir(directory)
            lease.release(remove_lock=True)
            for empty in (directory, directory.parent):
                try:
                    empty.rmdir()
                except OSError:  # not empty (another session, or a writer's new lock): keep it
                    break
                fsync_dir(empty.parent)

    # --- repair ---------------------------------------------------------------------------

    def cut(self, lease: Lease, session_id: str, *, cut_at: int) -> RepairResult:
        """Cut the transcript after its first ``cut_at`` events; the removed bytes are kept.

        The removed bytes are first written (and synced) to a file beside the transcript,
        ``<transcript>.cut-at-seq-<N>.<UTC time>.removed``. Then a cut at a record boundary
        truncates the transcript in place; one inside a compressed frame writes the kept
        bytes, with that frame's kept lines as a new frame, to a temporary file that replaces
        the transcript (atomically, by rename).
        """
        assert isinstance(lease, _FileLease)
        # The transcript is rewritten through other descriptors: forget this lease's view of it.
        if lease.log_fd is not None:
            os.close(lease.log_fd)
            lease.log_fd = None
        lease.log_size = None
        with self._errors(session_id):
            path = self._find(session_id)
            if path is None:
                raise session_not_found(session_id)
            data = path.read_bytes()
            plan = plan_cut(
                data,
                compressed=self.compressed,
                cut_at=cut_at,
                session_id=session_id,
                location=str(path),
            )
            result = RepairResult(
                session_id=session_id,
                cut_at=cut_at,
                removed=plan.removed,
                damaged=plan.damaged,
            )
            if plan.keep == len(data) and not plan.tail:
                return result
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            saved = path.with_name(f"{path.name}.cut-at-seq-{cut_at}.{stamp}.removed")
            while saved.exists():
                saved = saved.with_name(f"{saved.name[: -len('.removed')]}-1.removed")
            write_new(saved, data[plan.keep :])
            fsync_dir(path.parent)
            if plan.tail:
                temporary = path.with_name(f"{path.name}.{secrets.token_hex(6)}.tmp")
                write_new(temporary, data[: plan.keep] + plan.tail)
                os.replace(temporary, path)
                fsync_dir(path.parent)
            else:
                fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
                try:
                    os.ftruncate(fd, plan.keep)
                    os.fsync(fd)
                finally:
                    os.close(fd)
            return RepairResult(
                session_id=session_id,
                cut_at=cut_at,
                removed=plan.removed,
                damaged=plan.damaged,
                saved_to=str(saved),
            )

    # --- reading --------------------------------------------------------------------------

    def read(self, session_id: str, from_seq: int = 0) -> StoredLog:
        """Read a transcript: header, committed events and the torn tail a crash left.

        The events are those from ``from_seq`` on (the whole transcript is read).
        """
        with self._errors(session_id):
            path = self._find(session_id)
            if path is None:
                raise session_not_found(session_id)
            location = str(path)
            with path.open("rb") as file:
                header, events, torn = read_transcript(
                    file, session_id, location, compressed=self.compressed
                )
        named = generation(path)
        if named is not None and header["version"] != named:
            raise CorruptLog(
                f'corrupt session log "{location}" line 1: header version {header["version"]} '
                f"does not match the file name's format v{named}",
                session_id=session_id,
                path=location,
                line=1,
            )
        stored = StoredLog(header=header, events=events, torn=torn, location=location, first_line=2)
        return suffix(stored, from_seq)

    def list(self) -> list[SessionInfo]:
        """Every transcript under the root, read from its header line."""
        with self._errors():
            if not self.root.is_dir():
                return []
            check_layout(self.root, compressed=self.compressed, url=self.url)
            found = (
                transcript_in(directory, compressed=self.compressed, url=self.url)
                for directory in self.root.glob("*/*")
            )
            infos = (self._info(path) for path in found if path is not None)
            return [info for info in infos if info is not None]

    def _info(self, path: Path) -> SessionInfo | None:
        """What ``list`` reports of one transcript; ``None`` (and a warning) if unreadable."""
        try:
            header = loads(self._first_line(path))
            modified = path.stat().st_mtime_ns // 1_000_000
        except (CorruptLog, ValueError, OSError) as exc:
            _logger.warning('skipping unreadable session log "%s": %s', path, exc)
            return None
        if header_problem(header) is not None or type(header.get("version")) is not int:
            _logger.warning('skipping "%s": its first line is not a session header', path)
            return None
        created_at = header.get("createdAt")
        cwd, parent = header.get("cwd"), header.get("parentSession")
        return SessionInfo(
            id=header["id"],
            created_at=created_at if type(created_at) is int else 0,
            version=header["version"],
            cwd=cwd if isinstance(cwd, str) else None,
            parent_session=parent if isinstance(parent, str) else None,
            location=str(path),
            updated_at=modified,
        )

    def revision(self, session_id: str) -> str | None:
        """The transcript's ``dev:ino:size:mtimeNs:ctimeNs`` (spec/persistence.md §3.7)."""
        path = self._find(session_id)
        if path is None:
            return None
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"

    def _first_line(self, path: Path) -> bytes:
        return first_line(path, compressed=self.compressed)


def _older(path: Path) -> bool:
    """Whether ``path`` is a transcript of an older format (one a migration continues from)."""
    named = generation(path)
    return named is not None and named < FORMAT_VERSION
