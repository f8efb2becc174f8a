"""A thread's writes: only new list items, references to task writes, checkpoint patches.

Each test drives ``Thread`` the way LangGraph's loop drives a checkpointer — ``put_writes``
for a task, then ``put`` of the next checkpoint — and checks both what is stored and that
reading it back gives exactly the values handed in.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint, empty_checkpoint
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from agentlog import Session
from agentlog.adapters._langgraph_index import CHECKPOINT, MAX_DEPTH
from agentlog.adapters._langgraph_thread import Thread, session_id, thread_id


class _Driver:
    """Puts checkpoints of one channel, ``messages``, as LangGraph would."""

    def __init__(self) -> None:
        self.thread = Thread(Session.create(session_id("t"), clock=lambda: 0), JsonPlusSerializer())
        self.parent: str | None = None
        self.version = 0

    def config(self) -> RunnableConfig:
        configurable: dict[str, Any] = {"thread_id": "t", "checkpoint_ns": ""}
        if self.parent is not None:
            configurable["checkpoint_id"] = self.parent
        return {"configurable": configurable}

    def put(self, messages: list[Any]) -> Checkpoint:
        self.version += 1
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": messages}
        checkpoint["channel_versions"] = {"messages": self.version}
        self.thread.put(
            self.config(), checkpoint, {"step": self.version}, {"messages": self.version}
        )
        self.parent = checkpoint["id"]
        return checkpoint

    def write(self, value: Any) -> None:
        self.thread.put_writes(self.config(), [("messages", value)], "task", "")

    def read(self) -> Any:
        found = self.thread.get("", None)
        assert found is not None
        return self.thread.checkpoint_tuple("", *found, self.config())

    def last_data(self) -> Any:
        """The full form of the last event's data (as ``_langgraph_compact.expand`` gives it)."""
        return self.thread.index.data[self.thread.session.events[-1].seq]

    def last_blob(self) -> dict[str, Any]:
        return dict(self.last_data()["blobs"]["messages"])


def test_a_list_that_grows_stores_its_new_items_only() -> None:
    driver = _Driver()
    first = [HumanMessage(content="hi", id="h1")]
    driver.put(first)
    assert "base" not in driver.last_blob()
    grown = [*first, AIMessage(content="hello", id="a1")]
    driver.put(grown)
    blob = driver.last_blob()
    assert blob["base"] == 1
    assert len(blob["items"]) == 1
    assert driver.read().checkpoint["channel_values"]["messages"] == grown


def test_a_replaced_or_reassigned_message_makes_the_list_stored_whole() -> None:
    driver = _Driver()
    message = HumanMessage(content="hi", id="h1")
    driver.put([message])
    driver.put([HumanMessage(content="edited", id="h1")])  # add_messages replaced it by id
    assert "base" not in driver.last_blob()
    anonymous = ToolMessage(content="out", tool_call_id="c1")
    driver.put([anonymous])
    anonymous.id = "given-later"  # add_messages assigns ids in place
    driver.put([anonymous, AIMessage(content="done", id="a2")])
    assert "base" not in driver.last_blob()
    assert driver.read().checkpoint["channel_values"]["messages"][0].id == "given-later"


def test_a_message_a_task_wrote_is_stored_once_as_a_reference() -> None:
    driver = _Driver()
    driver.put([])
    result = ToolMessage(content="x" * 300, tool_call_id="c1")
    driver.write([result])
    result.id = "assigned"  # what add_messages does before the checkpoint is put
    driver.put([result])
    (item,) = driver.last_blob()["items"]
    assert item["$lg"] == "at"
    assert dict(item["set"]) == {"id": "assigned"}
    restored = driver.read()
    assert restored.checkpoint["channel_values"]["messages"] == [result]
    assert restored.pending_writes == []  # the writes belong to the previous checkpoint


def test_a_task_write_stored_after_the_checkpoint_holding_it_refers_to_the_checkpoint() -> None:
    # LangGraph stores a task's writes in a background thread: they may come after the next
    # checkpoint, which then holds the message first.
    driver = _Driver()
    driver.put([])
    earlier = driver.config()
    result = ToolMessage(content="x" * 300, tool_call_id="c1", id="t1")
    driver.put([result])
    driver.thread.put_writes(earlier, [("messages", [result])], "task", "")
    (entry,) = driver.last_data()["writes"]
    (item,) = entry[2]
    assert item == {  # [seq, "blobs", "messages", "items", 0], written short
        "$lg": "at",
        "r": [driver.thread.session.events[-2].seq, "messages", 0],
    }
    found = driver.thread.get("", earlier["configurable"]["checkpoint_id"])
    assert found is not None
    restored = driver.thread.checkpoint_tuple("", *found, earlier)
    assert restored.pending_writes == [("task", "messages", [result])]


