"""ADK events rebuilt from their dumps without validation: equal to validating, or validated."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st

from agentlog.adapters._adk_build import build
from agentlog.adapters._adk_codec import event_payload
from agentlog.values import snapshot as freeze

_TEXT = st.text(max_size=20)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_PART = st.one_of(
    st.builds(
        lambda text, thought: types.Part(text=text, thought=thought),
        _TEXT,
        st.none() | st.booleans(),
    ),
    st.builds(
        lambda name, args: types.Part(
            function_call=types.FunctionCall(id="c1", name=name, args=args)
        ),
        _TEXT,
        st.dictionaries(_TEXT, _JSON, max_size=3),
    ),
    st.builds(
        lambda response: types.Part(
            function_response=types.FunctionResponse(id="c1", name="f", response=response)
        ),
        st.dictionaries(_TEXT, _JSON, max_size=3),
    ),
)


@st.composite
def _events(draw: st.DrawFn) -> Event:
    fields: dict[str, Any] = {
        "invocation_id": draw(_TEXT),
        "author": draw(st.sampled_from(["user", "helper"])),
        "timestamp": draw(st.floats(0, 2e9) | st.integers(0, 2**31).map(float)),
    }
    if draw(st.booleans()):
        fields["content"] = types.Content(
            role=draw(st.sampled_from(["user", "model"])), parts=draw(st.lists(_PART, max_size=3))
        )
    if draw(st.booleans()):
        fields["actions"] = EventActions(
            state_delta=draw(st.dictionaries(_TEXT, _JSON, max_size=3)),
            skip_summarization=draw(st.none() | st.booleans()),
        )
    if draw(st.booleans()):
        fields["branch"] = draw(_TEXT)
    if draw(st.booleans()):
        fields["long_running_tool_ids"] = draw(st.sets(_TEXT, max_size=3))
    if draw(st.booleans()):  # shapes the trusted rebuild leaves to validation
        fields["error_code"] = "E"
        fields["usage_metadata"] = types.GenerateContentResponseUsageMetadata(prompt_token_count=3)
    return Event(**fields)


def _same(built: Event, validated: Event) -> None:
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_dump_json(exclude_unset=True) == validated.model_dump_json(
        exclude_unset=True
    )


@given(_events())
def test_a_rebuilt_event_equals_the_validated_dump(event: Event) -> None:
    payload = event_payload(event)
    stored = freeze(payload)  # as an agentlog event's data holds it
    validated = Event.model_validate_json(orjson.dumps(payload))
    _same(build(stored), validated)
    assert validated == event


def test_the_common_shapes_are_not_validated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    event = Event(
        invocation_id="i",
        author="helper",
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="calling"),
                types.Part(function_call=types.FunctionCall(id="c", name="f", args={"a": [1]})),
            ],
        ),
        actions=EventActions(state_delta={"k": {"v": 1}}),
    )
    plain = event_payload(event)
    payload = freeze(plain)

    def refuse(*_: Any, **__: Any) -> Event:
        raise AssertionError("validated")

    monkeypatch.setattr(Event, "model_validate_json", refuse)
    built = build(payload)
    assert built == event
    assert build(plain) == event  # plain JSON too (a restored, stripped dump)
    assert isinstance(built.content.parts[1].function_call.args["a"], list)  # type: ignore[index, union-attr]


def test_other_shapes_are_validated() -> None:
    event = Event(
        author="helper",
        content=types.Content(
            role="user",
            parts=[types.Part(inline_data=types.Blob(data=b"\x00\xff", mime_type="x/y"))],
        ),
        finish_reason=types.FinishReason.STOP,
    )
    built = build(freeze(event_payload(event)))
    assert built == event
    assert built.content.parts[0].inline_data.data == b"\x00\xff"  # type: ignore[index, union-attr]
    assert built.finish_reason is types.FinishReason.STOP


def test_a_model_made_with_no_arguments_equals_the_validated_default() -> None:
    from google.adk.events.event import NodeInfo

    from agentlog.adapters._adk_build import _shape
    from agentlog.values._construct import construct

    for cls in (EventActions, NodeInfo):
        shape = _shape(cls, {})
        built, validated = construct(shape, {}), cls()
        assert built == validated
        assert list(built.__dict__) == list(validated.__dict__)
        assert built.model_fields_set == validated.model_fields_set == set()
    actions, again = (
        construct(_shape(EventActions, {}), {}),
        construct(_shape(EventActions, {}), {}),
    )
    actions.state_delta["k"] = 1
    assert again.state_delta == {}, "each instance gets its own mutable defaults"
