"""LangGraph's checkpoint ids, times and pulled task ids, told from one another.

Task ids are computed with LangGraph's own function, so a LangGraph that hashed them otherwise
would fail here rather than only cost bytes unnoticed.
"""

from __future__ import annotations

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.pregel._algo import _xxhash_str

from agentlog.adapters._langgraph_ids import (
    default_triggers,
    id_from,
    id_offset,
    pull_task,
    ts_from,
    ts_offset,
    uuid6_parts,
)


def test_a_checkpoint_id_is_an_offset_from_another() -> None:
    parent = str(uuid6(clock_seq=7))
    child = str(uuid6(clock_seq=8))
    offset = id_offset(child, parent)
    assert offset is not None
    assert len(offset) == 2  # the clock sequence is the parent's + 1
    assert id_from(offset, parent) == child
    jump = str(uuid6(clock_seq=3))
    back = id_offset(jump, parent)
    assert back is not None
    assert back[2] == 3
    assert id_from(back, parent) == jump
    assert id_offset("not-a-uuid", parent) is None
    assert id_offset("0c5fb2f4-5f0b-4b5d-9a3e-5d6c9f1a2b3c", parent) is None  # a v4
    assert uuid6_parts(child.upper()) is None  # not the canonical spelling


def test_a_ts_is_an_offset_from_its_ids_time() -> None:
    checkpoint = empty_checkpoint()  # its ts is taken just before its id, as LangGraph does
    offset = ts_offset(checkpoint["ts"], checkpoint["id"])
    assert offset is not None
    assert abs(offset) < 1_000_000  # within a second
    assert ts_from(offset, checkpoint["id"]) == checkpoint["ts"]
    assert ts_offset("2026-01-01T10:00:00.000001+02:00", checkpoint["id"]) is None
    assert ts_offset("2026-01-01T10:00:00", checkpoint["id"]) is None  # no time zone
    assert ts_offset("yesterday", checkpoint["id"]) is None


def test_a_pulled_task_id_is_langgraphs() -> None:
    checkpoint_id = str(uuid6(clock_seq=6))
    step_id = bytes.fromhex(checkpoint_id.replace("-", ""))
    for ns, name in (("", "agent"), ("", "__start__"), ("outer:1", "tools")):
        triggers = default_triggers(name)
        task_ns = f"{ns}|{name}" if ns else name
        expected = _xxhash_str(step_id, task_ns, "7", name, "__pregel_pull", *triggers)
        assert pull_task(checkpoint_id, ns, name, triggers) == expected
    assert default_triggers("__start__") == ["__start__"]
    assert default_triggers("agent") == ["branch:to:agent"]
