"""The ``jsonl:///`` and ``jsonl+zstd:///`` stores: the contract twice, then the file format.

File-specific scenarios are spec/persistence.md §3 and §8 rows 9-24, 28-30, 36: the on-disk
format and layout, rollback of a failed append, and damage. Damage is checked exhaustively on a
real multi-turn log: every truncation point of its last 4 KiB, raw and compressed, must either
open with exactly the events whose lines (frames) were complete, or be refused with
``CorruptLog`` naming the file; byte damage mid-file must never come back as different events.
Everything runs on the real file system; an injected ``fdatasync`` failure is the only fake.
"""

from __future__ import annotations

import bisect
import errno
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentlog import Event, Session, check_invariants, check_provider_history, open_turn_closers
from agentlog import messages as m
from agentlog.errors import (
    CorruptLog,
    FormatVersionError,
    SessionAlreadyExists,
    SessionLocked,
    StoreError,
)
from agentlog.stores import Backend, Store, open_backend, open_store
from agentlog.stores.jsonl.frames import decode_frames, encode_frame, scan_frames
from agentlog.stores.jsonl.layout import encode_segment
from agentlog.values import dumps
from tests.agent_logs import grow_agent_session
from tests.stores.contract import (
    CLOCK,
    CWD,
    MODEL,
    PROVIDER,
    ROOT,
    StoreContract,
    ask_tools,
    clock,
    end_seed,
    one_turn,
    run_tool,
    start_turn,
    wire,
)


