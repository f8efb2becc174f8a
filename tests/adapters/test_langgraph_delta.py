"""Patches between stored trees: used only when they rebuild the new tree exactly."""

from __future__ import annotations

from typing import Any

import orjson

from agentlog.adapters._langgraph_delta import (
    diff,
    field_changes,
    patched,
    predicted,
    with_fields,
)

OLD = {
    "v": 4,
    "id": "c1",
    "channel_versions": {"messages": 3, "branch:to:agent": 3},
    "versions_seen": {"agent": {"branch:to:agent": 2}, "__input__": {}},
    "updated_channels": ["messages"],
}


def _exactly(tree: Any) -> bytes:
    return orjson.dumps(tree)


def test_a_checkpoint_is_stored_as_the_entries_that_changed() -> None:
    new = {
        **OLD,
        "id": "c2",
        "channel_versions": {"messages": 4, "branch:to:agent": 3, "branch:to:tools": 4},
        "versions_seen": {"agent": {"branch:to:agent": 3}, "__input__": {}},
    }
    patch = diff(OLD, new)
    assert patch == {
        "$lg": "patch",
        "set": {
            "id": "c2",
            "channel_versions": {
                "$lg": "patch",
                "set": {"messages": 4, "branch:to:tools": 4},
            },
            "versions_seen": {
                "$lg": "patch",
                "set": {"agent": {"$lg": "patch", "set": {"branch:to:agent": 3}}},
            },
        },
    }
    assert _exactly(patched(OLD, patch)) == _exactly(new)


def test_removed_keys_are_unset() -> None:
    new = {key: value for key, value in OLD.items() if key != "updated_channels"}
    patch = diff(OLD, new)
    assert patch is not None
    assert patch["unset"] == ["updated_channels"]
    assert patched(OLD, patch) == new


def test_a_changed_key_order_or_type_is_stored_whole() -> None:
    reordered = dict(reversed(list(OLD.items())))
    assert diff(OLD, reordered) is None
    assert diff(OLD, ["not", "a", "dict"]) is None
    retyped = {**OLD, "v": 4.0}
    patch = diff(OLD, retyped)
    assert patch is not None
    assert _exactly(patched(OLD, patch)) == _exactly(retyped)


MESSAGE: dict[str, Any] = {
    "$lg": "ext",
    "c": 5,
    "d": ["m", "ToolMessage", {"content": "x", "id": None, "tool_call_id": "c1"}, "v"],
}


def test_a_message_given_an_id_is_the_written_one_plus_that_field() -> None:
    stored = {**MESSAGE, "d": ["m", "ToolMessage", {**MESSAGE["d"][2], "id": "u1"}, "v"]}
    fields = field_changes(MESSAGE, stored)
    assert fields == {"id": "u1"}
    assert _exactly(with_fields(MESSAGE, fields)) == _exactly(stored)


def test_an_unchanged_message_needs_no_fields_and_another_class_is_not_a_change() -> None:
    assert field_changes(MESSAGE, MESSAGE) == {}
    other = {**MESSAGE, "d": ["m", "AIMessage", MESSAGE["d"][2], "v"]}
    assert field_changes(MESSAGE, other) is None
    assert field_changes(MESSAGE, "text") is None
    assert with_fields("text", {"id": "u1"}) == "text"


def test_a_step_guess_brings_the_consumed_triggers_seen_versions_forward() -> None:
    parent = {
        **OLD,
        "versions_seen": {
            "agent": {"branch:to:agent": 2},
            "tools": {"branch:to:tools": 1},
            "__interrupt__": {"branch:to:agent": 1, "messages": 2},
        },
    }
    # The step ran "agent": its trigger is consumed (an empty blob) at the next version.
    blobs = {"branch:to:agent": {"v": 4, "empty": True}, "messages": {"v": 4, "items": []}}
    guess = predicted(parent, blobs, seen=True)
    assert guess["versions_seen"] == {
        "agent": {"branch:to:agent": 3},  # the parent's version of the channel it consumed
        "tools": {"branch:to:tools": 1},
        "__interrupt__": {"branch:to:agent": 1, "messages": 2},  # not a node: as it was
    }
    assert guess["channel_versions"] == {"messages": 4, "branch:to:agent": 4}
    # The plain guess (``"patch"`` kind, threads written before) leaves versions_seen alone.
    assert predicted(parent, blobs)["versions_seen"] == parent["versions_seen"]
