"""The fold of a thread's events: checkpoints, blobs, writes and removals, from the log alone."""

from __future__ import annotations

from typing import Any

from agentlog import Session
from agentlog.adapters._langgraph_index import (
    CHECKPOINT,
    REMOVED,
    WRITES,
    ThreadIndex,
    checkpoint_id_of,
    value_trees,
)


def _log(*events: tuple[str, dict[str, Any]]) -> Session:
    session = Session.create("langgraph:t", clock=lambda: 0)
    for event_type, data in events:
        session.append(event_type, data, ignorable=True)
    return session


def _checkpoint(checkpoint_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "checkpoint": {"v": 4, "id": checkpoint_id},
        "metadata": {"step": 0},
        "blobs": {},
        **extra,
    }


def test_parents_and_write_targets_default_to_the_previous_checkpoint_of_the_namespace() -> None:
    session = _log(
        (CHECKPOINT, _checkpoint("a")),
        (WRITES, {"task": "t1", "path": "", "writes": [[0, "ch", "v"]]}),
        (CHECKPOINT, _checkpoint("b")),
        (CHECKPOINT, _checkpoint("x", ns="child")),
        (CHECKPOINT, {**_checkpoint("c"), "parent": "a"}),
    )
    index = ThreadIndex()
    for event in session.events:
        index.apply(event)
    root = index.checkpoints[""]
    assert [(key, record.parent) for key, record in root.items()] == [
        ("a", None),
        ("b", "a"),
        ("c", "a"),
    ]
    assert index.checkpoints["child"]["x"].parent is None
    assert list(index.writes) == [("", "a")]
    assert index.latest("") == ("c", root["c"])


def test_a_patch_without_an_id_keeps_its_base_id_and_counts_its_depth() -> None:
    patch = {"$lg": "patch", "set": {"ts": "later"}, "of": 0}
    session = _log(
        (CHECKPOINT, _checkpoint("a")), (CHECKPOINT, {**_checkpoint("a"), "checkpoint": patch})
    )
    index = ThreadIndex()
    for event in session.events:
        index.apply(event)
    assert checkpoint_id_of(session.events[1].data) is None
    assert index.by_seq[1].id == "a"
    assert index.by_seq[1].depth == 1


def test_removed_checkpoints_leave_the_view_with_their_writes() -> None:
    session = _log(
        (CHECKPOINT, _checkpoint("a")),
        (WRITES, {"task": "t1", "path": "", "writes": [[0, "ch", "v"]]}),
        (CHECKPOINT, _checkpoint("b")),
        (REMOVED, {"checkpoints": [["", "a"]]}),
    )
    index = ThreadIndex()
    for event in session.events:
        index.apply(event)
    assert list(index.checkpoints[""]) == ["b"]
    assert index.writes == {}
    assert 0 in index.by_seq  # a later patch may still build on it


def test_long_strings_are_numbered_in_value_tree_order() -> None:
    long_a, long_b = "a" * 200, "b" * 200
    data = {
        "checkpoint": {"v": 4, "id": "a", "note": long_a},
        "metadata": {},
        "blobs": {"messages": {"v": 1, "items": [long_b, {"$lg": "s", "r": [0, 0]}]}},
    }
    session = _log((CHECKPOINT, data))
    index = ThreadIndex()
    index.apply(session.events[0])
    assert index.strings == {long_a: (0, 0), long_b: (0, 1)}
    assert index.string(0, 1) == long_b
    assert len(list(value_trees(CHECKPOINT, data))) == 4