class JsonlContract(StoreContract):
    scheme = "jsonl"
    suffix = ".jsonl"

    def store_url(self, tmp_path: Path) -> str:
        return f"{self.scheme}:///{tmp_path / 'store'}"

    def make_store(self, tmp_path: Path, **options: Any) -> Store:
        return open_store(self.store_url(tmp_path), **options)

    def make_backend(self, tmp_path: Path) -> Backend:
        return open_backend(self.store_url(tmp_path))

    def stored_state(self, tmp_path: Path) -> object:
        return {
            str(path.relative_to(tmp_path)): path.read_bytes() if path.is_file() else None
            for path in sorted(tmp_path.rglob("*"))
        }

    def session_location(self, tmp_path: Path, session_id: str) -> str | None:
        found = list((tmp_path / "store").glob(f"*/{encode_segment(session_id)}/session.v4*"))
        assert len(found) == 1, found
        return str(found[0])

    def assert_contained(self, tmp_path: Path) -> None:
        root = tmp_path / "store"
        assert [path.name for path in tmp_path.iterdir()] == ["store"]
        for path in root.rglob("*"):
            depth = len(path.relative_to(root).parts)
            assert depth <= 3, path
            if path.is_file():
                assert depth == 3, path
                assert path.name in ("session.lock", f"session.v4{self.suffix}"), path

    def damage(self, tmp_path: Path, session_id: str, seq: int) -> bool:
        path = Path(self.session_location(tmp_path, session_id) or "")
        data = path.read_bytes()
        if self.scheme == "jsonl":
            lines = data.splitlines(keepends=True)
            lines[seq + 1] = b"garbage\n"
            path.write_bytes(b"".join(lines))
            return True
        start, end = scan_frames(data).frames[seq + 1]  # one frame per durable append
        damaged = bytearray(data)
        damaged[(start + end) // 2] ^= 0x40
        path.write_bytes(bytes(damaged))
        return True

    def tear_tail(self, tmp_path: Path, session_id: str) -> bool:
        path = Path(self.session_location(tmp_path, session_id) or "")
        line = b'{"type":"turn/end","seq":99,"time":%d,"data":{"turn":2}}\n' % CLOCK
        torn = encode_frame(line)[:-9] if self.scheme == "jsonl+zstd" else line[:30]
        with path.open("ab") as file:
            file.write(torn)
        return True


class TestJsonl(JsonlContract):
    pass


class TestJsonlZstd(JsonlContract):
    scheme = "jsonl+zstd"
    suffix = ".jsonl.zstd"


# --- the on-disk format ---------------------------------------------------------------------


def root_of(tmp_path: Path) -> Path:
    return tmp_path / "store"


def transcript(tmp_path: Path, session_id: str, *, compressed: bool = False) -> Path:
    found = list(root_of(tmp_path).glob(f"*/{encode_segment(session_id)}/session.v4.jsonl*"))
    assert len(found) == 1, found
    assert found[0].name == ("session.v4.jsonl.zstd" if compressed else "session.v4.jsonl")
    return found[0]


def jsonl_store(tmp_path: Path, *, compressed: bool = False, **options: Any) -> Store:
    scheme = "jsonl+zstd" if compressed else "jsonl"
    return open_store(f"{scheme}:///{root_of(tmp_path)}", **{"clock": clock, **options})


def compacted_turns(s: Session) -> None:
    """Two turns, each followed by a compaction: one cites a run of four seqs, one three loose."""
    for turn in (1, 2):
        s.append("turn/start", {"turn": turn})
        s.append("step/start", {"turn": turn, "step": 1})
        for k in range(3):
            s.append("user/message", m.user(f"part {k}", id=f"u{turn}.{k}"), surface_op="append")
        s.append(
            "assistant/message",
            m.assistant("ok", provider=PROVIDER, model=MODEL, turn=turn, step=1, id=f"a{turn}"),
            surface_op="append",
        )
        s.append("step/end", {"turn": turn, "step": 1})
        s.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        cited = [2, 3, 4, 5] if turn == 1 else [8, 11, 12]
        s.append(
            "user/message",
            m.user(f"summary {turn}", id=f"sum{turn}", source={"kind": "compact-checkpoint"}),
            surface_op={"op": "replace", "startSeq": cited[0], "endSeq": cited[-1]},
            source_event_seqs=cited,
        )
    assert [s.event_at(seq).type for seq in (8, 17)] == ["user/message", "user/message"]


def test_transcript_is_a_header_line_then_one_event_per_line(tmp_path: Path) -> None:
    with jsonl_store(tmp_path) as store, store.create("s1", cwd=CWD) as session:
        compacted_turns(session)
        session.append("vendor/note", {"text": "é 😀"}, ignorable=True)
    lines = transcript(tmp_path, "s1").read_bytes().split(b"\n")
    assert lines[0] == (
        b'{"type":"session","version":4,"id":"s1","createdAt":%d,"cwd":"/work/project",'
        b'"isSeeded":false,"delegationDepth":0}' % CLOCK
    )
    assert lines[-1] == b""
    body = lines[1:-1]
    assert len(body) == session.seq
    expected = [dumps(event.to_wire()) for event in session.events]
    expected[8] = expected[8].replace(b'"sourceEventSeqs":[2,3,4,5]', b'"sourceEventSeqs":[[2,5]]')
    assert body == expected
    assert b'"sourceEventSeqs":[[2,5]]' in body[8]
    assert b'"sourceEventSeqs":[8,11,12]' in body[17]
    assert "é 😀".encode() in body[18]  # non-ASCII written raw, compact separators
    with jsonl_store(tmp_path) as store:
        reopened = store.inspect("s1")
    assert reopened.event_at(8).source_event_seqs == [2, 3, 4, 5]
    assert wire(reopened.events)[: session.seq] == wire(session.events)
    assert reopened.derive_messages() == session.derive_messages()


@pytest.mark.parametrize("compressed", [False, True])
def test_layout_and_file_modes(tmp_path: Path, compressed: bool) -> None:
    with jsonl_store(tmp_path, compressed=compressed) as store:
        with store.create("s1", cwd="/home/u/My Project") as session:
            one_turn(session)
        with store.create("s2") as session:
            session.append("turn/start", {"turn": 1})
    root = root_of(tmp_path)
    name = "session.v4.jsonl.zstd" if compressed else "session.v4.jsonl"
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == [
        "--home-u-My~0020Project--",
        "--home-u-My~0020Project--/s1",
        "--home-u-My~0020Project--/s1/session.lock",
        f"--home-u-My~0020Project--/s1/{name}",
        "_no-cwd",
        "_no-cwd/s2",
        "_no-cwd/s2/session.lock",
        f"_no-cwd/s2/{name}",
    ]
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path


def test_compressed_transcript_is_one_frame_per_durable_batch(tmp_path: Path) -> None:
    with jsonl_store(tmp_path, compressed=True) as store, store.create("s1") as session:
        one_turn(session)
    writing_behind = jsonl_store(tmp_path, compressed=True, write_behind=True, batch_delay=60)
    with writing_behind as store, store.open("s1") as session:
        one_turn(session, 2)
        session.flush()
        one_turn(session, 3)
    data = transcript(tmp_path, "s1", compressed=True).read_bytes()
    assert data.startswith(b"\x28\xb5\x2f\xfd")
    plaintexts = list(decode_frames(data, scan_frames(data)))
    assert plaintexts[0].count(b"\n") == 1  # the header frame
    lines = [text.count(b"\n") for text in plaintexts[1:]]
    # one frame per durable append, then the resume's end-seed marker, then two flushed batches
    assert lines == [1] * 11 + [1, 11, 11]
    raw = root_of(tmp_path).parent / "raw"
    raw.mkdir()
    with jsonl_store(raw) as store, store.create("s1") as session:
        one_turn(session)
        session.append("session/end-seed", {})
        one_turn(session, 2)
        one_turn(session, 3)
    assert b"".join(plaintexts) == transcript(raw, "s1").read_bytes()
    if shutil.which("zstd"):
        standard = subprocess.run(["zstd", "-dc"], input=data, capture_output=True, check=True)
        assert standard.stdout == b"".join(plaintexts)


# --- failed writes --------------------------------------------------------------------------


@pytest.mark.parametrize("compressed", [False, True])
def test_a_failed_append_is_rolled_back_and_the_retry_has_no_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool
) -> None:
    with jsonl_store(tmp_path, compressed=compressed) as store:
        session = store.create("s1")
        one_turn(session)
        path = transcript(tmp_path, "s1", compressed=compressed)
        before = path.read_bytes()
        real_fdatasync = os.fdatasync
        failures = iter([OSError(errno.EIO, "injected I/O error")])

        def failing_fdatasync(fd: int) -> None:
            failure = next(failures, None)
            if failure is not None:
                raise failure
            real_fdatasync(fd)

        monkeypatch.setattr(os, "fdatasync", failing_fdatasync)
        with pytest.raises(StoreError) as failed:
            session.append("turn/start", {"turn": 2})
        assert str(failed.value) == (
            f'session "s1": append to "{path}" failed and was rolled back: I/O error ([Errno 5] '
            "injected I/O error)"
        )
        assert failed.value.path == str(path)
        assert path.read_bytes() == before
        assert session.seq == 11
        session.append("turn/start", {"turn": 2})  # the retry
        session.close()
    with jsonl_store(tmp_path, compressed=compressed) as store:
        events = store.inspect("s1").events
    assert [event.seq for event in events] == list(range(len(events)))
    assert [event.type for event in events[10:12]] == ["turn/end", "turn/start"]


