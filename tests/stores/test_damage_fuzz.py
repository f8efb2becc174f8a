"""Damaged stores never crash: a seeded mutation fuzz of real stored sessions, per store.

A real agent log (turns, steps, tool calls and results, compactions, content rewrites) is
stored once per store; then each case damages a copy the way disks, tools and people damage
files — bit flips, overwritten, inserted and deleted bytes, zeroed blocks, duplicated, swapped,
deleted and rewritten lines, edited JSON values; for compressed logs also re-encoded frames
(valid checksums around damaged records) and dropped, doubled or swapped frames; for SQLite
row edits: wrong-typed, NULL and garbage columns, moved and deleted rows, a broken header or
tail. Every case must either open (and then derive its history, and reopen) or be refused with
an ``AgentlogError`` that names the session or the file and where in it; never another
exception, never a hang (each case runs under an alarm).

The cases per store are ``CASES`` (2,000), from a fixed seed; a failure names its case number
and mutation, so it can be replayed alone.
"""

from __future__ import annotations

import random
import re
import shutil
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentlog import AgentlogError, check_invariants
from agentlog.stores import Store, open_store
from agentlog.stores.jsonl.frames import decode_frames, encode_frame, scan_frames
from tests.agent_logs import grow_agent_session
from tests.stores.contract import CLOCK

pytestmark = pytest.mark.structure_free(
    "damaged logs break turn and step structure by design; the fuzz checks the stores, not the "
    "opt-in invariant companion"
)

CASES = 2000
"""Mutated copies opened per store."""
CASE_SECONDS = 20
"""A case that takes longer than this is a hang."""
SID = "fuzzed"
Mutation = Callable[[random.Random, bytes], tuple[str, bytes]]


# --- the stored log -----------------------------------------------------------------------


def stored_log(root: Path, url: str) -> Path:
    """Store a real agent log of ~120 events in batches of 1-6 (frames, when compressed)."""
    grown = grow_agent_session(17, 120)
    rng = random.Random(2)
    store = open_store(url, write_behind=True, batch_delay=60, clock=lambda: CLOCK)
    with store, store.create(SID, cwd="/work/project") as session:
        for event in grown.events:
            session.append(
                event.type,
                event.data,
                surface_op=event.surface_op,
                source_event_seqs=event.source_event_seqs,
                ignorable=event.ignorable,
            )
            if rng.random() < 0.3:
                session.flush()
    found = [p for p in root.rglob("*") if p.is_file() and "lock" not in p.name]
    assert len(found) == 1, found
    return found[0]


