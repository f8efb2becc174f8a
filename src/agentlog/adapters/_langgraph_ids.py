"""LangGraph's ids and times, told from one another: what a compact event leaves out.

LangGraph makes a checkpoint id with ``uuid6(clock_seq=step)`` (a UUID v6: its time in 100 ns,
the step as clock sequence, a random node) and its ``ts`` with ``datetime.now(UTC)`` within
microseconds of it; and the id of the task that pulls node ``name`` as the XXH3-128 hash of
the checkpoint id, the task's namespace, the step it runs at, the node and its triggers
(``_algo.prepare_single_task``). ``_langgraph_compact`` stores an id as an offset from an
earlier one, a ``ts`` as an offset from its id's time, and a pulled task by its node alone,
each kept only when these functions give the stored value back exactly.
"""

from __future__ import annotations

import functools
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from xxhash import xxh3_128_hexdigest

__all__ = [
    "PULL",
    "default_triggers",
    "id_from",
    "id_offset",
    "pull_task",
    "ts_from",
    "ts_offset",
    "uuid6_parts",
]

PULL: Final = "~__pregel_pull, "
"""The start of the ``task_path`` of a task that pulls a node (``"~__pregel_pull, name"``)."""
_UUID_EPOCH: Final = 0x01B21DD213814000
"""100 ns intervals from the UUID epoch (1582-10-15) to the Unix epoch."""
_UNIX: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND: Final = timedelta(microseconds=1)
_SEQ_MASK: Final = 0x3FFF


def uuid6_parts(text: Any) -> tuple[int, int, int] | None:
    """The time, clock sequence and node of a canonical UUID v6 string, else ``None``."""
    if type(text) is not str or len(text) != 36:
        return None
    return _parts(text)


@functools.lru_cache(maxsize=1024)  # each id is parsed for itself and as its children's base
def _parts(text: str) -> tuple[int, int, int] | None:
    try:
        value = uuid.UUID(text)
    except ValueError:
        return None
    if value.version != 6 or value.variant != uuid.RFC_4122 or str(value) != text:
        return None
    number = value.int
    time = ((number >> 80) << 12) | ((number >> 64) & 0xFFF)
    return time, (number >> 48) & _SEQ_MASK, number & 0xFFFF_FFFF_FFFF


def _make_uuid6(time: int, seq: int, node: int) -> str:
    number = ((time >> 12) & 0xFFFF_FFFF_FFFF) << 80 | (time & 0xFFF) << 64
    number |= (seq & _SEQ_MASK) << 48 | (node & 0xFFFF_FFFF_FFFF)
    number |= 6 << 76 | 2 << 62  # version 6, RFC 4122 variant (spelled out: Python 3.11's
    return str(uuid.UUID(int=number))  # ``uuid.UUID(version=6)`` refuses the version)


def id_offset(text: Any, base: Any) -> list[Any] | None:
    """UUID v6 ``text`` as an offset from ``base`` (``id_from`` inverts it), else ``None``."""
    new, old = uuid6_parts(text), uuid6_parts(base)
    if new is None or old is None:
        return None
    offset: list[Any] = [new[0] - old[0], f"{new[2]:012x}"]
    if new[1] != (old[1] + 1) & _SEQ_MASK:
        offset.append(new[1])
    return offset if id_from(offset, base) == text else None


def id_from(offset: list[Any], base: str) -> str:
    """The UUID v6 that ``offset`` (of ``id_offset``) names, given ``base``."""
    old = uuid6_parts(base)
    if old is None:
        raise ValueError(f"checkpoint id {base!r} is not a UUID v6")
    seq = offset[2] if len(offset) > 2 else (old[1] + 1) & _SEQ_MASK
    return _make_uuid6(old[0] + offset[0], seq, int(offset[1], 16))


def _micros(checkpoint_id: str) -> int:
    parts = uuid6_parts(checkpoint_id)
    if parts is None:
        raise ValueError(f"checkpoint id {checkpoint_id!r} is not a UUID v6")
    return (parts[0] - _UUID_EPOCH) // 10


def ts_from(offset: int, checkpoint_id: str) -> str:
    """The ``ts`` ``offset`` microseconds from the time of ``checkpoint_id`` (UTC, ISO 8601)."""
    return (_UNIX + timedelta(microseconds=_micros(checkpoint_id) + offset)).isoformat()


def ts_offset(ts: Any, checkpoint_id: str) -> int | None:
    """``ts`` as microseconds from the time of ``checkpoint_id`` (``ts_from`` inverts it)."""
    if type(ts) is not str:
        return None
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    offset = (moment - _UNIX) // _MICROSECOND - _micros(checkpoint_id)
    return offset if ts_from(offset, checkpoint_id) == ts else None


def pull_task(checkpoint_id: str, ns: str, name: str, triggers: list[str]) -> str:
    """The id LangGraph gives the pulled task of node ``name`` of a checkpoint."""
    parts = uuid6_parts(checkpoint_id)
    if parts is None:
        raise ValueError(f"checkpoint id {checkpoint_id!r} is not a UUID v6")
    step = (parts[1] + 1) & _SEQ_MASK  # uuid6(clock_seq=step), the tasks run at step + 1
    task_ns = f"{ns}|{name}" if ns else name
    text = "".join([task_ns, str(step), name, "__pregel_pull", *triggers])
    digest = xxh3_128_hexdigest(uuid.UUID(checkpoint_id).bytes + text.encode())
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def default_triggers(name: str) -> list[str]:
    """The channels that trigger node ``name`` in a ``StateGraph``, LangGraph's default."""
    return ["__start__"] if name == "__start__" else [f"branch:to:{name}"]
