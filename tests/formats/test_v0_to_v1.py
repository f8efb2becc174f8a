"""Format 0 → 1: legacy shapes normalised, retired ones refused (persistence §5.1, §5.4)."""

from __future__ import annotations

from typing import Any

import pytest

from agentlog.formats import Artifact, Refusal
from agentlog.formats.v0_to_v1 import migrate


def log(*events: dict[str, Any]) -> Artifact:
    numbered = [{"seq": seq, "time": 10, **event} for seq, event in enumerate(events)]
    return Artifact(header={"version": 0, "id": "s1", "createdAt": 0}, events=numbered)


def migrated(*events: dict[str, Any]) -> list[Any]:
    result = migrate(log(*events))
    assert result.version == 1
    return [{k: v for k, v in e.items() if k not in ("seq", "time")} for e in result.events]


TEXT = [{"type": "text", "text": "hi"}]


def test_the_header_changes_only_its_version() -> None:
    source = log({"type": "turn/start", "data": {"turn": 1}})
    result = migrate(source)
    assert result.header == {"version": 1, "id": "s1", "createdAt": 0}
    assert result.events[0] is source.events[0]  # untouched events are passed on as they are


def test_pre_identity_messages_get_legacy_ids() -> None:
    user, assistant, result = migrated(
        {
            "type": "user/message",
            "surfaceOp": "append",
            "data": {"content": TEXT, "source": {"kind": "user"}},
        },
        {
            "type": "assistant/message",
            "surfaceOp": "append",
            "data": {
                "turn": 1,
                "step": 1,
                "content": TEXT,
                "provenance": {"provider": "p", "model": "m"},
                "usage": {"inputTokens": 1},
            },
        },
        {
            "type": "tool/result",
            "surfaceOp": "append",
            "sourceEventSeqs": [1],
            "data": {"turn": 1, "step": 1, "callId": "c1", "content": TEXT, "isError": False},
        },
    )
    assert user["data"] == {
        "content": TEXT,
        "source": {"kind": "user"},
        "id": "legacy-message:s1:0",
        "role": "user",
    }
    assert assistant["data"] == {
        "turn": 1,
        "step": 1,
        "usage": {"inputTokens": 1},
        "message": {
            "id": "legacy-message:s1:1",
            "role": "assistant",
            "content": TEXT,
            "source": {"provider": "p", "model": "m", "kind": "model"},
        },
    }
    assert result == {
        "type": "tool/result",
        "surfaceOp": "append",
        "sourceEventSeqs": [1],
        "data": {
            "turn": 1,
            "step": 1,
            "message": {
                "id": "legacy-message:s1:2",
                "role": "user",
                "content": [
                    {"type": "tool-result", "toolCallId": "c1", "content": TEXT, "isError": False}
                ],
                "source": {"kind": "tool", "callId": "c1"},
            },
        },
    }


def test_a_replacing_legacy_tool_result_keeps_the_id_of_the_result_it_replaces() -> None:
    result = {"turn": 1, "step": 1, "callId": "c1", "content": TEXT}
    *_, pruned = migrated(
        {"type": "tool/result", "surfaceOp": "append", "data": {**result, "id": "r1"}},
        {"type": "tool/result", "surfaceOp": "append", "data": result},
        {
            "type": "tool/result",
            "surfaceOp": {"op": "replace", "start": 1, "end": 1},
            "sourceEventSeqs": [1],
            "data": {**result, "content": [{"type": "text", "text": "[pruned]"}]},
        },
    )
    assert pruned["data"]["message"]["id"] == "legacy-message:s1:1"


def test_identified_messages_are_left_to_validation() -> None:
    # A message with a role but no id is malformed, not legacy: validation names it later.
    event = {
        "type": "user/message",
        "surfaceOp": "append",
        "data": {"role": "user", "content": TEXT},
    }
    assert migrated(event) == [event]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {
                "turn": 1,
                "message": {
                    "id": "st",
                    "role": "user",
                    "source": {"kind": "user"},
                    "content": TEXT,
                },
            },
            {"id": "st", "role": "user", "source": {"kind": "user"}, "content": TEXT},
        ),
        (
            {"turn": 1, "content": TEXT, "source": {"kind": "user"}},
            {
                "content": TEXT,
                "source": {"kind": "user"},
                "id": "legacy-message:s1:0",
                "role": "user",
            },
        ),
        (
            {"turn": 1, "message": {"content": TEXT}},
            {"content": TEXT, "id": "legacy-message:s1:0", "role": "user"},
        ),
    ],
    ids=["wrapped", "flat", "wrapped-pre-identity"],
)
def test_steering_messages_become_user_messages(data: dict[str, Any], message: Any) -> None:
    (event,) = migrated({"type": "steering/message", "surfaceOp": "append", "data": data})
    assert event == {"type": "user/message", "surfaceOp": "append", "data": message}


