"""The compact stored form of LangGraph events: ids, times, versions and task ids left out.

Each rule is checked both ways: what the compact form leaves out, and that ``expand`` gives
back the full form exactly — and that a value a rule does not fit is stored in full. Task ids
are computed with LangGraph's own function, so a LangGraph that hashed them otherwise would
fail here rather than cost bytes unnoticed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.pregel._algo import _xxhash_str

import agentlog
from agentlog import Session
from agentlog.adapters._langgraph_compact import Context, compact, expand
from agentlog.adapters._langgraph_ids import id_from
from agentlog.adapters._langgraph_index import CHECKPOINT, WRITES
from agentlog.adapters._langgraph_thread import Thread, session_id
from agentlog.adapters.langgraph import AgentlogCheckpointer

BEFORE = Path(__file__).parent / "data" / "langgraph_thread_before_compact.jsonl"
"""Three turns of ``langgraph_graph`` (a tool, an interrupt) as the adapter stored them before
the compact form, with the digest of every checkpoint tuple that adapter read back."""
BEFORE_READ = "1746991ffa1204b27761925c1112fad3c604298ebea8d2ce35f3b3d086dbbf92"


def _same(a: Any, b: Any) -> bool:
    return orjson.dumps(a) == orjson.dumps(b)


def _step(parent: str, ts: str, child: str, of: int) -> dict[str, Any]:
    return {
        "checkpoint": {"$lg": "step", "set": {"ts": ts, "id": child}, "of": of},
        "blobs": {
            "messages": {"v": 9, "base": 8, "items": [{"$lg": "at", "r": [3, 0, 0]}]},
            "branch:to:agent": {"v": 9, "empty": True},
            "branch:to:tools": {"v": 9, "value": None},
            "other": {"v": 4, "value": 1},
        },
    }


def test_a_step_checkpoint_keeps_only_its_id_offset_ts_offset_and_short_blobs() -> None:
    parent = str(uuid6(clock_seq=1))
    checkpoint = empty_checkpoint()  # its ts is taken just before its id, as LangGraph does
    checkpoint["id"] = str(uuid6(clock_seq=2))
    full = _step(parent, checkpoint["ts"], checkpoint["id"], 5)
    metadata = {"$lg": "patch", "set": {"source": "input"}}
    full = {"checkpoint": full["checkpoint"], "metadata": metadata, "blobs": full["blobs"]}
    context = Context(parent=parent, of=5, versions={"messages": 8}, top=7)
    stored = compact(CHECKPOINT, full, context)
    assert set(stored) == {"id", "m", "v", "blobs"}
    assert type(stored["id"][2]) is int  # the ts, in microseconds from the id's time
    assert stored["v"] == 9
    assert stored["m"] == {"source": "input"}
    assert stored["blobs"] == {
        "messages": {"+": [{"$lg": "at", "r": [3, 0, 0]}]},  # on the channel's last version
        "branch:to:agent": [],
        "branch:to:tools": [None],
        "other": {"v": 4, "value": 1},
    }
    assert _same(expand(CHECKPOINT, stored, context), full)
    elsewhere = compact(CHECKPOINT, full, Context(parent=parent, of=5, versions={"messages": 7}))
    assert elsewhere["blobs"]["messages"] == {"base": 8, "items": [{"$lg": "at", "r": [3, 0, 0]}]}
    next_up = Context(parent=parent, of=5, versions={"messages": 8}, top=8)
    implied = compact(CHECKPOINT, full, next_up)
    assert "v" not in implied  # 9 is one above every version so far: LangGraph's next one
    assert _same(expand(CHECKPOINT, implied, next_up), full)


def test_a_checkpoint_a_rule_does_not_fit_is_stored_in_full() -> None:
    parent = str(uuid6(clock_seq=1))
    child = str(uuid6(clock_seq=2))
    local = "2026-01-01T10:00:00.000001+02:00"  # not LangGraph's UTC time: kept as it is
    context = Context(parent=parent, of=5)
    stored = compact(CHECKPOINT, _step(parent, local, child, 5), context)
    assert stored["checkpoint"]["set"]["ts"] == local
    assert "id" not in stored
    other_base = compact(CHECKPOINT, _step(parent, local, child, 4), context)
    assert other_base["checkpoint"]["of"] == 4
    plain = {"checkpoint": {"v": 4, "id": "a"}, "metadata": {}, "blobs": {}}
    assert compact(CHECKPOINT, plain, Context()) == plain
    assert expand(CHECKPOINT, plain, Context()) is plain  # a full form as it is


def test_a_pulled_task_keeps_only_its_node_and_its_writes_their_channels() -> None:
    target = str(uuid6(clock_seq=6))
    step_id = bytes.fromhex(target.replace("-", ""))
    cases = (("agent", ["branch:to:agent"]), ("__start__", ["__start__"]), ("agent", ["agent"]))
    for name, triggers in cases:
        task = _xxhash_str(step_id, name, "7", name, "__pregel_pull", *triggers)
        full = {
            "task": task,
            "path": f"~__pregel_pull, {name}",
            "writes": [[0, "messages", ["m"]], [1, "branch:to:tools", None]],
        }
        stored = compact(WRITES, full, Context(recent=[target]))
        default = triggers != ["agent"]  # StateGraph's own trigger of the node: left out
        assert stored["pull"] == (name if default else [name, *triggers])
        assert "task" not in stored
        assert "path" not in stored
        assert stored["writes"] == [["messages", ["m"]], ["branch:to:tools", None]]
        assert _same(expand(WRITES, stored, Context(recent=[target])), full)
    earlier, later = str(uuid6(clock_seq=4)), str(uuid6(clock_seq=7))
    context = Context(recent=[earlier, target])
    for other, kept in ((later, [later, target]), (earlier, 1)):
        full = {"checkpoint": other, "task": "t1", "path": "", "writes": [[-1, "__error__", "x"]]}
        stored = compact(WRITES, full, context)
        assert stored["task"] == "t1"
        assert stored["writes"] == full["writes"]  # idx -1 is not the position
        if isinstance(kept, list):  # the next checkpoint, not stored yet: an id offset
            assert id_from(stored["checkpoint"], target) == other
        else:  # a checkpoint stored before: its position back from the last one
            assert stored["checkpoint"] == kept
        assert _same(expand(WRITES, stored, context), full)


def test_a_thread_stored_in_full_form_reads_the_same() -> None:
    """Threads written before the compact form (every event in full form) read as before."""
    thread = Thread(Session.create(session_id("t"), clock=lambda: 0), JsonPlusSerializer())
    messages: list[Any] = []
    parent: str | None = None
    for version in range(1, 5):
        config: dict[str, Any] = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        if parent is not None:
            config["configurable"]["checkpoint_id"] = parent
            thread.put_writes(config, [("messages", [messages[-1]])], "task", "")  # type: ignore[arg-type]
        messages = [*messages, HumanMessage(f"q{version}" * 80, id=f"h{version}")]
        messages.append(AIMessage(f"a{version}", id=f"a{version}"))
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": messages}
        checkpoint["channel_versions"] = {"messages": version}
        thread.put(config, checkpoint, {"step": version}, {"messages": version})  # type: ignore[arg-type]
        parent = checkpoint["id"]
    events = thread.session.events
    assert any(event.data != thread.index.data[event.seq] for event in events)  # compacted
    old = Session.create(session_id("t"), clock=lambda: 0)
    for event in events:
        old.append(event.type, thread.index.data[event.seq], ignorable=True)
    reread, fresh = Thread(old, JsonPlusSerializer()), Thread(thread.session, JsonPlusSerializer())
    writes: list[Any] = []
    for record in fresh.index.by_seq.values():
        config = {"configurable": {"thread_id": "t", "checkpoint_id": record.id}}
        expected = fresh.checkpoint_tuple("", record.id, record, config)  # type: ignore[arg-type]
        found = reread.get("", record.id)
        assert found is not None
        assert reread.checkpoint_tuple("", *found, config) == expected  # type: ignore[arg-type]
        writes.extend(expected.pending_writes or ())
    assert expected.checkpoint["channel_values"]["messages"] == messages
    assert writes == [("task", "messages", [messages[index]]) for index in (1, 3, 5)]


def test_blobs_the_parents_pending_writes_predict_are_left_out() -> None:
    parent = str(uuid6(clock_seq=1))
    checkpoint = empty_checkpoint()
    checkpoint["id"] = str(uuid6(clock_seq=2))
    pending = [
        ("~__pregel_pull, agent", 6, 0, "messages", [{"m": 1}]),
        ("~__pregel_pull, agent", 6, 1, "branch:to:tools", None),
    ]
    order = {"messages": 0, "branch:to:agent": 1, "branch:to:tools": 2}
    context = Context(
        parent=parent, of=5, versions={"messages": 8}, top=8, pending=pending, order=order
    )
    full = {
        "checkpoint": {
            "$lg": "step",
            "set": {"ts": checkpoint["ts"], "id": checkpoint["id"]},
            "of": 5,
        },
        "blobs": {
            "messages": {"v": 9, "base": 8, "items": [{"$lg": "at", "r": [6, 0, 0]}]},
            "branch:to:agent": {"v": 9, "empty": True},  # the agent's trigger, consumed
            "branch:to:tools": {"v": 9, "value": None},
        },
    }
    stored = compact(CHECKPOINT, full, context)
    assert set(stored) == {"id"}  # every blob as predicted, the version LangGraph's next
    assert _same(expand(CHECKPOINT, stored, context), full)
    full["blobs"]["branch:to:tools"] = {"v": 9, "value": "elsewhere"}
    del full["blobs"]["branch:to:agent"]
    stored = compact(CHECKPOINT, full, context)
    assert stored["b"] == {"branch:to:tools": ["elsewhere"], "branch:to:agent": None}
    assert _same(expand(CHECKPOINT, stored, context), full)


def _plain(value: Any) -> Any:
    """A JSON view of a read value: messages by class, content, id and tool calls."""
    if isinstance(value, BaseMessage):
        return [type(value).__name__, value.content, value.id, getattr(value, "tool_calls", None)]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if hasattr(value, "value") and hasattr(value, "id"):  # an Interrupt
        return [type(value).__name__, _plain(value.value), value.id]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)


def test_a_thread_the_previous_adapter_stored_reads_as_it_did() -> None:
    store = agentlog.open_store("memory:")
    session = store.create(session_id("t"))
    for line in BEFORE.read_bytes().splitlines():
        event = orjson.loads(line)
        if event["type"].startswith("langgraph/"):
            session.append(event["type"], event["data"], ignorable=True)
    session.close()
    with AgentlogCheckpointer(store) as checkpointer:
        tuples = list(checkpointer.list({"configurable": {"thread_id": "t"}}))
    read = [
        _plain(
            [item.config, item.checkpoint, item.metadata, item.parent_config, item.pending_writes]
        )
        for item in tuples
    ]
    assert len(read) == 18
    assert len(tuples[0].checkpoint["channel_values"]["messages"]) == 12  # 3 turns of 4
    assert hashlib.sha256(orjson.dumps(read)).hexdigest() == BEFORE_READ
