"""``JsonlBackend``: the JSONL store over the modules of its package.

Implements spec/persistence.md §3 for format 4: one directory per session under a project
directory (``layout``), a transcript of one header line and one event per line (``codec``),
optionally as one checksummed Zstandard frame per durable batch (``frames``), and a
``session.lock`` beside it (``lease``). A crashed writer's torn tail is reported by ``read``
and cut by ``drop_torn_tail`` (``DropsTornTails``).

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
from agentlog.stores._file_lock import lock_session
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
from agentlog.stores.jsonl.codec import (
    encode_event_lines,
    encode_header_line,
)
from agentlog.stores.jsonl.cut import cut_transcript
from agentlog.stores.jsonl.find import (
    check_layout,
    find_transcript,
    generation,
    glob_escape,
    session_info,
    transcript_in,
)
from agentlog.stores.jsonl.frames import (
    encode_frame,
)
from agentlog.stores.jsonl.layout import LOCK_NAME, log_name, session_dir
from agentlog.stores.jsonl.lease import FileLease
from agentlog.stores.jsonl.read import read_transcript
from agentlog.values import JsonValue

if TYPE_CHECKING:
    from agentlog.stores.url import StoreURL

__all__ = ["JsonlBackend"]

_logger = logging.getLogger("agentlog.stores")


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
                return FileLease(session_id, None, None)
            return FileLease(
                session_id, found.parent, lock_session(found.parent / LOCK_NAME, session_id)
            )

    def _place(self, lease: FileLease, header: Mapping[str, JsonValue]) -> Path:
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
        assert isinstance(lease, FileLease)
        with self._errors(lease.session_id):
            self._append(lease, header, events, next_seq=next_seq)

    def drop_torn_tail(self, lease: Lease, session_id: str, torn: TornTail) -> None:
        """Truncate the transcript to its committed prefix and sync it (``DropsTornTails``).

        ``torn.position`` is the byte offset where the committed prefix ends.
        """
        assert isinstance(lease, FileLease)
        with self._errors(session_id):
            fd = self._log_fd(lease)
            lease.log_size = None
            os.ftruncate(fd, torn.position)
            os.fsync(fd)
            lease.log_size = torn.position

    def _log_fd(self, lease: FileLease) -> int:
        """The lease's descriptor of the transcript, opened for appending on first use."""
        if lease.log_fd is None:
            lease.log_fd = os.open(
                lease.placed / self._name, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC
            )
        return lease.log_fd

    def _append(
        self,
        lease: FileLease,
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
        plaintext = encode_event_lines(events)
        return encode_frame(plaintext) if self.compressed else plaintext

    def _materialize(
        self,
        lease: FileLease,
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
        assert isinstance(lease, FileLease)
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
        """Cut the transcript after its first ``cut_at`` events (``cut_transcript``)."""
        assert isinstance(lease, FileLease)
        # The transcript is rewritten through other descriptors: forget this lease's view of it.
        if lease.log_fd is not None:
            os.close(lease.log_fd)
            lease.log_fd = None
        lease.log_size = None
        with self._errors(session_id):
            path = self._find(session_id)
            if path is None:
                raise session_not_found(session_id)
            return cut_transcript(
                path, compressed=self.compressed, session_id=session_id, cut_at=cut_at
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
            infos = (session_info(path, self.compressed) for path in found if path is not None)
            return [info for info in infos if info is not None]

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


def _older(path: Path) -> bool:
    """Whether ``path`` is a transcript of an older format (one a migration continues from)."""
    named = generation(path)
    return named is not None and named < FORMAT_VERSION
