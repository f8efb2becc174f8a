"""The Responses item converters: identity on the canonical forms, validity, clear refusals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlog import history_problems
from agentlog.adapters.openai_agents import from_response_items, to_response_items
from agentlog.errors import ConversionError
from tests.adapters.strategies import canonical_role_item, conversation, valid_history


def response_problems(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """How ``items`` break the Responses API's pairing: each call answered once, after it."""
    problems = []
    called: set[str] = set()
    answered: set[str] = set()
    for index, item in enumerate(items):
        if item.get("type") == "function_call":
            if item["call_id"] in called:
                problems.append(f"item {index}: call {item['call_id']} made twice")
            called.add(item["call_id"])
        elif item.get("type") == "function_call_output":
            call_id = item["call_id"]
            if call_id not in called or call_id in answered:
                problems.append(f"item {index}: output for {call_id} answers no open call")
            answered.add(call_id)
    problems += [f"call {c} is never answered" for c in sorted(called - answered)]
    return problems


@given(conversation())
def test_canonical_items_survive_the_round_trip(batches: list[list[dict[str, Any]]]) -> None:
    items = [item for batch in batches for item in batch]
    assert to_response_items(from_response_items(items)) == items


@given(conversation())
def test_converted_items_derive_a_provider_valid_history(
    batches: list[list[dict[str, Any]]],
) -> None:
    assert history_problems(from_response_items([i for b in batches for i in b])) == []


@given(valid_history())
def test_a_valid_agentlog_history_converts_to_valid_items(history: list[dict[str, Any]]) -> None:
    items = to_response_items(history)
    assert response_problems(items) == []
    again = from_response_items(items)
    assert [block for message in again for block in message["content"]] == [
        block for message in history for block in message["content"]
    ]


@given(st.lists(canonical_role_item(), max_size=4))
def test_role_messages_keep_role_and_text(items: list[dict[str, Any]]) -> None:
    messages = from_response_items(items)
    assert [(m["role"], [b["text"] for b in m["content"]]) for m in messages] == [
        (i["role"], [p["text"] for p in i["content"]]) for i in items
    ]


def test_parallel_calls_form_one_assistant_message_answered_in_order() -> None:
    items = [
        {"role": "user", "content": "add 1+2 and 3+4"},
        {"type": "function_call", "call_id": "c1", "name": "add", "arguments": '{"a":1,"b":2}'},
        {"type": "function_call", "call_id": "c2", "name": "add", "arguments": '{"a":3,"b":4}'},
        {"type": "function_call_output", "call_id": "c1", "output": "3"},
        {"type": "function_call_output", "call_id": "c2", "output": "7"},
    ]
    messages = from_response_items(items)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assert [b["id"] for b in messages[1]["content"]] == ["c1", "c2"]
    assert [(m["toolCallId"], m["source"]) for m in messages[2:]] == [
        ("c1", {"kind": "tool", "callId": "c1"}),
        ("c2", {"kind": "tool", "callId": "c2"}),
    ]


@pytest.mark.parametrize(
    ("item", "text"),
    [
        (
            {"role": "user", "content": [{"type": "input_image", "image_url": "http://x/y.png"}]},
            "response item 0 content part 0 ('input_image') has no agentlog form",
        ),
        ({"type": "web_search_call", "id": "ws1"}, "response item 0 ('web_search_call')"),
        ({"type": "compaction", "encrypted_content": "..."}, "response item 0 ('compaction')"),
        ({"type": "reasoning", "summary": []}, "response item 0 (a reasoning item)"),
        ({"foo": 1}, "response item 0 (None) has no agentlog message form"),
    ],
)
def test_items_with_no_agentlog_form_are_refused_by_name(item: Any, text: str) -> None:
    with pytest.raises(ConversionError) as caught:
        from_response_items([item])
    assert str(caught.value).startswith(text)


def test_blocks_with_no_item_form_are_refused_by_name() -> None:
    image = {"type": "image", "attachment": {"attachmentId": "a"}}
    with pytest.raises(ConversionError, match=r"user content block 1 \('image'\)"):
        to_response_items([{"role": "user", "content": [{"type": "text", "text": "x"}, image]}])
