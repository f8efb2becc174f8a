"""The heuristic token estimator (spec/plugins.md §7; scenario 57).

Prices are worked out by hand in each test — four UTF-16 code units per token, rounded up, plus
four tokens per block and per message — so a change to any constant or rule shows up as a
changed number, not as a test that recomputes the estimator.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import messages as m
from agentlog.plugins.tokens import (
    BLOCK_OVERHEAD,
    CHARS_PER_TOKEN,
    ROLE_OVERHEAD,
    estimate_block,
    estimate_content,
    estimate_header,
    estimate_message,
    offloaded_image_text,
    text_length,
)

IMAGE = m.image("img-1", "image/png", size=2048, width=64, height=48)
"""Its JSON is 114 characters:
``{"type":"image","attachment":{"attachmentId":"img-1","mediaType":"image/png","bytes":2048,
"width":64,"height":48}}``."""


def test_the_constants_are_dsh_s() -> None:
    assert (CHARS_PER_TOKEN, BLOCK_OVERHEAD, ROLE_OVERHEAD) == (4, 4, 4)


def test_a_ten_character_user_message_prices_eleven() -> None:
    """Scenario 57: ``ceil(10 / 4) + 4`` for the block, ``+ 4`` for the message."""
    assert estimate_message(m.user("0123456789")) == 11


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 4), ("a", 5), ("abcd", 5), ("abcde", 6), ("x" * 40, 14)],
)
def test_text_blocks_price_a_token_per_four_characters_rounded_up(text: str, tokens: int) -> None:
    assert estimate_block(m.text(text)) == tokens


def test_reasoning_blocks_price_like_text() -> None:
    assert estimate_block(m.reasoning("thinking hard")) == 4 + 4  # 13 characters


def test_lengths_are_utf16_code_units() -> None:
    """Astral characters count two, as JavaScript's ``string.length`` does."""
    assert text_length("😀") == 2
    assert text_length("héllo") == 5
    assert text_length("a😀b😀") == 6
    assert estimate_block(m.text("😀😀😀")) == 2 + 4  # 6 units, though 3 code points


def test_a_tool_call_prices_name_and_arguments_separately() -> None:
    block = m.tool_call("call-1", "bash", '{"cmd": "ls -la"}')
    assert estimate_block(block) == 1 + 5 + 4  # "bash" 4 units, arguments 17 units


def test_a_tool_call_without_arguments_prices_the_overhead() -> None:
    assert estimate_block({"type": "tool-call", "id": "c", "name": ""}) == 4


def test_a_tool_result_wrapper_prices_its_content_plus_overhead() -> None:
    """The format-0 ``tool-result`` block: its inner blocks, then one block overhead."""
    block = {"type": "tool-result", "content": [m.text("0123456789"), m.text("abcd")]}
    assert estimate_block(block) == (3 + 4) + (1 + 4) + 4


def test_a_tool_result_wrapper_without_content_prices_the_overhead() -> None:
    assert estimate_block({"type": "tool-result", "toolCallId": "c"}) == 4


def test_an_image_prices_its_json() -> None:
    """Scenario 57: ``4 + ceil(len(JSON(block)) / 4)`` — metadata, never the bytes it names."""
    assert estimate_block(IMAGE) == 4 + 29  # 114 characters of JSON


def test_an_offloaded_image_prices_as_its_placeholder_text() -> None:
    offloaded = {**IMAGE, "offloaded": True}
    placeholder = "[image img-1 offloaded from the request; saved as an attachment]"
    assert offloaded_image_text(offloaded) == placeholder
    assert estimate_block(offloaded) == estimate_block(m.text(placeholder)) == 16 + 4


def test_an_offloaded_image_placeholder_prefers_the_attachment_name() -> None:
    named = m.image("img-1", "image/png", size=1, width=1, height=1, name="shot.png")
    placeholder = "[image shot.png offloaded from the request; saved as an attachment]"
    assert offloaded_image_text(named) == placeholder
    assert estimate_block({**named, "offloaded": True}) == 17 + 4  # 67 characters


def test_other_blocks_price_their_json() -> None:
    """Plugin and unknown blocks: ``{"type":"tool-addition","toolName":"grep"}`` is 42 long."""
    assert estimate_block({"type": "tool-addition", "toolName": "grep"}) == 4 + 11


def test_a_text_block_whose_text_is_not_a_string_prices_its_json() -> None:
    assert (
        estimate_block({"type": "text", "text": 12345}) == 4 + 7
    )  # {"type":"text","text":12345} is 28 long


def test_content_is_the_sum_of_its_blocks() -> None:
    content = [m.text("0123456789"), IMAGE, m.tool_call("c", "bash", "{}")]
    assert estimate_content(content) == 7 + 33 + 6


@pytest.mark.parametrize("content", [None, [], "not a list", {"type": "text", "text": "x"}])
def test_absent_or_malformed_content_prices_nothing(content: Any) -> None:
    assert estimate_content(content) == 0


@pytest.mark.parametrize(
    "message",
    [
        {"role": "assistant", "content": []},
        {"role": "user"},
        None,
    ],
)
def test_a_message_without_content_prices_the_role_overhead(message: Any) -> None:
    assert estimate_message(message) == 4


def test_a_tool_message_prices_its_content_plus_the_role_overhead() -> None:
    data = m.tool_result("call-1", "README.md", turn=1, step=1)
    assert estimate_message(data["message"]) == (3 + 4) + 4  # "README.md" is 9 characters


def test_a_header_prices_its_tools_json() -> None:
    tools = [
        {"name": "bash", "description": "Run a shell command", "parameters": {"type": "object"}}
    ]
    header = {"config": {"provider": "deepseek", "model": "deepseek-chat"}, "tools": tools}
    assert estimate_header(header) == 21 + 4  # the tools' JSON is 84 characters


@pytest.mark.parametrize(
    "header",
    [
        {"config": {"provider": "deepseek", "model": "deepseek-chat"}},
        {"config": {"provider": "deepseek", "model": "deepseek-chat"}, "tools": []},
        None,
    ],
)
def test_a_header_without_tools_prices_nothing(header: Any) -> None:
    """Format 4 has no system prompt in the header: it is a surface node, priced as a message."""
    assert estimate_header(header) == 0