@pytest.mark.parametrize(
    ("reason", "mapped"),
    [
        ({"kind": "completed"}, {"kind": "completed"}),
        ({"kind": "aborted"}, {"kind": "aborted", "reason": {"kind": "legacy"}}),
        (
            {"kind": "aborted", "reason": {"kind": "user"}},
            {"kind": "aborted", "reason": {"kind": "user"}},
        ),
        ({"kind": "disposed"}, {"kind": "aborted", "reason": {"kind": "disposed"}}),
        (
            {"kind": "error", "step": 1, "message": "boom"},
            {"kind": "error", "error": {"message": "boom", "code": "UNKNOWN"}},
        ),
        (
            {"kind": "error", "message": "boom", "code": "E"},
            {"kind": "error", "error": {"message": "boom", "code": "E"}},
        ),
        (
            {
                "kind": "error",
                "step": 2,
                "failure": {"message": "x", "code": "RATE_LIMIT", "status": 429},
            },
            {"kind": "error", "error": {"message": "x", "code": "RATE_LIMIT", "status": 429}},
        ),
        (
            {"kind": "error", "error": {"message": "x", "code": "Y"}},
            {"kind": "error", "error": {"message": "x", "code": "Y"}},
        ),
        ({"kind": "max-tokens"}, {"kind": "max-tokens"}),
        ({"kind": "x-extension", "detail": 1}, {"kind": "x-extension", "detail": 1}),
    ],
)
def test_retired_turn_end_reasons_are_mapped(reason: Any, mapped: Any) -> None:
    (event,) = migrated({"type": "turn/end", "data": {"turn": 1, "reason": reason}})
    assert event["data"] == {"turn": 1, "reason": mapped}


def test_turn_start_triggers_are_dropped_and_message_prefixes_too() -> None:
    start, header = migrated(
        {"type": "turn/start", "data": {"turn": 2, "trigger": {"kind": "message", "source": {}}}},
        {
            "type": "request/header",
            "data": {"header": {"config": {}, "messagePrefix": ["x"]}, "reason": "initial"},
        },
    )
    assert start["data"] == {"turn": 2}
    assert header["data"] == {"header": {"config": {}}, "reason": "initial"}


def test_compact_events_are_named_compaction() -> None:
    (event,) = migrated({"type": "compact/start", "data": {"turn": 1}})
    assert event["type"] == "compaction/start"


@pytest.mark.parametrize(
    ("event", "what"),
    [
        (
            {"type": "request/header-delta", "data": {}},
            "unsupported legacy request/header-delta event",
        ),
        ({"type": "mode/set", "data": {"mode": "plan"}}, "unsupported legacy mode/set event"),
        (
            {"type": "request/header", "data": {"header": {}, "reason": "fallback"}},
            'unsupported legacy request/header reason "fallback"',
        ),
        (
            {"type": "turn/start", "data": {"turn": 0, "trigger": {"kind": "user"}}},
            "malformed pre-react-loop turn/start",
        ),
        (
            {"type": "turn/start", "data": {"turn": 1, "trigger": {"kind": ""}}},
            "malformed pre-react-loop turn/start",
        ),
        (
            {"type": "turn/start", "data": {"turn": 1, "trigger": {"kind": "user"}, "x": 1}},
            "malformed pre-react-loop turn/start",
        ),
        (
            {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed", "extra": 1}}},
            "malformed pre-react-loop turn/end",
        ),
        (
            {"type": "turn/end", "data": {"error": "model exploded"}},
            "malformed pre-react-loop turn/end",
        ),
        (
            {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error"}}},
            "malformed pre-react-loop turn/end",
        ),
        (
            {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "aborted", "x": 1}}},
            "malformed pre-react-loop turn/end",
        ),
        (
            {"type": "steering/message", "data": {"content": TEXT}},
            "malformed pre-react-loop steering/message",
        ),
        (
            {"type": "steering/message", "data": {"turn": 1, "message": "hi"}},
            "malformed pre-react-loop steering/message",
        ),
    ],
)
def test_retired_and_malformed_legacy_shapes_are_refused(event: dict[str, Any], what: str) -> None:
    with pytest.raises(Refusal) as refused:
        migrate(log({"type": "turn/start", "data": {"turn": 1}}, event))
    assert str(refused.value) == f'session "s1" contains {what} at seq 1'


def test_types_unknown_to_format_1_must_be_ignorable() -> None:
    future = {"type": "x/future", "data": {}, "ignorable": True}
    assert migrated(future) == [future]
    with pytest.raises(Refusal, match=r'event type "x/future" \(seq 0\) unknown to this harness'):
        migrate(log({"type": "x/future", "data": {}}))
