"""to_anthropic: derived messages → an Anthropic request's system and messages, purely."""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import messages as m
from agentlog.providers import to_anthropic
from tests.providers.fake_anthropic import validate_messages_request

MODEL = "claude-test"


def envelope(*blocks: dict[str, Any], model: str = MODEL, kind: str = "anthropic-messages") -> Any:
    return {"response": {"kind": kind, "version": 1, "model": model}, "blocks": list(blocks)}


def assistant(*blocks: dict[str, Any], model: str = MODEL, state: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = m.assistant(
        list(blocks), provider="anthropic", model=model, turn=1, step=1, id="a"
    )["message"]
    if state is not None:
        message["source"]["replayState"] = state
    return message


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_the_leading_system_prompt_is_the_system_field() -> None:
    request = to_anthropic([m.system("Be brief.", turn=1, step=1)["message"], m.user("hi")])
    assert request == {
        "system": "Be brief.",
        "messages": [{"role": "user", "content": [text("hi")]}],
    }
    assert to_anthropic([m.user("hi")])["system"] is None


def test_a_later_system_or_developer_message_is_user_text_in_place() -> None:
    request = to_anthropic(
        [
            m.user("hi"),
            assistant(m.text("Hello.")),
            m.system("Now be verbose.", turn=2, step=1)["message"],
            m.developer(turn=2, step=1, additions=["grep"], header_seq=0)["message"],
            m.user("go on"),
        ]
    )
    assert request["system"] is None
    assert request["messages"][2] == {
        "role": "user",
        "content": [text("Now be verbose."), text("Tools now available: grep."), text("go on")],
    }


def test_tool_results_follow_their_calls_in_one_user_turn() -> None:
    calls = assistant(m.tool_call("t1", "ls", '{"path": "."}'), m.tool_call("t2", "pwd", ""))
    request = to_anthropic(
        [
            m.user("look"),
            calls,
            m.tool_result("t1", "README.md", turn=1, step=1)["message"],
            m.tool_result("t2", "", turn=1, step=1, is_error=True)["message"],
            m.user("and now?"),
        ]
    )
    assert request["messages"][1]["content"] == [
        {"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}},
        {"type": "tool_use", "id": "t2", "name": "pwd", "input": {}},
    ]
    assert request["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [text("README.md")]},
            {"type": "tool_result", "tool_use_id": "t2", "content": [], "is_error": True},
            text("and now?"),
        ],
    }
    assert validate_messages_request({"model": MODEL, "max_tokens": 1, **request}) == []


def test_unparseable_tool_arguments_are_sent_as_an_empty_input() -> None:
    request = to_anthropic([m.user("x"), assistant(m.tool_call("t1", "ls", "{oops"))])
    assert request["messages"][1]["content"][0]["input"] == {}


def test_signed_thinking_is_echoed_to_the_same_model_only() -> None:
    """spec/plugins.md §5.5: signatures are not portable across models."""
    reply = assistant(
        m.reasoning("Think."),
        m.text("Answer."),
        state=envelope({"type": "reasoning", "signature": "sig"}, {"type": "text"}),
    )
    same = to_anthropic([m.user("q"), reply], model=MODEL)["messages"][1]["content"]
    assert same == [{"type": "thinking", "thinking": "Think.", "signature": "sig"}, text("Answer.")]
    for model in ("another-model", None):
        assert to_anthropic([m.user("q"), reply], model=model)["messages"][1]["content"] == [
            text("Answer.")
        ]


@pytest.mark.parametrize(
    "state",
    [
        envelope({"type": "reasoning", "signature": "sig"}, {"type": "text"}, kind="pi-ai"),
        envelope({"type": "reasoning", "signature": "sig"}, {"type": "text"}, model="other"),
        envelope({"type": "reasoning", "signature": "sig"}),  # block count does not match
        envelope({"type": "reasoning"}, {"type": "text"}),  # never signed
        "garbage",
    ],
    ids=["another-kind", "another-model", "count-mismatch", "unsigned", "not-an-object"],
)
def test_an_envelope_that_does_not_fit_is_ignored(state: Any) -> None:
    reply = assistant(m.reasoning("Think."), m.text("Answer."), state=state)
    assert to_anthropic([m.user("q"), reply], model=MODEL)["messages"][1]["content"] == [
        text("Answer.")
    ]


def test_redacted_thinking_is_echoed_with_its_data() -> None:
    reply = assistant(
        m.reasoning(""),
        m.text("Done."),
        state=envelope({"type": "reasoning", "redacted": True, "data": "XYZ"}, {"type": "text"}),
    )
    assert to_anthropic([m.user("q"), reply], model=MODEL)["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": "XYZ"},
        text("Done."),
    ]


def test_a_reply_left_with_nothing_to_send_disappears_and_its_neighbours_merge() -> None:
    """Reasoning that cannot be replayed is all there was: the API refuses empty turns."""
    request = to_anthropic([m.user("a"), assistant(m.reasoning("hmm")), m.user("b")], model="x")
    assert request["messages"] == [{"role": "user", "content": [text("a"), text("b")]}]


def test_images_and_empty_text_are_never_sent_as_such() -> None:
    picture = m.image("att-1", "image/png", size=1, width=1, height=1)
    offloaded = {**picture, "offloaded": True}
    request = to_anthropic([m.user([text(""), picture, offloaded])])
    texts = [block["text"] for block in request["messages"][0]["content"]]
    assert texts[0] == "[image att-1 (image/png)]"
    assert "offloaded" in texts[1]
    assert len(texts) == 2


def test_a_malformed_message_is_refused_by_position() -> None:
    with pytest.raises(ValueError, match=r"messages\[1\] has an unknown role 'robot'"):
        to_anthropic([m.user("x"), {"role": "robot", "content": []}])