def test_a_failed_rollback_reports_both_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with jsonl_store(tmp_path) as store:
        session = store.create("s1")
        session.append("turn/start", {"turn": 1})
        path = transcript(tmp_path, "s1")

        def failing_fdatasync(fd: int) -> None:
            raise OSError(errno.EIO, "write failed")

        def failing_ftruncate(fd: int, length: int) -> None:
            raise OSError(errno.EROFS, "truncate failed")

        monkeypatch.setattr(os, "fdatasync", failing_fdatasync)
        monkeypatch.setattr(os, "ftruncate", failing_ftruncate)
        with pytest.raises(StoreError) as failed:
            session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        assert str(failed.value) == (
            f'failed to roll back append to "{path}": [Errno 5] write failed; rollback: '
            "[Errno 30] truncate failed"
        )
        assert session.seq == 1
        monkeypatch.undo()
        store.close()


def test_a_failed_first_write_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with jsonl_store(tmp_path) as store:
        session = store.create("s1")
        real_fsync = os.fsync
        failures = iter([OSError(errno.ENOSPC, "disk full")])

        def failing_fsync(fd: int) -> None:
            if stat.S_ISREG(os.fstat(fd).st_mode):  # the transcript, not a directory
                failure = next(failures, None)
                if failure is not None:
                    raise failure
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", failing_fsync)
        with pytest.raises(StoreError, match="disk full"):
            session.append("turn/start", {"turn": 1})
        files = sorted(p.name for p in root_of(tmp_path).rglob("*") if p.is_file())
        assert files == ["session.lock"]  # no transcript, no temporary file
        assert store.list() == []
        session.append("turn/start", {"turn": 1})
        assert [info.id for info in store.list()] == ["s1"]
        session.close()


# --- one writer -----------------------------------------------------------------------------


def test_a_second_store_cannot_open_a_session_being_written(tmp_path: Path) -> None:
    with jsonl_store(tmp_path) as first, jsonl_store(tmp_path) as second:
        session = first.create("s1")
        one_turn(session)
        lock = transcript(tmp_path, "s1").parent / "session.lock"
        with pytest.raises(SessionLocked) as refused:
            second.open("s1")
        assert str(refused.value) == (
            f'session "s1" is open for writing by another writer (lock "{lock}")'
        )
        with pytest.raises(SessionAlreadyExists):
            second.create("s1")
        assert len(second.inspect("s1").events) == session.seq + 1  # readers take no lock
        session.close()
        second.open("s1").close()
        assert lock.exists()  # the lock file is never deleted


_LOCK_HOLDER = """
import sys, time
sys.path.insert(0, sys.argv[2])
from agentlog.stores import open_store
store = open_store(sys.argv[1])
session = store.open("s1")
print("holding", flush=True)
time.sleep(60)
"""