def test_a_message_in_an_input_value_is_stored_once() -> None:
    driver = _Driver()
    question = HumanMessage(content="q" * 300, id="h1")
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"__start__": {"messages": [question]}}
    checkpoint["channel_versions"] = {"__start__": 1}
    driver.thread.put(driver.config(), checkpoint, {"step": -1}, {"__start__": 1})
    driver.parent = checkpoint["id"]
    driver.version = 1
    driver.put([question])
    (item,) = driver.last_blob()["items"]
    assert item["r"][1:] == ["__start__", "messages", 0]  # short for "blobs", _, "value", ...
    assert driver.read().checkpoint["channel_values"]["messages"] == [question]


def test_a_patch_leaves_out_the_versions_and_updated_channels_the_blobs_predict() -> None:
    driver = _Driver()
    driver.put([])
    driver.put([AIMessage(content="a", id="a1")])
    patch = driver.last_data()["checkpoint"]
    assert patch["$lg"] == "step"
    assert "channel_versions" not in patch["set"]
    restored = driver.read().checkpoint
    assert restored["channel_versions"] == {"messages": 2}


def test_metadata_one_step_on_is_left_out_and_other_metadata_is_a_patch() -> None:
    driver = _Driver()
    for _ in range(3):
        driver.put([])
    assert "metadata" not in driver.thread.session.events[-1].data  # the parent's, one step on
    note = "n" * 300
    metadata: list[dict[str, Any]] = [{"step": 4, "source": "loop", "note": note}]
    metadata.append({**metadata[0], "step": 5, "source": "input"})
    for version, meta in enumerate(metadata, start=4):
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": []}
        checkpoint["channel_versions"] = {"messages": version}
        driver.thread.put(driver.config(), checkpoint, meta, {"messages": version})  # type: ignore[arg-type]
        driver.parent = checkpoint["id"]
    events = driver.thread.session.events
    stored = [driver.thread.index.data[event.seq].get("metadata") for event in events]
    assert stored[3] == metadata[0]  # a patch would be longer
    assert stored[4] == {"$lg": "patch", "set": {"source": "input"}}
    fresh = Thread(driver.thread.session, JsonPlusSerializer())  # read from the events alone
    read = [
        fresh.checkpoint_tuple("", record.id, record, driver.config()).metadata
        for record in fresh.index.by_seq.values()
    ]
    assert read == [{"step": 1}, {"step": 2}, {"step": 3}, *metadata]


def test_a_patch_of_the_earlier_kind_is_read_against_the_plain_guess() -> None:
    # A thread written before versions seen were predicted: its "patch" was taken against a
    # guess that leaves them as the parent had them.
    session = Session.create(session_id("t"), clock=lambda: 0)
    parent = empty_checkpoint()
    parent["channel_versions"] = {"branch:to:agent": 1}
    parent["versions_seen"] = {"agent": {"branch:to:agent": 0}}
    tree = {key: value for key, value in parent.items() if key != "channel_values"}
    blobs = {"branch:to:agent": {"v": 1, "value": None}}
    session.append(CHECKPOINT, {"checkpoint": tree, "metadata": {}, "blobs": blobs}, ignorable=True)
    patch = {"$lg": "patch", "set": {"id": "child"}, "of": 0}
    consumed = {"branch:to:agent": {"v": 2, "empty": True}}
    data = {"checkpoint": patch, "metadata": {}, "blobs": consumed}
    session.append(CHECKPOINT, data, ignorable=True)
    thread = Thread(session, JsonPlusSerializer())
    found = thread.get("", "child")
    assert found is not None
    config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_id": "child"}}
    child = thread.checkpoint_tuple("", *found, config).checkpoint
    assert child["versions_seen"] == {"agent": {"branch:to:agent": 0}}
    assert child["channel_versions"] == {"branch:to:agent": 2}


def test_checkpoints_are_patches_of_their_parent_up_to_a_bounded_depth() -> None:
    driver = _Driver()
    for _ in range(MAX_DEPTH + 3):
        expected = driver.put([])
    depths = [record.depth for record in driver.thread.index.by_seq.values()]
    assert depths[: MAX_DEPTH + 3] == [*range(MAX_DEPTH + 1), 0, 1]
    restored = driver.read().checkpoint
    assert {key: restored[key] for key in expected} == {
        **expected,
        "channel_values": {"messages": []},
    }


def test_thread_ids_map_to_session_ids_and_back() -> None:
    assert session_id("t-1") == "langgraph:t-1"
    assert thread_id(session_id("t-1")) == "t-1"
