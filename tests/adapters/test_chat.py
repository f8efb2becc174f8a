"""The Chat Completions converters: identity on canonical messages, valid pairing, refusals.

``to_chat_messages`` is ``agentlog.providers.to_chat_completions``; these tests check it as the
inverse of ``from_chat_messages`` and on the histories the adapters derive.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlog import history_problems
from agentlog.adapters.openai_agents import from_chat_messages, to_chat_messages
from agentlog.errors import ConversionError
from tests.adapters.strategies import ARGUMENTS, NAMES, TEXT, valid_history


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


SOME_TEXT = st.text(min_size=1, max_size=12)


@st.composite
def chat_history(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Canonical, valid Chat Completions messages (the forms ``to_chat_messages`` writes)."""
    history: list[dict[str, Any]] = []
    if draw(st.booleans()):
        history.append({"role": "system", "content": draw(SOME_TEXT)})
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
            content = draw(SOME_TEXT) if draw(st.booleans()) else None
            history.append({"role": "assistant", "content": content, "tool_calls": calls})
            history += [
                {"role": "tool", "tool_call_id": call["id"], "content": draw(TEXT)}
                for call in calls
            ]
        history.append({"role": "assistant", "content": draw(SOME_TEXT)})
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


def test_reasoning_goes_back_only_to_the_model_that_produced_it() -> None:
    reply = {
        "role": "assistant",
        "content": [{"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "Hi."}],
        "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-reasoner"},
    }
    assert to_chat_messages([reply]) == [{"role": "assistant", "content": "Hi."}]
    assert to_chat_messages([reply], model="deepseek-reasoner") == [
        {"role": "assistant", "content": "Hi.", "reasoning_content": "hmm"}
    ]


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
