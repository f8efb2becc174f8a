"""Format 2 → 3: the system prompt joins the surface; PTC names; canonical shapes (§5.4)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from agentlog.formats import Artifact, Refusal
from agentlog.formats.v2_to_v3 import migrate

HEADER = {"version": 2, "id": "s1", "createdAt": 0, "isSeeded": False}
CONFIG = {"provider": "p", "model": "m"}
PLUGIN = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}


def log(*events: dict[str, Any], header: dict[str, Any] = HEADER) -> Artifact:
    numbered = [{"seq": seq, "time": 100 + seq, **event} for seq, event in enumerate(events)]
    return Artifact(header=header, events=numbered)


def user(message_id: str, **envelope: Any) -> dict[str, Any]:
    data = {"id": message_id, "role": "user", "content": [], "source": {"kind": "user"}}
    return {"type": "user/message", "surfaceOp": "append", "data": data, **envelope}


def request(system: str | None, **header: Any) -> dict[str, Any]:
    fields = {"config": CONFIG, **header, **({} if system is None else {"system": system})}
    return {"type": "request/header", "data": {"header": fields, "reason": "initial"}}


STEP_START = {"type": "step/start", "data": {"turn": 1, "step": 1}}
STEP_END = {"type": "step/end", "data": {"turn": 1, "step": 1}}


def system_id(anchor_seq: int, anchor_type: str) -> str:
    key = json.dumps(
        ["session-format-v2-to-v3", "s1", anchor_seq, anchor_type], separators=(",", ":")
    )
    return "v2-to-v3-system-" + hashlib.sha256(key.encode()).hexdigest()


def test_the_prompt_becomes_a_head_node_replaced_when_it_changes() -> None:
    result = migrate(
        log(
            user("u1"),
            STEP_START,
            request("be brief"),
            request("be brief"),
            STEP_END,
            STEP_START,
            request(None),
        )
    )
    assert result.header == {**HEADER, "version": 3}
    assert [e["type"] for e in result.events] == [
        "user/message",
        "step/start",
        "system/message",
        "system/message",
        "request/header",
        "request/header",
        "step/end",
        "step/start",
        "system/message",
        "request/header",
    ]
    head, changed, emptied = (result.events[i] for i in (2, 3, 8))
    assert head == {
        "type": "system/message",
        "seq": 2,
        "time": 101,  # its anchor's: the step/start
        "surfaceOp": "append",
        "data": {
            "turn": 1,
            "step": 1,
            "message": {
                "id": system_id(1, "step/start"),
                "role": "system",
                "content": [],
                "source": PLUGIN,
            },
        },
    }
    assert changed["surfaceOp"] == {"op": "replace", "startSeq": 2, "endSeq": 2}
    assert changed["sourceEventSeqs"] == [2]
    assert changed["time"] == 102
    assert changed["data"]["message"]["id"] == system_id(2, "request/header")
    assert changed["data"]["message"]["content"] == [{"type": "text", "text": "be brief"}]
    # an absent prompt is the empty one: a change back to no prompt
    assert emptied["surfaceOp"] == {"op": "replace", "startSeq": 3, "endSeq": 3}
    assert emptied["data"]["message"]["content"] == []
    assert all(
        "system" not in e["data"]["header"] for e in result.events if e["type"] == "request/header"
    )


def test_references_follow_the_inserted_messages() -> None:
    replace = user("u2", surfaceOp={"op": "replace", "start": 3, "end": 3}, sourceEventSeqs=[3])
    result = migrate(log(STEP_START, request("x"), user("u1"), user("u9"), replace))
    assert result.events[-1]["surfaceOp"] == {"op": "replace", "startSeq": 5, "endSeq": 5}
    assert result.events[-1]["sourceEventSeqs"] == [5]


def test_a_replace_over_the_prompt_cites_it_and_the_prompt_is_appended_again() -> None:
    summary = user("sum", surfaceOp={"op": "replace", "start": 0, "end": 3}, sourceEventSeqs=[0, 3])
    result = migrate(log(user("u1"), STEP_START, request("p"), user("u2"), summary))
    types = [e["type"] for e in result.events]
    assert types == [
        "user/message",
        "step/start",
        "system/message",
        "system/message",
        "request/header",
        "user/message",
        "user/message",
        "system/message",
    ]
    assert result.events[6]["sourceEventSeqs"] == [0, 5, 3]  # the system node it shadows, cited
    again = result.events[7]
    assert again["surfaceOp"] == "append"
    assert again["data"]["message"]["content"] == [{"type": "text", "text": "p"}]


def test_a_prompt_change_outside_a_step_is_refused() -> None:
    with pytest.raises(Refusal) as refused:
        migrate(log(request("x")))
    assert str(refused.value) == (
        'session "s1" request/header at seq 0 changes the system prompt outside an open step'
    )
    migrate(log(request("")))  # no change: fine


def test_a_header_naming_no_model_changes_nothing_and_is_left_to_validation() -> None:
    bad = {"type": "request/header", "data": {"header": {"system": "x"}, "reason": "initial"}}
    (event,) = migrate(log(bad)).events
    assert event["data"] == {"header": {}, "reason": "initial"}


def test_canonical_shapes_and_ptc_names() -> None:
    code = {"kind": "plugin", "plugin": "tools-code-mode"}
    result = migrate(
        log(
            STEP_START,
            request("", tools=[], adapterDefaults={}),
            request("", tools=[{"name": "t"}], adapterDefaults={"maxTokens": True}),
            {"type": "tool/code-dispatch-start", "data": {"name": "bash"}},
            {"type": "tool/code-dispatch", "data": {"name": "bash"}},
            {"type": "agent-preset/selected", "data": {"preset": "code"}},
            {**user("u1"), "data": {**user("u1")["data"], "source": code}},
            header={**HEADER, "agentPreset": "code"},
        )
    )
    assert result.header["agentPreset"] == "ptc"
    _, _, first, second, start, dispatch, preset, message = result.events
    assert first["data"]["header"] == {"config": CONFIG}
    assert second["data"]["header"] == {
        "config": CONFIG,
        "tools": [{"name": "t"}],
        "adapterDefaults": {"maxTokens": True},
    }
    assert (start["type"], dispatch["type"]) == ("tool/ptc-dispatch-start", "tool/ptc-dispatch")
    assert preset["data"] == {"preset": "ptc"}
    assert message["data"]["source"] == {"kind": "plugin", "plugin": "tools-ptc"}


def test_an_id_collision_is_refused() -> None:
    taken = user(system_id(0, "step/start"))
    with pytest.raises(Refusal, match="already holds a message with id"):
        migrate(log(STEP_START, taken))