@contextmanager
def deadline(seconds: int, what: str) -> Iterator[None]:
    """Fail (instead of hanging) when the block runs longer than ``seconds``."""

    def expired(_signum: int, _frame: object) -> None:
        raise TimeoutError(f"{what} took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def check_case(url: str, where: str, case: str) -> str:
    """Open the damaged store; return the outcome, or fail the test with the case."""
    try:
        with deadline(CASE_SECONDS, case), open_store(url, clock=lambda: CLOCK) as store:
            return _open_and_derive(store, where)
    except AgentlogError as exc:
        text = str(exc)
        path = exc_path(exc)
        named = SID in text or (path is not None and path in text)
        assert named, f"{case}: the error names neither the session nor the file: {text}"
        located = re.search(
            r"line \d+|seq \d+|byte \d+|row|header|first line|frame|log format", text
        )
        assert located, f"{case}: the error does not say where: {text}"
        return type(exc).__name__
    except Exception as exc:  # the point of the fuzz: nothing else may escape
        pytest.fail(f"{case}: {type(exc).__name__}: {exc}")


def exc_path(exc: AgentlogError) -> str | None:
    path = getattr(exc, "path", None)
    return path if isinstance(path, str) else None


def _open_and_derive(store: Store, where: str) -> str:
    view = store.inspect(SID)
    view.derive_messages()
    with store.open(SID) as session:
        session.derive_messages()
    again = store.inspect(SID)  # what open wrote reopens
    assert len(again.events) >= len(view.events) - 1, where
    check_invariants(again.events[len(view.events) :])
    return "opened"


# --- mutations of bytes and lines ---------------------------------------------------------


def _span(rng: random.Random, data: bytes, longest: int) -> tuple[int, int]:
    start = rng.randrange(len(data))
    return start, min(len(data), start + rng.randint(1, longest))


def flip_bit(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    offset = rng.randrange(len(data))
    damaged = bytearray(data)
    damaged[offset] ^= 1 << rng.randrange(8)
    return f"flip a bit at byte {offset}", bytes(damaged)


def set_byte(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    offset = rng.randrange(len(data))
    damaged = bytearray(data)
    damaged[offset] = rng.choice((0, 0xFF, ord("{"), ord('"'), ord("\n"), rng.randrange(256)))
    return f"overwrite byte {offset}", bytes(damaged)


def insert_bytes(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    offset = rng.randrange(len(data) + 1)
    extra = rng.choice((b"\n", b"{}\n", b"\x00" * 8, rng.randbytes(rng.randint(1, 8))))
    return f"insert {extra!r} at byte {offset}", data[:offset] + extra + data[offset:]


def delete_bytes(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    start, end = _span(rng, data, 16)
    return f"delete bytes {start}-{end}", data[:start] + data[end:]


def zero_block(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    start, end = _span(rng, data, 512)
    return f"zero bytes {start}-{end}", data[:start] + bytes(end - start) + data[end:]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def duplicate_line(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    lines = _lines(data)
    index = rng.randrange(len(lines))
    lines.insert(index + rng.choice((0, 1, 3)), lines[index])
    return f"duplicate line {index + 1}", b"".join(lines)


def swap_lines(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    lines = _lines(data)
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return f"swap lines {a + 1} and {b + 1}", b"".join(lines)


def delete_line(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    lines = _lines(data)
    index = rng.randrange(len(lines))
    del lines[index]
    return f"delete line {index + 1}", b"".join(lines)


_VALUES = (b"null", b"-1", b"1.5", b"true", b'"x"', b"[]", b"{}", b"1e400", b'"\\ud800"', b"9" * 20)
_KEYED = re.compile(
    rb'"(type|seq|time|data|surfaceOp|sourceEventSeqs|ignorable|startSeq|endSeq|'
    rb'op|role|id|content|text|turn|step|toolCallId|version|message)":'
)


def edit_value(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """Rewrite one keyed value (or the key) on one line into a well-formed wrong one."""
    lines = _lines(data)
    index = rng.randrange(len(lines))
    line = lines[index]
    keys = list(_KEYED.finditer(line))
    if not keys:
        return delete_line(rng, data)
    key = rng.choice(keys)
    start = key.end()
    end = _value_end(line, start)
    roll = rng.random()
    if roll < 0.15:  # drop the key
        line = line[: key.start()] + b'"_' + line[key.start() + 1 :]
        what = f"rename key {key.group(1).decode()}"
    else:
        value = rng.choice(_VALUES)
        line = line[:start] + value + line[end:]
        what = f"set {key.group(1).decode()} to {value.decode()}"
    lines[index] = line
    return f"line {index + 1}: {what}", b"".join(lines)


def _value_end(line: bytes, start: int) -> int:
    """The end of the JSON value at ``start`` (strings, numbers, literals and brackets)."""
    depth, in_string, escaped = 0, False, False
    for position in range(start, len(line)):
        char = line[position]
        if in_string:
            if escaped:
                escaped = False
            elif char == ord("\\"):
                escaped = True
            elif char == ord('"'):
                in_string = False
                if depth == 0:
                    return position + 1
        elif char == ord('"'):
            in_string = True
        elif char in b"[{":
            depth += 1
        elif char in b"]}":
            if depth == 0:
                return position
            depth -= 1
            if depth == 0:
                return position + 1
        elif char == ord(",") and depth == 0:
            return position
    return len(line)


BYTE_MUTATIONS: tuple[Mutation, ...] = (flip_bit, set_byte, insert_bytes, delete_bytes, zero_block)
LINE_MUTATIONS: tuple[Mutation, ...] = (
    duplicate_line,
    swap_lines,
    delete_line,
    edit_value,
    edit_value,
)


def mutate(rng: random.Random, data: bytes, mutations: tuple[Mutation, ...]) -> tuple[str, bytes]:
    """One to three mutations in a row."""
    steps = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        what, data = rng.choice(mutations)(rng, data)
        steps.append(what)
        if not data:
            break
    return "; ".join(steps), data


# --- the stores ---------------------------------------------------------------------------


def run_file_cases(
    tmp_path: Path, scheme: str, mutations: Callable[..., tuple[str, bytes]]
) -> dict[str, int]:
    root = tmp_path / "store"
    url = f"{scheme}:///{root}"
    path = stored_log(root, url)
    pristine = path.read_bytes()
    rng = random.Random(f"fuzz-{scheme}")
    outcomes: dict[str, int] = {}
    started = time.monotonic()
    for number in range(CASES):
        what, damaged = mutations(rng, pristine)
        case = f"{scheme} case {number}: {what}"
        shutil.rmtree(root)
        path.parent.mkdir(parents=True)
        path.write_bytes(damaged)
        outcome = check_case(url, str(path), case)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    outcomes["seconds"] = int(time.monotonic() - started)
    return outcomes


def test_damaged_jsonl_logs_open_or_are_refused_with_a_located_error(tmp_path: Path) -> None:
    def mutations(rng: random.Random, data: bytes) -> tuple[str, bytes]:
        return mutate(rng, data, BYTE_MUTATIONS + LINE_MUTATIONS)

    outcomes = run_file_cases(tmp_path, "jsonl", mutations)
    assert outcomes.get("opened", 0) > 100, outcomes
    assert outcomes.get("CorruptLog", 0) > 500, outcomes


def test_damaged_compressed_logs_open_or_are_refused_with_a_located_error(
    tmp_path: Path,
) -> None:
    def mutations(rng: random.Random, data: bytes) -> tuple[str, bytes]:
        scan = scan_frames(data)
        frames = [data[start:end] for start, end in scan.frames]
        roll = rng.random()
        if roll < 0.35:  # the compressed bytes themselves: checksums catch it
            return mutate(rng, data, BYTE_MUTATIONS)
        if roll < 0.5:  # whole frames dropped, doubled or swapped
            a, b = rng.randrange(1, len(frames)), rng.randrange(1, len(frames))
            kind = rng.choice(("drop", "double", "swap"))
            if kind == "drop":
                del frames[a]
            elif kind == "double":
                frames.insert(a, frames[a])
            else:
                frames[a], frames[b] = frames[b], frames[a]
            return f"{kind} frame {a} ({b})", b"".join(frames)
        # a damaged record inside a valid frame: re-encoded, so its checksum holds
        texts = list(decode_frames(data, scan))
        index = rng.randrange(len(texts))
        what, text = mutate(rng, texts[index], BYTE_MUTATIONS + LINE_MUTATIONS)
        frames[index] = encode_frame(text)
        return f"frame {index}: {what}", b"".join(frames)

    outcomes = run_file_cases(tmp_path, "jsonl+zstd", mutations)
    assert outcomes.get("opened", 0) > 100, outcomes
    assert outcomes.get("CorruptLog", 0) > 500, outcomes


_GARBAGE: tuple[object, ...] = (
    None,
    0,
    -7,
    2**62,
    1.5,
    "",
    "{",
    "[]",
    "null",
    '{"a": 1}',
    "1e400",
    '"\\ud800"',
    b"",
    b"\x28\xb5\x2f\xfd\x00",
    b"\x00\xff",
)
_COLUMNS = ("seq", "type", "time", "data", "source_event_seqs", "surface_op", "ignorable")


def sql_mutation(rng: random.Random, db: sqlite3.Connection, events: int) -> str:
    """One edit of the stored rows, as a damaged database or a careless tool would make."""
    seq = rng.randrange(events)
    roll = rng.random()
    if roll < 0.55:
        column = rng.choice(_COLUMNS)
        value = rng.choice(_GARBAGE)
        if column == "data" and rng.random() < 0.4:
            value = _flipped_data(rng, db, seq)
        db.execute(f"UPDATE agentlog_events SET {column} = ? WHERE seq = ?", (value, seq))
        return f"row {seq}: {column} = {value!r:.40}"
    if roll < 0.65:
        db.execute("DELETE FROM agentlog_events WHERE seq = ?", (seq,))
        return f"delete row {seq}"
    if roll < 0.75:
        target = rng.choice((-1, events, events + 5, rng.randrange(events)))
        db.execute("UPDATE OR IGNORE agentlog_events SET seq = ? WHERE seq = ?", (target, seq))
        return f"move row {seq} to seq {target}"
    if roll < 0.85:
        value = rng.choice((-1, 0, events - 1, events + 1, 2**40))
        db.execute("UPDATE agentlog_sessions SET next_seq = ?", (value,))
        return f"next_seq = {value}"
    header = db.execute("SELECT header FROM agentlog_sessions").fetchone()[0]
    what, damaged = mutate(rng, header.encode(), (*BYTE_MUTATIONS, edit_value))
    db.execute("UPDATE agentlog_sessions SET header = ?", (damaged.decode("utf-8", "replace"),))
    return f"header: {what}"


def _flipped_data(rng: random.Random, db: sqlite3.Connection, seq: int) -> object:
    row = db.execute("SELECT data FROM agentlog_events WHERE seq = ?", (seq,)).fetchone()
    if row is None:
        return None
    data = row[0]
    raw = data if isinstance(data, bytes) else str(data).encode()
    _, damaged = flip_bit(rng, raw) if raw else ("", raw)
    return damaged if isinstance(data, bytes) else damaged.decode("utf-8", "replace")


def test_damaged_sqlite_rows_open_or_are_refused_with_a_located_error(tmp_path: Path) -> None:
    pristine_path = tmp_path / "pristine" / "sessions.db"
    url = f"sqlite:///{pristine_path}"
    stored_log(pristine_path.parent, url)
    db = sqlite3.connect(pristine_path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        events = db.execute("SELECT count(*) FROM agentlog_events").fetchone()[0]
    finally:
        db.close()
    pristine = pristine_path.read_bytes()
    rng = random.Random("fuzz-sqlite")
    outcomes: dict[str, int] = {}
    started = time.monotonic()
    for number in range(CASES):
        directory = tmp_path / f"case{number % 2}"
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir()
        path = directory / "sessions.db"
        path.write_bytes(pristine)
        db = sqlite3.connect(path, isolation_level=None)
        try:
            db.execute("PRAGMA foreign_keys = OFF")
            steps = []
            for _ in range(rng.choice((1, 1, 2, 3))):
                try:
                    steps.append(sql_mutation(rng, db, events))
                except sqlite3.IntegrityError:  # STRICT and NOT NULL: no database holds it
                    steps.append("(an edit the schema refuses)")
        finally:
            db.close()
        case = f"sqlite case {number}: {'; '.join(steps)}"
        outcome = check_case(f"sqlite:///{path}", str(path), case)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    outcomes["seconds"] = int(time.monotonic() - started)
    assert outcomes.get("opened", 0) > 50, outcomes
    assert outcomes.get("CorruptLog", 0) > 500, outcomes