def test_a_killed_writer_releases_its_lock(tmp_path: Path) -> None:
    with jsonl_store(tmp_path) as store, store.create("s1") as session:
        one_turn(session)
    holder = subprocess.Popen(
        [sys.executable, "-c", _LOCK_HOLDER, f"jsonl:///{root_of(tmp_path)}", str(ROOT)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "holding\n"
        with jsonl_store(tmp_path) as store:
            with pytest.raises(SessionLocked):
                store.open("s1")
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait()
            store.open("s1").close()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert (transcript(tmp_path, "s1").parent / "session.lock").exists()


# --- delete ---------------------------------------------------------------------------------


def test_delete_removes_every_generation_the_lock_and_empty_directories(tmp_path: Path) -> None:
    with jsonl_store(tmp_path) as store:
        with store.create("s1", cwd="/home/u") as session:
            session.append("turn/start", {"turn": 1})
        with store.create("s2") as other:
            other.append("turn/start", {"turn": 1})
        current = transcript(tmp_path, "s1")
        older = current.with_name("session.v3.jsonl")  # what a migration leaves beside it
        older.write_bytes(b"")
        directory = current.parent
        store.delete("s1")
        assert not directory.exists()
        assert not directory.parent.exists()  # its project directory held nothing else
        assert [info.id for info in store.list()] == ["s2"]
        store.delete("s2")
    assert list(root_of(tmp_path).iterdir()) == []


# --- ids and roots --------------------------------------------------------------------------


def test_an_id_whose_escaped_form_is_too_long_still_gets_its_own_directory(
    tmp_path: Path,
) -> None:
    """Every valid id (≤ 255 UTF-8 bytes) has a directory, even when escaping makes it long."""
    ids = ["é" * 127, "é" * 126 + "e", "x" * 255, "😀" * 63]  # escaped: up to 630 characters
    with jsonl_store(tmp_path) as store:
        for session_id in ids:
            with store.create(session_id) as session:
                session.append("turn/start", {"turn": 1})
        assert sorted(info.id for info in store.list()) == sorted(ids)
        for session_id in ids:
            assert store.inspect(session_id).id == session_id
    names = [path.name for path in root_of(tmp_path).glob("*/*")]
    assert len(set(names)) == len(ids)
    assert all(len(name) <= 255 for name in names)


def test_ids_are_escaped_per_utf16_code_unit(tmp_path: Path) -> None:
    ids = ["é", "😀", "a~b", "A", "a"]
    with jsonl_store(tmp_path) as store:
        for session_id in ids:
            with store.create(session_id) as session:
                session.append("turn/start", {"turn": 1})
        assert sorted(info.id for info in store.list()) == sorted(ids)
        for session_id in ids:
            assert store.inspect(session_id).id == session_id
    names = sorted(p.name for p in (root_of(tmp_path) / "_no-cwd").iterdir())
    assert names == sorted(["~00E9", "~D83D~DE00", "a~007Eb", "A", "a"])


def test_a_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    root_of(tmp_path).write_text("not a directory")
    with pytest.raises(StoreError, match="is not a directory"):
        jsonl_store(tmp_path)


def test_an_unwritable_root_fails_with_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with open_store(f"jsonl:///{tmp_path / 'file' / 'store'}", clock=clock) as store:
        session = store.create("s1")
        with pytest.raises(StoreError, match="Not a directory"):
            session.append("turn/start", {"turn": 1})
        assert session.seq == 0


# --- damage: the torn-tail rule -------------------------------------------------------------


def stored_log(tmp_path: Path, *, compressed: bool = False) -> tuple[Path, list[Event]]:
    """Two complete turns and an interrupted third, stored; the transcript and the events."""
    with jsonl_store(tmp_path, compressed=compressed) as store, store.create("s1") as session:
        one_turn(session, 1)
        one_turn(session, 2)
        start_turn(session, 3)
        ask_tools(session, 3, 1, "c")
    return transcript(tmp_path, "s1", compressed=compressed), list(session.events)


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_an_unparsable_line_before_well_formed_ones_is_corruption(tmp_path: Path) -> None:
    path, events = stored_log(tmp_path)
    lines = lines_of(path)
    lines[3] = b'{"type": "step/start", "seq": 2, oops\n'
    path.write_bytes(b"".join(lines))
    damaged = path.read_bytes()
    with jsonl_store(tmp_path) as store:
        for operation in (store.open, store.inspect, store.open):
            with pytest.raises(CorruptLog) as refused:
                operation("s1")
            assert str(refused.value).startswith(
                f'corrupt session log "{path}" line 4: unparsable line ('
            )
            following = len(events) - 3
            assert str(refused.value).endswith(f"(seq 2; {following} well-formed record(s) follow)")
            assert (refused.value.path, refused.value.line) == (str(path), 4)
            assert (refused.value.seq, refused.value.following) == (2, following)
    assert path.read_bytes() == damaged


def test_a_seq_gap_before_well_formed_lines_is_corruption(tmp_path: Path) -> None:
    path, events = stored_log(tmp_path)
    lines = lines_of(path)
    del lines[5]
    path.write_bytes(b"".join(lines))
    with jsonl_store(tmp_path) as store, pytest.raises(CorruptLog) as refused:
        store.open("s1")
    assert str(refused.value) == (
        f'corrupt session log "{path}" line 6: seq gap (expected 4, got 5) (seq 4; '
        f"{len(events) - 6} well-formed record(s) follow)"
    )


def test_a_bad_record_inside_an_open_turn_is_corruption_not_a_torn_tail(tmp_path: Path) -> None:
    """Issue 10, repro 2: ``turn/start`` and 10 durable user messages, line 4 overwritten with
    garbage: ``open`` used to cut the 8 acknowledged records after it, with only a warning."""
    with jsonl_store(tmp_path) as store, store.create("s") as session:
        session.append("turn/start", {"turn": 1})
        for n in range(10):
            session.append("user/message", m.user(f"message {n}"), surface_op="append")
    path = transcript(tmp_path, "s")
    lines = lines_of(path)
    lines[3] = b"garbage\n"
    path.write_bytes(b"".join(lines))
    damaged = path.read_bytes()
    with jsonl_store(tmp_path) as store:
        for operation in (store.open, store.inspect):
            with pytest.raises(CorruptLog) as refused:
                operation("s")
            assert str(refused.value) == (
                f'corrupt session log "{path}" line 4: unparsable line (invalid JSON text: '
                "unexpected character, expected a JSON value: line 1 column 1 (char 0)) (seq 2; 8 "
                "well-formed record(s) follow)"
            )
    assert path.read_bytes() == damaged


def test_only_an_incomplete_final_line_is_a_torn_tail(tmp_path: Path) -> None:
    path, events = stored_log(tmp_path)
    data = path.read_bytes()
    for tail in (b'{"type":"step/end","seq":', b"\x00garbage\n", b"{x\n\x00\x00\n"):
        path.write_bytes(data + tail)
        with jsonl_store(tmp_path) as store:
            view = store.inspect("s1")
            assert path.read_bytes() == data + tail
            with store.open("s1") as resumed:
                assert wire(resumed.events) == wire(view.events)
        closers = wire(open_turn_closers(events, "interrupted"))
        assert wire(view.events) == [*wire(events), *closers, end_seed(len(events) + len(closers))]
        repaired = path.read_bytes()
        assert repaired.startswith(data)
        assert repaired[len(data) :].count(b"\n") == len(closers) + 1
        path.write_bytes(data)


def test_header_damage_is_reported(tmp_path: Path) -> None:
    path, _ = stored_log(tmp_path)
    body = b"".join(lines_of(path)[1:])
    location = str(path)
    cases = [
        (
            b"[]\n",
            CorruptLog,
            f'corrupt session log "{location}" line 1: first line is not a session header',
        ),
        (
            b'{"type":"session","version":4,"id":"s1","createdAt":1}\n',
            CorruptLog,
            f'corrupt session log "{location}" line 1: session header delegationDepth must be a '
            "non-negative safe integer",
        ),
        (
            b'{"type":"session","version":4,"id":"other","createdAt":1,"delegationDepth":0}\n',
            CorruptLog,
            f'corrupt session log "{location}": requested id "s1" does not match header id "other"',
        ),
        (
            b'{"type":"session","version":7}\n',  # the version is checked before the shape
            FormatVersionError,
            'session "s1" uses log format v7, but this build reads up to v4: the log was written '
            f'by a newer harness — upgrade agentlog to open it (raw log: "{location}")',
        ),
        (
            b'{"type":"session","version":4,"id":"s1","createdAt":1.5,"isSeeded":false,'
            b'"delegationDepth":0}\n',
            CorruptLog,
            f'stored session "s1" failed validation at "{location}" line 1 (the header): session '
            "header createdAt must be a non-negative safe integer",
        ),
        (
            b'{"type":"session","version":4,"id":"s1","createdAt":1,"delegationDepth":0}\n',
            CorruptLog,
            f'stored session "s1" failed validation at "{location}" line 1 (the header): session '
            "header isSeeded must be a boolean",
        ),
        (b"", CorruptLog, f'empty or header-less session log "{location}"'),
        (
            b"\xff\xfe\n",
            CorruptLog,
            f'corrupt session log "{location}" line 1: first line is not a session header',
        ),
    ]
    for header, error, text in cases:
        damaged = header + body if header else b""
        path.write_bytes(damaged)
        with jsonl_store(tmp_path) as store, pytest.raises(error) as refused:
            store.open("s1")
        assert str(refused.value) == text
        assert path.read_bytes() == damaged


def test_a_transcript_in_the_wrong_session_directory_is_refused(tmp_path: Path) -> None:
    path, _ = stored_log(tmp_path)
    copy = path.parent.parent / "s2"
    shutil.copytree(path.parent, copy)
    before = (copy / path.name).read_bytes()
    with jsonl_store(tmp_path) as store, pytest.raises(CorruptLog) as refused:
        store.open("s2")
    assert 'requested id "s2" does not match header id "s1"' in str(refused.value)
    assert (copy / path.name).read_bytes() == before
    assert path.read_bytes() == before


def test_one_id_in_two_project_directories_is_refused(tmp_path: Path) -> None:
    path, _ = stored_log(tmp_path)
    twin = root_of(tmp_path) / "--elsewhere--" / "s1"
    shutil.copytree(path.parent, twin)
    with jsonl_store(tmp_path) as store:
        for operation in (store.open, store.inspect, store.create):
            with pytest.raises(CorruptLog, match='duplicate JSONL session id "s1"'):
                operation("s1")


def test_a_transcript_of_the_other_encoding_is_refused(tmp_path: Path) -> None:
    path, _ = stored_log(tmp_path)
    with jsonl_store(tmp_path, compressed=True) as store:
        for operation in (store.open, store.inspect, store.create):
            with pytest.raises(StoreError) as refused:
                operation("s1")
            assert str(refused.value) == (
                f'session artifact "{path}" uses .jsonl, but this store is '
                f"'jsonl+zstd:///{root_of(tmp_path)}'; use a store URL with the matching "
                "compression"
            )


# --- damage: every truncation point, byte flips ---------------------------------------------

SWEEP = 4096
"""How many final bytes of the log the truncation sweep cuts at, one by one."""


@pytest.fixture(scope="module")
def sweep_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, tuple[bytes, list[Any]]]:
    """A real multi-turn agent log, stored raw and compressed: its bytes and its events.

    It is written in batches of one to five events (each a frame when compressed), and ends
    inside a turn whose last call has no result.
    """
    grown = grow_agent_session(11, 90)
    logs: dict[bool, tuple[bytes, list[Any]]] = {}
    for compressed in (False, True):
        where = tmp_path_factory.mktemp("sweep")
        rng = random.Random(5)
        writing_behind = jsonl_store(
            where, compressed=compressed, write_behind=True, batch_delay=60
        )
        with writing_behind as store, store.create("s1", cwd=CWD) as session:
            for event in grown.events:
                session.append(
                    event.type,
                    event.data,
                    surface_op=event.surface_op,
                    source_event_seqs=event.source_event_seqs,
                    ignorable=event.ignorable,
                )
                if rng.random() < 0.4:
                    session.flush()
            turn = sum(event.type == "turn/start" for event in grown.events) + 1
            start_turn(session, turn)
            ask_tools(session, turn, 1, "last-call")
            session.flush()
            run_tool(session, turn, 1, "last-call", answer=False)
        data = transcript(where, "s1", compressed=compressed).read_bytes()
        assert len(data) > SWEEP + 1024
        logs[compressed] = (data, wire(session.events))
    return logs


def check_open(store: Store, path: Path, prefix: list[Any], keep: int) -> None:
    """``open`` gives ``prefix`` closed by the repair, persists it once, never cuts below ``keep``.

    ``keep`` is the byte length that must survive: the committed prefix.
    """
    damaged = path.read_bytes()
    with store.open("s1") as resumed:
        closers = wire(open_turn_closers(prefix, "interrupted"))
        assert wire(resumed.events) == [*prefix, *closers, end_seed(len(prefix) + len(closers))]
        check_invariants(resumed.events)
        check_provider_history(resumed.derive_messages())
    repaired = path.read_bytes()
    assert repaired.startswith(damaged[:keep])
    with store.open("s1") as again:
        assert len(again.events) == len(prefix) + len(closers) + 1
    assert path.read_bytes() == repaired


def test_every_truncation_of_a_raw_log_opens_with_its_complete_lines(
    tmp_path: Path, sweep_logs: dict[bool, tuple[bytes, list[Any]]]
) -> None:
    data, events = sweep_logs[False]
    line_ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    header_end, event_ends = line_ends[0], line_ends[1:]
    assert len(event_ends) == len(events)
    root = root_of(tmp_path)
    path = root / "--work-project--" / "s1" / "session.v4.jsonl"
    path.parent.mkdir(parents=True)
    backend = open_backend(f"jsonl:///{root}")
    checked: set[tuple[int, bool]] = set()
    with jsonl_store(tmp_path) as store:
        for cut in range(len(data) - SWEEP, len(data) + 1):
            path.write_bytes(data[:cut])
            complete = bisect.bisect_right(event_ends, cut)
            committed = event_ends[complete - 1] if complete else header_end
            stored = backend.read("s1")
            assert wire(stored.events) == events[:complete], cut
            if cut == committed:
                assert stored.torn is None, cut
            else:
                assert stored.torn is not None, cut
                assert (stored.torn.position, stored.torn.recovered) == (committed, ()), cut
            if (complete, cut == committed) not in checked:
                checked.add((complete, cut == committed))
                check_open(store, path, events[:complete], committed)
    assert len(checked) > 30


def test_every_truncation_of_a_compressed_log_opens_with_its_complete_frames(
    tmp_path: Path, sweep_logs: dict[bool, tuple[bytes, list[Any]]]
) -> None:
    data, events = sweep_logs[True]
    scan = scan_frames(data)
    frames = list(scan.frames)
    assert scan.torn_start is None
    counts = [text.count(b"\n") for text in decode_frames(data, scan)]
    assert counts[0] == 1
    assert sum(counts[1:]) == len(events)
    assert max(counts) > 1
    before = [sum(counts[1:k]) for k in range(len(frames) + 1)]  # events before frame k
    root = root_of(tmp_path)
    path = root / "--work-project--" / "s1" / "session.v4.jsonl.zstd"
    path.parent.mkdir(parents=True)
    backend = open_backend(f"jsonl+zstd:///{root}")
    ends = [end for _, end in frames]
    checked: set[tuple[int, int]] = set()
    with jsonl_store(tmp_path, compressed=True) as store:
        for cut in range(len(data) - SWEEP, len(data) + 1):
            path.write_bytes(data[:cut])
            whole = bisect.bisect_right(ends, cut)  # frames that are complete
            complete = before[whole]
            stored = backend.read("s1")
            assert wire(stored.events) == events[:complete], cut
            recovered = 0
            if cut == ends[whole - 1]:
                assert stored.torn is None, cut
            else:
                start, end = frames[whole]
                assert stored.torn is not None, cut
                assert stored.torn.position == start, cut
                recovered = len(stored.torn.recovered)
                in_frame = counts[whole]
                assert wire(stored.torn.recovered) == events[complete : complete + recovered], cut
                if cut >= end - 4:  # only the checksum is missing: everything is recovered
                    assert recovered == in_frame, cut
            if (complete, recovered) not in checked:
                checked.add((complete, recovered))
                keep = ends[whole - 1]
                check_open(store, path, events[: complete + recovered], keep)
    assert len(checked) > 2 * 10


def test_a_damaged_byte_mid_file_is_never_read_as_different_events(
    tmp_path: Path, sweep_logs: dict[bool, tuple[bytes, list[Any]]]
) -> None:
    """Raw JSONL has no checksum, so the damage here is a byte no JSON text holds (``0xFF``).

    A damaged line with any well-formed line after it is reported with its line number and
    seq; only damage to the last line makes it a torn tail. (A change that leaves valid JSON,
    say ``a`` → ``b`` inside a string, cannot be told from content without a checksum: the
    compressed encoding is the one that detects every flip, below.)
    """
    data, events = sweep_logs[False]
    line_ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    root = root_of(tmp_path)
    path = root / "--work-project--" / "s1" / "session.v4.jsonl"
    path.parent.mkdir(parents=True)
    rng = random.Random(3)
    offsets = rng.sample(range(line_ends[0], len(data)), 150)
    offsets += rng.sample(range(line_ends[-2], len(data)), 10)  # the last line too
    outcomes = {"corrupt": 0, "torn": 0}
    with jsonl_store(tmp_path) as store:
        for offset in offsets:
            damaged = bytearray(data)
            damaged[offset] = 0xFF
            path.write_bytes(bytes(damaged))
            index = bisect.bisect_right(line_ends, offset) - 1  # the damaged event line
            merged = data[offset] == ord("\n")  # the damage joined it with the next line
            later = events[index + 1 + merged :]
            if later:
                with pytest.raises(CorruptLog) as refused:
                    store.inspect("s1")
                assert (refused.value.path, refused.value.line) == (str(path), index + 2)
                assert (refused.value.seq, refused.value.following) == (index, len(later))
                assert f'"{path}" line {index + 2}' in str(refused.value)
                outcomes["corrupt"] += 1
            else:
                view = store.inspect("s1")
                prefix = events[:index]
                closers = wire(open_turn_closers(prefix, "interrupted"))
                assert wire(view.events) == [
                    *prefix,
                    *closers,
                    end_seed(len(prefix) + len(closers)),
                ]
                outcomes["torn"] += 1
            assert path.read_bytes() == bytes(damaged)
    assert outcomes["corrupt"] > 100
    assert outcomes["torn"] > 0


def test_a_flipped_bit_in_a_compressed_log_is_never_read_as_different_events(
    tmp_path: Path, sweep_logs: dict[bool, tuple[bytes, list[Any]]]
) -> None:
    data, events = sweep_logs[True]
    frames = list(scan_frames(data).frames)
    root = root_of(tmp_path)
    path = root / "--work-project--" / "s1" / "session.v4.jsonl.zstd"
    path.parent.mkdir(parents=True)
    rng = random.Random(4)
    flips = [(offset, 1 << rng.randrange(8)) for offset in rng.sample(range(len(data)), 300)]
    last_frame_start = frames[-1][0]
    outcomes = {"corrupt": 0, "read": 0}
    with jsonl_store(tmp_path, compressed=True) as store:
        for offset, bit in flips:
            damaged = bytearray(data)
            damaged[offset] ^= bit
            path.write_bytes(bytes(damaged))
            refused: StoreError | None = None
            try:
                view = store.inspect("s1")
            except (CorruptLog, FormatVersionError) as exc:
                refused = exc
            if refused is not None:
                assert refused.path == str(path), (offset, bit)
                assert f'"{path}"' in str(refused), (offset, bit)
                outcomes["corrupt"] += 1
            else:
                # A flip the format does not read (the descriptor's unused bit, a bit no decoder
                # looks at) changes nothing; one that makes the last frame look cut off loses
                # that frame: either way what is read is a prefix of the log, closed by the
                # repair. Committed frames are never lost without an error.
                kept = wire(view.events)
                n = next(i for i, e in enumerate(kept) if i >= len(events) or e != events[i])
                closers = wire(open_turn_closers(events[:n], "interrupted"))
                assert kept == [*events[:n], *closers, end_seed(n + len(closers))], (offset, bit)
                assert n == len(events) or offset >= last_frame_start, (offset, bit)
                outcomes["read"] += 1
            assert path.read_bytes() == bytes(damaged)
    assert outcomes["corrupt"] > 250


# --- damage: Zstandard frames (spec/persistence.md §8 rows 16-20) ---------------------------


def compressed_log(tmp_path: Path) -> tuple[Path, list[Event], bytes]:
    path, events = stored_log(tmp_path, compressed=True)
    return path, events, path.read_bytes()


def test_a_torn_final_frame_keeps_its_complete_lines(tmp_path: Path) -> None:
    path, events, data = compressed_log(tmp_path)
    n = len(events)
    tail = [
        {
            "type": "tool/call",
            "seq": n,
            "time": CLOCK,
            "data": {"turn": 3, "step": 1, "callId": "c", "name": "bash", "arguments": "{}"},
        },
        {"type": "step/end", "seq": n + 1, "time": CLOCK, "data": {"turn": 3, "step": 1}},
        {
            "type": "turn/end",
            "seq": n + 2,
            "time": CLOCK,
            "data": {"turn": 3, "reason": {"kind": "completed"}},
        },
    ]
    text = b"".join(dumps(event) + b"\n" for event in tail)
    frame = encode_frame(text[:-20])  # two complete lines, then a partial third
    path.write_bytes(data + frame[:-4])  # the frame lost its checksum
    with jsonl_store(tmp_path, compressed=True) as store, store.open("s1") as resumed:
        kept = [*wire(events), *tail[:2]]
        assert wire(resumed.events)[: n + 2] == kept
        assert wire(resumed.events)[n + 2 :] == [
            {
                "type": "turn/end",
                "seq": n + 2,
                "time": CLOCK,
                "data": {"turn": 3, "reason": {"kind": "interrupted"}},
            },
            end_seed(n + 3),
        ]
    repaired = path.read_bytes()
    assert repaired.startswith(data)
    rescan = scan_frames(repaired)
    assert rescan.torn_start is None
    assert len(rescan.frames) == len(scan_frames(data).frames) + 1  # one new frame
    assert list(decode_frames(repaired, rescan))[-1].count(b"\n") == 4


def test_a_partial_magic_number_is_cut_away(tmp_path: Path) -> None:
    path, events, data = compressed_log(tmp_path)
    path.write_bytes(data + b"\x28\xb5")
    with jsonl_store(tmp_path, compressed=True) as store:
        assert len(store.inspect("s1").events) == len(events) + 4  # closers and marker
        store.open("s1").close()
    repaired = path.read_bytes()
    assert repaired.startswith(data)
    assert repaired[len(data) : len(data) + 4] == b"\x28\xb5\x2f\xfd"


def test_a_frame_ending_mid_line_is_corruption(tmp_path: Path) -> None:
    path, events, data = compressed_log(tmp_path)
    path.write_bytes(data + encode_frame(b'{"type":"step/end","seq":'))
    with jsonl_store(tmp_path, compressed=True) as store, pytest.raises(CorruptLog) as refused:
        store.open("s1")
    assert str(refused.value) == (
        f'corrupt Zstandard session log "{path}" line {len(events) + 2}: complete frame contains '
        f"a torn JSONL record (seq {len(events)}; 0 well-formed record(s) follow)"
    )


def test_a_bit_flip_inside_a_complete_frame_fails_its_checksum(tmp_path: Path) -> None:
    path, _, data = compressed_log(tmp_path)
    frames = scan_frames(data).frames
    start, end = frames[3]
    damaged = bytearray(data)
    damaged[end - 2] ^= 0x10  # inside the checksum: the content no longer matches it
    path.write_bytes(bytes(damaged))
    with jsonl_store(tmp_path, compressed=True) as store, pytest.raises(CorruptLog) as refused:
        store.open("s1")
    before = sum(text.count(b"\n") for text in decode_frames(data, scan_frames(data[:start])))
    after = sum(text.count(b"\n") for text in decode_frames(data, scan_frames(data)))
    after -= before + _lines_in(data, start, end)
    assert str(refused.value) == (
        f'corrupt Zstandard session log "{path}" line {before + 1}: frame at byte {start} failed '
        f"validation (seq {before - 1}; {after} well-formed record(s) follow)"
    )
    assert refused.value.offset == start
    assert path.read_bytes() == bytes(damaged)


def _lines_in(data: bytes, start: int, end: int) -> int:
    """The lines of the one frame ``data[start:end]``."""
    return b"".join(decode_frames(data[start:end], scan_frames(data[start:end]))).count(b"\n")
