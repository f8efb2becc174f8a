"""``load_file``: one transcript file, read wherever it lies, never written."""

from __future__ import annotations

from pathlib import Path

from agentlog.errors import CorruptLog, SessionNotFound
from agentlog.session import Session
from agentlog.stores.base import Backend
from agentlog.stores.jsonl import JsonlBackend
from agentlog.stores.jsonl.find import first_line
from agentlog.stores.read_only import ReadOnlyBackend
from agentlog.stores.store import Store
from agentlog.values import loads

__all__ = ["TranscriptFile", "load_file", "open_transcript"]


class TranscriptFile(JsonlBackend):
    """A JSONL backend over exactly one transcript file (``.jsonl`` or ``.jsonl.zstd``)."""

    def __init__(self, file: Path) -> None:
        super().__init__(file.parent, compressed=file.name.endswith(".zstd"), url=f"file:{file}")
        self.file = file
        line = first_line(file, compressed=self.compressed)
        try:
            header = loads(line)
        except ValueError:
            header = None
        if not isinstance(header, dict) or type(header.get("id")) is not str:
            raise CorruptLog(
                f'corrupt session log "{file}" line 1: first line is not a session header',
                path=str(file),
                line=1,
            )
        self.session_id: str = header["id"]

    def _find(self, session_id: str) -> Path | None:
        return self.file if session_id == self.session_id and self.file.is_file() else None


def open_transcript(path: str | Path, *, read_only: bool = False) -> tuple[Store, str]:
    """A store over one transcript file, and the id of the session it holds.

    With ``read_only``, nothing is ever written; otherwise continuing the session
    (``store.open(session_id)``) appends to the file, or — for an older format — writes its
    format-4 transcript beside it.

    Raises:
        SessionNotFound: when there is no such file.
        CorruptLog: when its first line is not a session header.
    """
    file = Path(path)
    if not file.is_file():
        raise SessionNotFound(f'no session log file at "{file}"', path=str(file))
    transcript = TranscriptFile(file)
    backend: Backend = ReadOnlyBackend(transcript) if read_only else transcript
    return Store(backend), transcript.session_id


def load_file(path: str | Path) -> Session:
    """A read-only session from one transcript file, of any readable format version.

    The torn tail of a crash and an interrupted turn are repaired in the returned view only;
    the file is never written.

    Raises:
        SessionNotFound: when there is no such file.
        CorruptLog: when the file is damaged before its last complete turn.
        FormatVersionError: when its format cannot be read.
    """
    file = Path(path)
    if not file.is_file():
        raise SessionNotFound(f'no session log file at "{file}"', path=str(file))
    transcript = TranscriptFile(file)
    with Store(transcript) as store:
        return store.inspect(transcript.session_id)
