"""The Pydantic AI converters: identity, content kept without the carried original, validity."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import (
    BinaryContent,
    CompactionPart,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from agentlog import history_problems
from agentlog.adapters.pydantic_ai import from_model_messages, to_model_messages
from agentlog.errors import ConversionError
from tests.adapters.strategies import NAMES, TEXT, valid_history
from tests.adapters.test_pydantic_ai import pairing_problems

TIMES = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(
    lambda t: t.replace(tzinfo=UTC)
)
ARGS = st.sampled_from([{"a": 1}, {}, '{"path": "x"}', None])


@st.composite
def history(draw: st.DrawFn) -> list[ModelMessage]:
    """A valid Pydantic AI history: each response's calls answered by the next request."""
    messages: list[ModelMessage] = []
    parts: list[Any] = []
    if draw(st.booleans()):
        parts.append(SystemPromptPart(draw(TEXT), timestamp=draw(TIMES)))
    counter = 0
    for _ in range(draw(st.integers(1, 3))):
        content = draw(TEXT | st.lists(TEXT, min_size=2, max_size=3))
        parts.append(UserPromptPart(content, timestamp=draw(TIMES)))
        if draw(st.booleans()):
            parts.append(CompactionPart(content=draw(TEXT)))
        messages.append(ModelRequest(parts=parts, timestamp=draw(TIMES)))
        for _ in range(draw(st.integers(0, 2))):
            response: list[Any] = []
            if draw(st.booleans()):
                signature = draw(st.none() | TEXT)
                response.append(ThinkingPart(draw(TEXT), signature=signature))
            if draw(st.booleans()):
                response.append(TextPart(draw(TEXT)))
            calls = []
            for _ in range(draw(st.integers(0, 2))):
                counter += 1
                call = ToolCallPart(draw(NAMES), draw(ARGS), tool_call_id=f"c{counter}")
                calls.append(call)
                response.append(call)
            messages.append(ModelResponse(parts=response, model_name="m", timestamp=draw(TIMES)))
            if not calls:
                break
            parts = []
            for call in calls:
                outcome: Any = draw(st.sampled_from(["success", "failed", "denied", "retried"]))
                # A value that is not text comes back as its text (see the module docstring).
                value = draw(TEXT | st.integers()) if outcome == "success" else draw(TEXT)
                parts.append(
                    ToolReturnPart(
                        call.tool_name,
                        value,
                        tool_call_id=call.tool_call_id,
                        outcome=outcome,
                        timestamp=draw(TIMES),
                    )
                )
            if draw(st.booleans()):
                cause: Any = draw(st.sampled_from(["model_retry", "validation_error"]))
                parts.append(RetryFeedbackPart(draw(TEXT), retry=RetryInfo(cause=cause)))
            messages.append(ModelRequest(parts=parts, timestamp=draw(TIMES)))
        parts = []
        messages.append(ModelResponse(parts=[TextPart(draw(TEXT))], timestamp=draw(TIMES)))
    return messages


def _signature(messages: list[ModelMessage]) -> list[Any]:
    """What the model is shown, part by part, without timestamps or provider metadata."""
    shown: list[Any] = []
    for message in messages:
        parts: list[Any] = list(message.parts)
        for part in parts:
            kind = part.part_kind
            if kind == "tool-call":
                shown.append((kind, part.tool_name, part.args_as_json_str(), part.tool_call_id))
            elif kind == "tool-return":
                shown.append((kind, part.tool_name, part.model_response_str(), part.outcome))
            elif kind == "thinking":
                shown.append((kind, part.content, part.signature))
            elif kind == "retry-feedback":
                shown.append(("user-prompt", part.model_response()))
            else:
                content = part.content
                shown.append((kind, "".join(content) if isinstance(content, list) else content))
    return shown


@given(history())
def test_messages_survive_the_round_trip_exactly(messages: list[ModelMessage]) -> None:
    assert to_model_messages(from_model_messages(messages)) == messages


@given(history())
def test_without_the_originals_the_model_is_shown_the_same(messages: list[ModelMessage]) -> None:
    converted = [
        {key: value for key, value in m.items() if key != "pydanticAi"}
        for m in from_model_messages(messages)
    ]
    rebuilt = to_model_messages(converted)
    assert _signature(rebuilt) == _signature(messages)
    assert pairing_problems(rebuilt) == []


@given(history())
def test_converted_messages_derive_a_provider_valid_history(messages: list[ModelMessage]) -> None:
    assert history_problems(from_model_messages(messages)) == []


@given(valid_history())
def test_a_valid_agentlog_history_converts_to_a_valid_pydantic_history(
    history: list[dict[str, Any]],
) -> None:
    converted = to_model_messages(history)
    assert pairing_problems(converted) == []
    ids = [p.tool_call_id for m in converted for p in m.parts if p.part_kind == "tool-call"]
    assert ids == [b["id"] for m in history for b in m["content"] if b["type"] == "tool-call"]


def test_an_edited_message_is_rebuilt_from_its_content() -> None:
    request = ModelRequest(parts=[UserPromptPart("original")])
    converted = from_model_messages([request])
    converted[0]["content"] = [{"type": "text", "text": "edited"}]
    [rebuilt] = to_model_messages(converted)
    assert rebuilt.parts[0].content == "edited"


@pytest.mark.parametrize(
    ("message", "text"),
    [
        (
            ModelRequest(parts=[UserPromptPart(["look", ImageUrl("https://x/y.png")])]),
            "message 0 part 0 content item 1 ('image-url') has no agentlog form",
        ),
        (
            ModelResponse(parts=[FilePart(BinaryContent(b"x", media_type="image/png"))]),
            "message 0 part 0 ('file') has no agentlog form",
        ),
    ],
)
def test_parts_with_no_agentlog_form_are_refused_by_name(message: ModelMessage, text: str) -> None:
    with pytest.raises(ConversionError) as caught:
        from_model_messages([message])
    assert str(caught.value) == text


def test_a_tool_result_whose_call_is_unknown_is_refused() -> None:
    orphan = {"id": "t", "role": "tool", "toolCallId": "c9", "content": [], "source": {}}
    with pytest.raises(ConversionError, match="answers call 'c9', whose tool name is unknown"):
        to_model_messages([orphan])
