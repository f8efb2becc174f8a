"""Format 3 → 4: role-``tool`` results, producer-owned sources, namespacing (§5.4)."""

from __future__ import annotations

from typing import Any

import pytest

from agentlog.formats import Artifact, Refusal
from agentlog.formats.v3_to_v4 import migrate, source_kind

HEADER = {"version": 3, "id": "s1", "createdAt": 0, "isSeeded": False}
TEXT = [{"type": "text", "text": "out"}]


def log(*events: dict[str, Any]) -> Artifact:
    numbered = [{"seq": seq, "time": 100 + seq, **event} for seq, event in enumerate(events)]
    return Artifact(header=HEADER, events=numbered)


def only(event: dict[str, Any]) -> Any:
    (migrated,) = migrate(log(event)).events
    return migrated


def tool_result(block: dict[str, Any], **message: Any) -> dict[str, Any]:
    return {
        "type": "tool/result",
        "surfaceOp": "append",
        "data": {
            "turn": 1,
            "step": 1,
            "message": {
                "id": "r1",
                "role": "user",
                "source": {"kind": "tool", "callId": "c1"},
                "content": [block],
                **message,
            },
        },
    }


def test_a_tool_result_becomes_a_role_tool_message() -> None:
    block = {
        "type": "tool-result",
        "toolCallId": "c1",
        "content": TEXT,
        "isError": True,
        "exitCode": 2,
    }
    event = only(tool_result(block, pinned=True))
    assert event["data"]["message"] == {
        "id": "r1",
        "role": "tool",
        "source": {"kind": "tool", "callId": "c1"},
        "toolCallId": "c1",
        "isError": True,
        "content": TEXT,
        "plugin:result:exitCode": 2,
        "plugin:message:pinned": True,
    }
    plain = only(tool_result({"type": "tool-result", "toolCallId": "c1", "content": TEXT}))
    assert "isError" not in plain["data"]["message"]


@pytest.mark.parametrize(
    "content",
    [
        [],
        [{"type": "text", "text": "x"}],
        [{"type": "tool-result", "toolCallId": "c1", "content": []}] * 2,
    ],
)
def test_a_tool_result_without_exactly_one_wrapper_block_is_refused(content: list[Any]) -> None:
    event = tool_result({})
    event["data"]["message"]["content"] = content
    with pytest.raises(Refusal) as refused:
        migrate(log(event))
    assert str(refused.value) == (
        'session "s1" tool/result at seq 0 message must contain one tool-result block'
    )


@pytest.mark.parametrize(
    ("plugin", "role", "kind"),
    [
        ("compact", "user", "compact-checkpoint"),
        ("tools-code-mode", "user", "ptc-mode"),
        ("tools-ptc", "assistant", "ptc-mode"),
        ("dsh-compaction-basic", "user", "compact-basic"),
        ("@deepseek-ai/dsh-system-prompt", "system", "system-prompt"),
        ("@deepseek-ai/dsh-system-prompt", "user", "runtime-context"),
        ("tool-jobs", "user", "plugin:tool-jobs"),
    ],
)
def test_plugin_sources_become_producer_kinds(plugin: str, role: str, kind: str) -> None:
    assert source_kind(plugin, role) == kind


def test_message_sources_and_unknown_blocks_are_lifted() -> None:
    source = {"kind": "plugin", "plugin": "compact", "compactionId": "k1"}
    content = [{"type": "text", "text": "s"}, {"type": "chart", "data": 1}, {"type": "plugin:x"}]
    event = only(
        {
            "type": "user/message",
            "surfaceOp": "append",
            "data": {"id": "u", "role": "user", "source": source, "content": content},
        }
    )
    assert event["data"]["source"] == {"kind": "compact-checkpoint", "compactionId": "k1"}
    assert [b["type"] for b in event["data"]["content"]] == ["text", "plugin:chart", "plugin:x"]
    system = only(
        {
            "type": "system/message",
            "surfaceOp": "append",
            "data": {
                "turn": 1,
                "step": 1,
                "message": {
                    "id": "s",
                    "role": "system",
                    "source": {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"},
                    "content": [],
                },
            },
        }
    )
    assert system["data"]["message"]["source"] == {"kind": "system-prompt"}


def test_stream_block_starts_of_unknown_types_are_namespaced() -> None:
    stream = [
        {
            "type": "chunk",
            "time": 1,
            "chunk": {"type": "block-start", "index": 0, "blockType": "chart"},
        },
        {
            "type": "chunk",
            "time": 2,
            "chunk": {"type": "block-end", "index": 0, "block": {"type": "chart"}},
        },
        {
            "type": "chunk",
            "time": 3,
            "chunk": {"type": "block-start", "index": 1, "blockType": "text"},
        },
    ]
    event = only({"type": "assistant/attempt", "data": {"turn": 1, "step": 1, "stream": stream}})
    chunks = [record["chunk"] for record in event["data"]["stream"]]
    assert chunks[0]["blockType"] == "plugin:chart"
    assert chunks[1]["block"] == {"type": "plugin:chart"}
    assert chunks[2] is stream[2]["chunk"]


def test_unknown_types_are_namespaced_when_ignorable_and_refused_otherwise() -> None:
    assert only({"type": "x/future", "data": {}, "ignorable": True})["type"] == "plugin:x/future"
    assert only({"type": "plugin:y", "data": {}, "ignorable": True})["type"] == "plugin:y"
    with pytest.raises(Refusal, match=r'event type "x/future" \(seq 0\) unknown'):
        migrate(log({"type": "x/future", "data": {}}))
    with pytest.raises(Refusal, match=r'"developer/message" \(seq 0\) unknown'):
        migrate(log({"type": "developer/message", "data": {}}))


def test_deferred_tools_are_a_format_4_feature() -> None:
    header = {"config": {}, "tools": [{"name": "search", "deferLoading": True}]}
    with pytest.raises(Refusal, match='defines tool "search" with deferLoading'):
        migrate(log({"type": "request/header", "data": {"header": header, "reason": "initial"}}))


def test_a_restarted_agent_gets_its_open_turn_closed_as_interrupted() -> None:
    title = {"type": "session/title", "data": {"title": "t", "messageSeqs": [3]}}
    result = migrate(
        log(
            {"type": "turn/start", "data": {"turn": 1}},
            {"type": "agent/inbox/spliced", "data": {"target": "next-turn"}},
            {"type": "turn/start", "data": {"turn": 2}},
            {
                "type": "user/message",
                "surfaceOp": "append",
                "data": {"id": "u", "role": "user", "source": {"kind": "user"}, "content": []},
            },
            title,
        )
    )
    assert [e["type"] for e in result.events] == [
        "turn/start",
        "agent/inbox/spliced",
        "turn/end",
        "turn/start",
        "user/message",
        "session/title",
    ]
    assert result.events[2] == {
        "type": "turn/end",
        "seq": 2,
        "time": 102,
        "data": {"turn": 1, "reason": {"kind": "interrupted"}},
    }
    assert result.events[5]["data"]["messageSeqs"] == [4]
    assert result.header == {**HEADER, "version": 4}


def test_a_turn_start_inside_an_open_step_is_left_alone() -> None:
    events = migrate(
        log(
            {"type": "turn/start", "data": {"turn": 1}},
            {"type": "step/start", "data": {"turn": 1, "step": 1}},
            {"type": "turn/start", "data": {"turn": 2}},
        )
    ).events
    assert [e["type"] for e in events] == ["turn/start", "step/start", "turn/start"]
