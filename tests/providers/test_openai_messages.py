"""to_chat_completions: derived messages → Chat Completions messages, as a pure function."""

from __future__ import annotations

from typing import Any

import pytest

import agentlog
from agentlog import Session
from agentlog import messages as m
from agentlog.plugins.tokens import offloaded_image_text
from agentlog.providers import to_chat_completions
from tests.providers.fake_openai import validate_chat_request

MODEL = "deepseek-reasoner"


def assistant(*blocks: dict[str, Any], model: str = MODEL, **source: Any) -> dict[str, Any]:
    message: dict[str, Any] = m.assistant(
        list(blocks), provider="deepseek", model=model, turn=1, step=1, id="a"
    )["message"]
    message["source"].update(source)
    return message


def test_a_user_text_is_a_string_and_several_blocks_are_text_parts() -> None:
    picture = m.image("att-1", "image/png", size=10, width=2, height=2, name="cat.png")
    assert to_chat_completions([m.user("hi", id="u")]) == [{"role": "user", "content": "hi"}]
    assert to_chat_completions([m.user([m.text("look:"), picture], id="u")]) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look:"},
                {"type": "text", "text": "[image cat.png (image/png)]"},
            ],
        }
    ]


def test_an_offloaded_image_is_sent_as_its_placeholder() -> None:
    """spec/plugins.md §3: after image/offload, every request carries the placeholder."""
    session = Session.create("s", projections=(agentlog.IMAGE_OFFLOAD,), clock=lambda: 0)
    picture = m.image("att-9", "image/jpeg", size=10, width=2, height=2, name="scan.jpg")
    user = session.append("user/message", m.user([m.text("see"), picture]), surface_op="append")
    session.append("image/offload", {"targets": [{"seq": user.seq, "imageIndexes": [0]}]})
    (message,) = to_chat_completions(session.derive_messages())
    placeholder = offloaded_image_text(session.derive_messages()[0]["content"][1])
    assert message["content"][1] == {"type": "text", "text": placeholder}
    assert "scan.jpg" in placeholder


def test_system_and_developer_messages_are_system_messages() -> None:
    developer = m.developer(turn=1, step=1, additions=["grep"], removals=["ls"], header_seq=0)
    wire = to_chat_completions(
        [
            m.system("Be brief.", turn=1, step=1)["message"],
            m.system("", turn=1, step=1)["message"],  # no system prompt: nothing sent
            developer["message"],
        ]
    )
    assert wire == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "system",
            "content": "Tools now available: grep. Tools no longer available: ls.",
        },
    ]


def test_an_assistant_reply_carries_its_text_and_tool_calls() -> None:
    reply = assistant(
        m.text("Let me look."), m.tool_call("c1", "ls", '{"path": "."}'), m.text("And grep.")
    )
    assert to_chat_completions([reply]) == [
        {
            "role": "assistant",
            "content": "Let me look.\n\nAnd grep.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "ls", "arguments": '{"path": "."}'},
                }
            ],
        }
    ]
    (only_calls,) = to_chat_completions([assistant(m.tool_call("c1", "ls", "{}"))])
    assert only_calls["content"] is None


def test_reasoning_goes_back_to_the_model_that_produced_it_only() -> None:
    """spec/plugins.md §5.5 (DeepSeek chat): reasoning text re-sent as reasoning_content."""
    reply = assistant(m.reasoning("Think."), m.text("Answer."))
    assert to_chat_completions([reply], model=MODEL)[0]["reasoning_content"] == "Think."
    assert "reasoning_content" not in to_chat_completions([reply], model="deepseek-chat")[0]
    assert "reasoning_content" not in to_chat_completions([reply])[0]


def test_another_providers_replay_state_is_ignored() -> None:
    plain = assistant(m.text("Hi."))
    enveloped = assistant(
        m.text("Hi."), replayState={"response": {"kind": "anthropic-messages"}, "blocks": [{}]}
    )
    assert to_chat_completions([enveloped], model=MODEL) == to_chat_completions(
        [plain], model=MODEL
    )


def test_a_tool_result_answers_its_call_and_an_error_says_so() -> None:
    ok = m.tool_result("c1", "42", turn=1, step=1)["message"]
    failed = m.tool_result("c2", "no such file", turn=1, step=1, is_error=True)["message"]
    assert to_chat_completions([ok, failed]) == [
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: no such file"},
    ]


def test_a_loop_shaped_history_converts_to_a_valid_request() -> None:
    history = [
        m.system("Be brief.", turn=1, step=1)["message"],
        m.user("Files?", id="u1"),
        assistant(
            m.reasoning("ls it"), m.tool_call("c1", "ls", "{}"), m.tool_call("c2", "pwd", "")
        ),
        m.tool_result("c1", "README.md", turn=1, step=1)["message"],
        m.tool_result("c2", "boom", turn=1, step=1, is_error=True)["message"],
        assistant(m.text("One file.")),
        m.user("Thanks", id="u2"),
    ]
    wire = to_chat_completions(history, model=MODEL)
    assert validate_chat_request({"model": MODEL, "messages": wire}) == []
    assert [w["role"] for w in wire] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
    ]


def test_frozen_derived_messages_become_new_plain_values() -> None:
    session = Session.create("s", clock=lambda: 0)
    session.append("user/message", m.user("hi"), surface_op="append")
    derived = session.derive_messages()
    wire = to_chat_completions(derived)
    wire[0]["content"] = "changed"  # ours to change: nothing of the session is shared
    assert derived[0]["content"] == [{"type": "text", "text": "hi"}]


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ([{"role": "wizard", "content": []}], r"messages\[0\] has an unknown role 'wizard'"),
        ([{"role": "user"}], r"messages\[0\] needs a string role and a content list"),
        (["hello"], r"messages\[0\] is not a message object"),
    ],
)
def test_a_malformed_message_is_refused_by_position(messages: list[Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        to_chat_completions(messages)
