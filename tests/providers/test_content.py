"""What both message adapters share: text for attachments and developer messages, model checks."""

from __future__ import annotations

import pytest

from agentlog import messages as m
from agentlog.plugins.tokens import offloaded_image_text
from agentlog.providers._content import (
    attachment_text,
    check_message,
    developer_text,
    same_model,
    text_of,
)


def test_an_image_is_named_by_its_attachment_and_an_offloaded_one_by_its_placeholder() -> None:
    picture = m.image("att-1", "image/png", size=1, width=1, height=1, name="cat.png")
    assert attachment_text(picture) == "[image cat.png (image/png)]"
    assert attachment_text({**picture, "offloaded": True}) == offloaded_image_text(picture)
    unnamed = m.image("att-2", "image/gif", size=1, width=1, height=1)
    assert attachment_text(unnamed) == "[image att-2 (image/gif)]"


def test_a_file_is_a_reference_and_unknown_blocks_are_not_sent() -> None:
    assert text_of({"type": "file", "attachment": {"name": "a.pdf"}}) == "[file a.pdf]"
    assert text_of({"type": "text", "text": "x"}) == "x"
    assert text_of({"type": "plugin-widget", "data": 1}) is None


def test_a_developer_message_names_the_tools_it_adds_and_removes() -> None:
    blocks = m.developer(turn=1, step=1, additions=["a", "b"], removals=["c"], header_seq=0)[
        "message"
    ]["content"]
    assert developer_text(blocks) == "Tools now available: a, b. Tools no longer available: c."
    assert developer_text([]) == ""


def test_same_model_compares_the_producing_model() -> None:
    message = {"role": "assistant", "source": {"kind": "model", "model": "m1"}}
    assert same_model(message, "m1")
    assert not same_model(message, "m2")
    assert not same_model(message, None)
    assert not same_model({"role": "user", "source": {"kind": "user"}}, "m1")


def test_check_message_returns_role_and_blocks_or_says_what_is_wrong() -> None:
    assert check_message(m.user("x"), 0) == ("user", [{"type": "text", "text": "x"}])
    with pytest.raises(ValueError, match=r"messages\[3\].content holds a non-object block"):
        check_message({"role": "user", "content": ["x"]}, 3)
