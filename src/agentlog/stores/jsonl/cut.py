"""Where to cut a transcript so that it keeps exactly its first ``cut_at`` events.

The planning half of ``Store.repair`` for JSONL stores (DESIGN.md, Reliability: the explicit,
reported way past ``CorruptLog``). A pure function over the transcript's bytes: it checks that
every record before the cut is the next event (a cut cannot skip damage), and says which bytes
stay, which bytes replace the rest (only when a compressed frame is split: its kept lines are
re-encoded as a frame of their own), and what the removed part held. ``cut_transcript`` then
does the cut, keeping the removed bytes durably beside the transcript first.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlog.errors import CorruptLog, StoreError
from agentlog.formats import ROW_TYPES, MalformedChunkRow, decode_storage_record
from agentlog.stores._durable_files import fsync_dir, write_new
from agentlog.stores.base import RepairResult
from agentlog.stores.jsonl.codec import decode_event_line, header_problem
from agentlog.stores.jsonl.frames import (
    FrameScan,
    decode_frames,
    encode_frame,
    later_frames,
    scan_frames,
)
from agentlog.stores.jsonl.read import well_formed_lines
from agentlog.stores.jsonl.torn import event_problem
from agentlog.stores.recovery import check_format_version
from agentlog.values import loads

__all__ = ["CutPlan", "cut_transcript", "plan_cut"]

_FIRST_UNPACKED_VERSION = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class CutPlan:
    """How to cut a transcript: keep ``data[:keep]``, then write ``tail`` after it."""

    keep: int
    """How many leading bytes stay as they are."""
    tail: bytes = b""
    """Bytes that replace everything after ``keep`` (a re-encoded part of a split frame)."""
    removed: int = 0
    """Well-formed records removed."""
    damaged: int = 0
    """Damaged records removed (lines that do not parse; a frame that cannot be read is one)."""


def plan_cut(
    data: bytes, *, compressed: bool, cut_at: int, session_id: str, location: str
) -> CutPlan:
    """Plan the cut of a transcript's bytes after its first ``cut_at`` events.

    Raises:
        CorruptLog: when a record before ``cut_at`` is damaged (the cut would keep damage).
        StoreError: when the log holds fewer than ``cut_at`` events, or ``cut_at`` falls inside
            a packed chunk row (formats 0 and 1).
        FormatVersionError: when the header declares a version this build cannot read.
    """
    cutter = _Cutter(session_id, location, cut_at)
    if compressed:
        return cutter.compressed(data)
    return cutter.plain(data)


class _Cutter:
    """The walk over a transcript's records up to the cut (one per ``plan_cut`` call)."""

    def __init__(self, session_id: str, location: str, cut_at: int) -> None:
        self.session_id = session_id
        self.location = location
        self.cut_at = cut_at
        self.count = 0  # events before the current record
        self.line = 1  # the current record's line
        self.rows = False

    def plain(self, data: bytes) -> CutPlan:
        end = data.find(b"\n")
        if end < 0:
            raise self._damaged("empty or header-less session log")
        self._header(data[:end])
        position = end + 1
        while self.count < self.cut_at:
            end = data.find(b"\n", position)
            if end < 0:
                raise self._short()
            self.line += 1
            self._take(data[position:end])
            position = end + 1
        rest = data[position:].split(b"\n")
        if rest[-1] == b"":
            rest.pop()  # the newline that ends the last line
        kept = well_formed_lines(rest)
        return CutPlan(keep=position, removed=kept, damaged=len(rest) - kept)

    def compressed(self, data: bytes) -> CutPlan:
        try:
            scan = scan_frames(data, path=self.location)
        except CorruptLog as exc:
            # The frames before the damage can still be cut after.
            scan = FrameScan(frames=scan_frames(data[: exc.offset or 0]).frames)
        if not scan.frames:
            raise self._damaged("empty or header-less Zstandard session log")
        texts = _until_damage(decode_frames(data, scan, path=self.location))
        header = next(texts)
        if isinstance(header, CorruptLog) or header.count(b"\n") != 1:
            raise self._damaged("first frame is not exactly one header line")
        self._header(header[:-1])
        clean_end = covered = scan.frames[0][1]  # the last frame end between two lines
        carry = pending = b""  # complete lines since clean_end; a line split across frames
        for (frame_start, frame_end), text in zip(scan.frames[1:], texts, strict=False):
            if isinstance(text, CorruptLog):
                covered = frame_start
                break
            lines = (pending + text).split(b"\n")
            pending = lines.pop()
            for index, line in enumerate(lines):
                if self.count == self.cut_at:
                    removed = [*lines[index:], *([pending] if pending else [])]
                    return self._cut_frame(data, clean_end, carry, frame_end, removed)
                self.line += 1
                self._take(line)
                carry += line + b"\n"
            covered = frame_end
            if not pending:
                clean_end, carry = frame_end, b""
        if self.count == self.cut_at:
            return self._cut_frame(data, clean_end, carry, covered, [pending] if pending else [])
        self.line += 1
        if pending or covered < len(data):
            raise self._damaged("a record or frame that cannot be read")
        raise self._short()

    def _cut_frame(
        self, data: bytes, clean_end: int, carry: bytes, covered: int, removed: list[bytes]
    ) -> CutPlan:
        """Keep ``data[:clean_end]`` and ``carry`` (as a new frame); count what goes.

        ``removed`` are the lines read but not kept; the bytes from ``covered`` on are counted
        here: the lines of every valid frame, and each stretch no valid frame covers as one
        damaged record.
        """
        kept = well_formed_lines(removed)
        damaged = len(removed) - kept
        for start, end, text in later_frames(data, covered):
            damaged += start > covered
            lines = text.split(b"\n")[:-1]
            good = well_formed_lines(lines)
            kept, damaged = kept + good, damaged + len(lines) - good
            covered = end
        damaged += covered < len(data)
        tail = encode_frame(carry) if carry else b""
        return CutPlan(keep=clean_end, tail=tail, removed=kept, damaged=damaged)

    def _header(self, line: bytes) -> None:
        try:
            record = loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and type(record.get("version")) in (int, float):
            check_format_version(record["version"], self.session_id, self.location)
        problem = header_problem(record)
        if problem is not None:
            raise self._damaged(problem)
        assert isinstance(record, dict)
        self.rows = record["version"] < _FIRST_UNPACKED_VERSION

    def _take(self, line: bytes) -> None:
        """Count the events of one record before the cut; it must hold the next ones."""
        events = self._events(line)
        if self.count + len(events) > self.cut_at:
            raise StoreError(
                f'cannot cut session "{self.session_id}" at seq {self.cut_at}: "{self.location}" '
                f"line {self.line} packs seqs {self.count}-{self.count + len(events) - 1} into one "
                f"row; cut at seq {self.count} or {self.count + len(events)}",
                session_id=self.session_id,
                path=self.location,
            )
        self.count += len(events)

    def _events(self, line: bytes) -> list[Any]:
        event, problem = decode_event_line(line)
        members: list[Any] = [event]
        if problem is None and self.rows and event is not None and event.get("type") in ROW_TYPES:
            try:
                members = decode_storage_record(event)
            except MalformedChunkRow as exc:
                problem = str(exc)
        for offset, member in enumerate(members):
            problem = problem or event_problem(member, self.count + offset)
        if problem is not None:
            raise self._damaged(problem)
        return members

    def _damaged(self, problem: str) -> CorruptLog:
        return CorruptLog(
            f'cannot cut session "{self.session_id}" at seq {self.cut_at}: "{self.location}" '
            f"line {self.line} (seq {self.count}) is damaged ({problem}); cut at seq "
            f"{self.count} or before",
            session_id=self.session_id,
            path=self.location,
            line=self.line,
            seq=self.count,
        )

    def _short(self) -> StoreError:
        return StoreError(
            f'cannot cut session "{self.session_id}" at seq {self.cut_at}: "{self.location}" '
            f"holds {self.count} complete event(s)",
            session_id=self.session_id,
            path=self.location,
        )


def _until_damage(texts: Iterator[bytes]) -> Iterator[bytes | CorruptLog]:
    """The frames' plaintexts; a frame that fails validation ends them with its error."""
    try:
        yield from texts
    except CorruptLog as exc:
        yield exc


def cut_transcript(path: Path, *, compressed: bool, session_id: str, cut_at: int) -> RepairResult:
    """Cut the transcript at ``path`` after its first ``cut_at`` events (under the lease).

    The removed bytes are first written (and synced) to a file beside the transcript,
    ``<transcript>.cut-at-seq-<N>.<UTC time>.removed``. Then a cut at a record boundary
    truncates the transcript in place; one inside a compressed frame writes the kept bytes,
    with that frame's kept lines as a new frame, to a temporary file that replaces the
    transcript (atomically, by rename).

    Raises:
        CorruptLog, StoreError: as ``plan_cut``.
        OSError: when a write fails.
    """
    data = path.read_bytes()
    plan = plan_cut(
        data, compressed=compressed, cut_at=cut_at, session_id=session_id, location=str(path)
    )
    result = RepairResult(
        session_id=session_id, cut_at=cut_at, removed=plan.removed, damaged=plan.damaged
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
