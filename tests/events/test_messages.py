"""Message constructors: event data for the five surface types, ready to append.

Covers the format-4 message shapes of spec/core.md §2.3 and the payloads of §2.4: each
constructor builds data that passes every per-type rule, in the wire shape (camelCase keys),
with a fresh UUID id unless one is given. The constructors never share the caller's objects.
"""

from __future__ import annotations

import os
import uuid

import pytest

from agentlog import messages as m
from agentlog.events import check_event
from tests.session.support import begin, call, new_session


def test_text_reasoning_and_tool_call_blocks() -> None:
    assert m.text("hi") == {"type": "text", "text": "hi"}
    assert m.reasoning("hmm") == {"type": "reasoning", "text": "hmm"}
    assert m.tool_call("c1", "bash", '{"cmd":"ls"}') == {
        "type": "tool-call",
        "id": "c1",
        "name": "bash",
        "arguments": '{"cmd":"ls"}',
    }


def test_image_block_is_a_durable_reference() -> None:
    assert m.image("att-1", "image/png", size=10, width=2, height=3) == {
        "type": "image",
        "attachment": {
            "attachmentId": "att-1",
            "mediaType": "image/png",
            "bytes": 10,
            "width": 2,
            "height": 3,
        },
    }
    named = m.image("a", "image/jpeg", size=1, width=1, height=1, name="cat.jpg")
    assert named["attachment"]["name"] == "cat.jpg"


def test_user_message_is_the_data_itself() -> None:
    data = m.user("hello", id="u1")
    assert data == {
        "id": "u1",
        "role": "user",
        "content": [{"type": "text", "text": "hello"}],
        "source": {"kind": "user"},
    }
    check_event("user/message", data)


def test_user_message_with_blocks_and_a_producer_source() -> None:
    blocks = [m.text("see"), m.image("a", "image/png", size=1, width=1, height=1)]
    data = m.user(blocks, id="u1", source={"kind": "runtime-context"})
    assert data["content"] == blocks
    assert data["content"][0] is not blocks[0]
    assert data["source"] == {"kind": "runtime-context"}
    check_event("user/message", data)


def test_ids_default_to_fresh_uuids() -> None:
    first, second = m.user("a"), m.user("a")
    assert first["id"] != second["id"]
    assert uuid.UUID(first["id"])
    assert uuid.UUID(m.new_id())


def test_new_ids_are_random_version_4_uuids_as_uuid4_writes_them() -> None:
    ids = [m.new_id() for _ in range(1000)]  # more than one read-ahead block
    assert len(set(ids)) == len(ids)
    for value in ids:
        parsed = uuid.UUID(value)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed) == value


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_repeat_its_parents_ids() -> None:
    m.new_id()  # the parent holds read-ahead randomness now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(write, m.new_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 100).decode()
    os.close(read)
    assert uuid.UUID(child)
    assert child != m.new_id()


def test_assistant_message_carries_settlement_fields() -> None:
    data = m.assistant(
        [m.text("calling"), m.tool_call("c1", "bash", "{}")],
        provider="mock",
        model="mock-1",
        turn=2,
        step=3,
        usage={"inputTokens": 1, "outputTokens": 2},
        id="a1",
    )
    assert data == {
        "turn": 2,
        "step": 3,
        "message": {
            "id": "a1",
            "role": "assistant",
            "content": [
                {"type": "text", "text": "calling"},
                {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"},
            ],
            "source": {"kind": "model", "provider": "mock", "model": "mock-1"},
        },
        "stream": [],
        "usage": {"inputTokens": 1, "outputTokens": 2},
    }
    check_event("assistant/message", data)


def test_tool_result_is_a_role_tool_message() -> None:
    data = m.tool_result(
        "c1",
        "boom",
        turn=1,
        step=1,
        is_error=True,
        error={"name": "ToolError", "code": "X"},
        meta={"ms": 5},
        id="r1",
    )
    assert data == {
        "turn": 1,
        "step": 1,
        "message": {
            "id": "r1",
            "role": "tool",
            "toolCallId": "c1",
            "content": [{"type": "text", "text": "boom"}],
            "source": {"kind": "tool", "callId": "c1"},
            "isError": True,
        },
        "error": {"name": "ToolError", "code": "X"},
        "meta": {"ms": 5},
    }
    check_event("tool/result", data)


def test_tool_result_omits_unset_optionals() -> None:
    data = m.tool_result("c1", "ok", turn=1, step=1, id="r1")
    assert "isError" not in data["message"]
    assert "error" not in data
    assert "meta" not in data


def test_system_message_empty_prompt_means_no_content() -> None:
    data = m.system("", turn=1, step=1, id="s1")
    assert data["message"] == {
        "id": "s1",
        "role": "system",
        "content": [],
        "source": {"kind": "system-prompt"},
    }
    assert m.system("be brief", turn=1, step=1)["message"]["content"] == [m.text("be brief")]
    check_event("system/message", data)


def test_developer_message_lists_additions_then_removals() -> None:
    data = m.developer(turn=1, step=2, additions=["search"], removals=["bash"], header_seq=4)
    assert data["message"]["role"] == "developer"
    assert data["message"]["source"] == {"kind": "tool-registry"}
    assert data["message"]["content"] == [
        {"type": "tool-addition", "toolName": "search"},
        {"type": "tool-removal", "toolName": "bash"},
    ]
    assert data["headerSeq"] == 4
    check_event("developer/message", data)
    assert "headerSeq" not in m.developer(turn=1, step=1, removals=["bash"])


def test_constructed_data_appends_and_derives_in_order() -> None:
    session = new_session()
    begin(session)
    session.append("system/message", m.system("sys", turn=1, step=1), surface_op="append")
    session.append("user/message", m.user("q"), surface_op="append")
    session.append(
        "assistant/message",
        m.assistant([m.tool_call("c1", "t", "{}")], provider="p", model="x", turn=1, step=1),
        surface_op="append",
    )
    call(session, "c1")
    session.append("tool/result", m.tool_result("c1", "r", turn=1, step=1), surface_op="append")
    assert [message["role"] for message in session.derive_messages()] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]
