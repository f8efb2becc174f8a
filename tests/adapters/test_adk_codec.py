"""ADK events as agentlog data: carried exactly, message text stored once, classified."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.genai import types

from agentlog.adapters._adk_codec import (
    blocks,
    classify,
    decode,
    event_payload,
    restore,
    strip,
    summary_text,
)


def _event(*parts: types.Part, role: str = "model", **fields: Any) -> Event:
    return Event(
        invocation_id="i",
        author="helper",
        content=types.Content(role=role, parts=list(parts)),
        **fields,
    )


def _call(call_id: str | None, name: str = "f", **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def _response(call_id: str, **response: Any) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name="f", response=response)
    )


def test_a_payload_leaves_out_defaults_and_reads_back_equal() -> None:
    event = _event(types.Part(text="hi"))
    payload = event_payload(event)
    assert "actions" not in payload
    assert "node_info" not in payload
    assert Event.model_validate_json(orjson.dumps(payload)) == event


def test_bytes_read_back_exactly() -> None:
    event = _event(types.Part(inline_data=types.Blob(mime_type="a/b", data=bytes(range(256)))))
    assert Event.model_validate_json(orjson.dumps(event_payload(event))) == event


@pytest.mark.parametrize(
    ("event", "kind"),
    [
        (_event(types.Part(text="hi"), role="user"), "user"),
        (_event(types.Part(text="hello")), "model"),
        (_event(types.Part(text="look"), _call("c1"), _call("c2")), "model"),
        (_event(_call("c1"), _call("c1")), "other"),  # a repeated call id
        (_event(_call(None)), "other"),  # a call without an id cannot be answered
        (_event(_response("c1", ok=1), role="user"), "responses"),
        (_event(_response("c1"), types.Part(text="and"), role="user"), "other"),
        (Event(invocation_id="i", actions=EventActions(state_delta={"a": 1})), "other"),
    ],
)
def test_classify(event: Event, kind: str) -> None:
    assert classify(event_payload(event)) == kind


def test_blocks_name_each_part() -> None:
    event = _event(
        types.Part(text="why", thought=True),
        types.Part(text="because"),
        _call("c1", x=1),
        types.Part(file_data=types.FileData(file_uri="gs://f", mime_type="text/plain")),
    )
    assert blocks(event_payload(event)) == [
        {"type": "reasoning", "text": "why"},
        {"type": "text", "text": "because"},
        {"type": "tool-call", "id": "c1", "name": "f", "arguments": '{"x":1}'},
        {"type": "text", "text": "[file_data]"},
    ]


def test_message_text_is_stored_once_and_restored_exactly() -> None:
    event = _event(types.Part(text="because"), _call("c1", x=1.5, y=[1, {"z": None}]))
    payload = event_payload(event)
    content = blocks(payload)
    stored, manifest = strip(payload, [(i, 0, i, block) for i, block in enumerate(content)])
    assert manifest == [[0, "text", 0, 0], [1, "args", 0, 1]]
    assert stored["content"]["parts"] == [{}, {"function_call": {"id": "c1", "name": "f"}}]
    data = {"adk": stored, "adkStripped": manifest}
    assert decode(data, lambda offset, index: content[index]) == event
    assert stored["content"]["parts"][0] == {}, "restoring a copy leaves the stored dump alone"


def test_a_response_is_restored_from_its_tool_result_text() -> None:
    event = _event(_response("c1", result="ok", n=2), role="user")
    payload = event_payload(event)
    block = {"type": "text", "text": orjson.dumps({"result": "ok", "n": 2}).decode()}
    stored, manifest = strip(payload, [(0, 0, 0, block)])
    assert manifest == [[0, "response", 0, 0]]
    assert restore(stored, manifest, lambda offset, index: block) == payload


def test_a_block_that_would_not_rebuild_the_field_is_not_used() -> None:
    payload = event_payload(_event(types.Part(text="original")))
    stored, manifest = strip(payload, [(0, 0, 0, {"type": "text", "text": "edited"})])
    assert manifest == []
    assert stored == payload


def test_the_summary_of_a_compaction() -> None:
    summary = types.Content(role="model", parts=[types.Part(text="short")])
    compaction = EventCompaction(start_timestamp=1.0, end_timestamp=2.0, compacted_content=summary)
    event = Event(author="user", actions=EventActions(compaction=compaction))
    assert summary_text(event_payload(event)) == "short"


class _Opaque:
    """Not JSON: ADK stores its repr, as its own services do."""

    def __repr__(self) -> str:
        return "<opaque>"


def test_a_value_json_cannot_hold_is_stored_as_json_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    event = Event(invocation_id="i", actions=EventActions(state_delta={"thing": _Opaque()}))
    with caplog.at_level("WARNING", logger="agentlog.adapters.adk"):
        payload = event_payload(event)
    assert "cannot represent" in caplog.text
    restored = Event.model_validate_json(orjson.dumps(payload))
    assert restored.actions.state_delta == {"thing": "<opaque>"}
