"""The Chat Completions converters: identity on canonical messages, valid pairing, refusals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlog import history_problems
from agentlog.adapters.openai_agents import (
    from_chat_messages,
    from_response_items,
    to_chat_messages,
)
from agentlog.errors import ConversionError
from tests.adapters.strategies import ARGUMENTS, NAMES, TEXT, conversation, valid_history


def chat_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """How ``messages`` break Chat Completions pairing: tool messages right after their call."""
    problems: list[str] = []
    awaiting: list[str] = []
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            if message["tool_call_id"] in awaiting:
                awaiting.remove(message["tool_call_id"])
            else:
                problems.append(f"message {index}: tool message answers no call before it")
            continue
        problems += [f"call {c} unanswered before message {index}" for c in awaiting]
        awaiting = [call["id"] for call in message.get("tool_calls") or ()]
        if message["role"] == "assistant" and message["content"] is None and not awaiting:
            problems.append(f"message {index}: an empty assistant message")
    return problems + [f"call {c} never answered" for c in awaiting]


def _content(draw: st.DrawFn) -> Any:
    return draw(
        TEXT | st.lists(TEXT.map(lambda t: {"type": "text", "text": t}), min_size=2, max_size=3)
    )


@st.composite
def chat_history(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Canonical, valid Chat Completions messages."""
    history: list[dict[str, Any]] = []
    if draw(st.booleans()):
        history.append(
            {"role": draw(st.sampled_from(["system", "developer"])), "content": _content(draw)}
        )
    counter = 0
    for _ in range(draw(st.integers(1, 3))):
        history.append({"role": "user", "content": _content(draw)})
        for _ in range(draw(st.integers(0, 2))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append(
                    {
                        "id": f"call_{counter}",
                        "type": "function",
                        "function": {"name": draw(NAMES), "arguments": draw(ARGUMENTS)},
                    }
                )
            content = _content(draw) if draw(st.booleans()) else None
            history.append({"role": "assistant", "content": content, "tool_calls": calls})
            history += [
                {"role": "tool", "tool_call_id": call["id"], "content": _content(draw)}
                for call in calls
            ]
        history.append({"role": "assistant", "content": _content(draw)})
    return history


@given(chat_history())
def test_canonical_chat_messages_survive_the_round_trip(history: list[dict[str, Any]]) -> None:
    assert chat_problems(history) == []
    assert to_chat_messages(from_chat_messages(history)) == history


@given(chat_history())
def test_converted_chat_messages_derive_a_provider_valid_history(
    history: list[dict[str, Any]],
) -> None:
    assert history_problems(from_chat_messages(history)) == []


@given(valid_history())
def test_a_valid_agentlog_history_converts_to_valid_chat_messages(
    history: list[dict[str, Any]],
) -> None:
    assert chat_problems(to_chat_messages(history)) == []


@given(conversation())
def test_a_response_per_item_still_sends_one_assistant_message_with_its_calls(
    batches: list[list[dict[str, Any]]],
) -> None:
    """Assistant messages split per item (as a session may hold them) merge back together."""
    messages = from_response_items([item for batch in batches for item in batch])
    split = []
    for message in messages:
        if message["role"] == "assistant":
            split += [{**message, "content": [block]} for block in message["content"]]
        else:
            split.append(message)
    assert chat_problems(to_chat_messages(split)) == []


def test_reasoning_alone_sends_nothing() -> None:
    reasoning = {"role": "assistant", "content": [{"type": "reasoning", "text": "hmm"}]}
    assert to_chat_messages([reasoning]) == []


@pytest.mark.parametrize(
    ("message", "text"),
    [
        (
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
            "chat message 0 (user) content part 0 ('image_url') has no agentlog form; only "
            "text parts convert",
        ),
        ({"role": "function", "content": "x"}, "chat message 0 (function) has no agentlog form"),
        (
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "custom"}]},
            "chat message 0 (assistant) has a 'custom' tool call",
        ),
    ],
)
def test_chat_messages_with_no_agentlog_form_are_refused_by_name(
    message: dict[str, Any], text: str
) -> None:
    with pytest.raises(ConversionError) as caught:
        from_chat_messages([message])
    assert str(caught.value) == text
