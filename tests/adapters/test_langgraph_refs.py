"""References to recently stored objects: made only for the same object, followed back exactly."""

from __future__ import annotations

from typing import Any

from agentlog.adapters._langgraph_refs import GENERATIONS, SHAPES, StoredObjects, _short, resolved


class _Message:
    """Any object; the trees below stand for what the serde made of it."""


def _ext(content: str, **fields: Any) -> dict[str, Any]:
    return {"$lg": "ext", "c": 5, "d": ["m", "Message", {"content": content, **fields}, "v"]}


def _no_strings(seq: int, index: int) -> str:
    raise AssertionError("no shared strings here")


def test_the_same_object_becomes_a_path_and_resolves_to_its_tree() -> None:
    objects = StoredObjects(lambda tree: tree)
    message, other = _Message(), _Message()
    written = {"messages": [_ext("hi", id=None)]}
    objects.remember({"messages": [message]}, written, written, [7, "blobs", "in", "value"])
    objects.next_generation()
    changed = _ext("hi", id="a1")
    stored = objects.refer([message, other], [changed, _ext("new")])
    assert stored == [
        {"$lg": "at", "r": [7, "in", "messages", 0], "set": {"id": "a1"}},  # a short path
        _ext("new"),  # another object, whose reference would be longer than its tree
    ]
    events = {7: {"blobs": {"in": {"value": written}}}}
    assert resolved(stored, events.__getitem__, _no_strings) == [changed, _ext("new")]


def test_an_object_is_forgotten_after_the_last_generations() -> None:
    objects = StoredObjects(lambda tree: tree)
    message = _Message()
    # Stored as a reference itself, so not the template of its shape either.
    objects.remember(message, _ext("hi"), {"$lg": "at", "r": [0, "w"]}, [1, "writes", 0, 2])
    for _ in range(GENERATIONS - 1):
        objects.next_generation()
    assert objects.refer(message, _ext("hi"))["$lg"] == "at"
    objects.next_generation()
    assert objects.refer(message, _ext("hi")) == _ext("hi")


def test_a_tree_no_field_change_rebuilds_is_stored_whole() -> None:
    objects = StoredObjects(lambda tree: tree)
    message = _Message()
    objects.remember(message, _ext("hi"), _ext("hi"), [1, "writes", 0, 2])
    other_class = {"$lg": "ext", "c": 5, "d": ["m", "Other", {"content": "hi"}, "v"]}
    assert objects.refer(message, other_class) == other_class


def test_a_new_object_refers_to_the_last_whole_one_of_its_shape() -> None:
    objects = StoredObjects(lambda tree: tree)
    first = _ext("first answer", id="m1", tool_calls=[], usage=None)
    objects.remember(_Message(), first, first, [3, "writes", 0, 2])
    # A reference is never a template: following one goes one step, to a whole tree.
    copy = {"$lg": "at", "r": [3, "writes", 0, 2]}
    objects.remember(_Message(), _ext("x", id="m2", tool_calls=[], usage=None), copy, [4, "w"])
    objects.next_generation()
    new = _ext("second answer", id="m3", tool_calls=[], usage=None)
    stored = objects.refer(_Message(), new)
    assert stored == {  # [3, "writes", 0, 2] written short
        "$lg": "at",
        "r": [3, 0],
        "set": {"content": "second answer", "id": "m3"},
    }
    events = {3: {"writes": [[0, "messages", first]]}}
    assert resolved(stored, events.__getitem__, _no_strings) == new
    other_keys = _ext("third", id="m4")  # another shape: stored whole
    assert objects.refer(_Message(), other_keys) == other_keys


def test_only_the_last_stored_shapes_are_templates() -> None:
    objects = StoredObjects(lambda tree: tree)
    note = "a note long enough for a reference to be shorter"
    first = _ext("first answer", id="m1", note=note)
    objects.remember(_Message(), first, first, [1, "writes", 0, 2])
    same_shape = _ext("second answer", id="m2", note=note)
    assert objects.refer(_Message(), same_shape)["$lg"] == "at"
    for index in range(SHAPES):  # as many other shapes, stored after it
        other = _ext("x", **{f"field{index}": None})
        objects.remember(_Message(), other, other, [2 + index, "writes", 0, 2])
    assert objects.refer(_Message(), same_shape) == same_shape  # its template was forgotten


def test_short_paths_name_the_same_trees_as_full_ones() -> None:
    data = {
        "blobs": {
            "messages": {"items": ["m0", "m1"]},
            "__start__": {"value": {"messages": ["s0"]}},
            "writes": {"items": ["w0"]},
            "blobs": {"value": ["b0"]},
            "list": {"value": ["l0"]},
        },
        "writes": [[0, "messages", ["x0"]]],
    }
    paths: list[tuple[list[Any], list[Any] | None]] = [
        (["writes", 0, 2, 0], [0, 0]),
        (["blobs", "messages", "items", 1], ["messages", 1]),
        (["blobs", "__start__", "value", "messages", 0], ["__start__", "messages", 0]),
        (["blobs", "writes", "items", 0], None),  # would read as a write
        (["blobs", "blobs", "value", 0], None),  # would read as a full path
        (["blobs", "list", "value", 0], None),  # would read as a list item
    ]
    for path, short in paths:
        assert _short([7, *path]) == [7, *(short or path)]
        ref = {"$lg": "at", "r": [7, *(short or path)]}
        target: Any = data
        for key in path:
            target = target[key]
        assert resolved(ref, {7: data}.__getitem__, _no_strings) == target
