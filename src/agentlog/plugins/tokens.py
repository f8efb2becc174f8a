"""The heuristic token estimator every compaction decision prices with (spec/plugins.md §7).

Fixed, with no configuration: four characters per token, four tokens of overhead per content
block and per message. Lengths are JavaScript string lengths (UTF-16 code units), so a price
is the same here as in dsh:

* ``text`` / ``reasoning``: ``ceil(len(text) / 4) + 4``;
* ``tool-call``: ``ceil(len(name) / 4) + ceil(len(arguments) / 4) + 4``;
* ``tool-result`` (format-0 wrapper): its content's price ``+ 4``;
* an offloaded image: the price of the placeholder text that replaces it in requests;
* any other block (image, file, plugin): ``4 + ceil(len(JSON(block)) / 4)``;
* a message: its content's price ``+ 4``; a request header: its tools' JSON, ``ceil / 4 + 4``.

Example:
    >>> from agentlog.plugins.tokens import estimate_message
    >>> estimate_message({"role": "user", "content": [{"type": "text", "text": "0123456789"}]})
    11
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentlog.values import dumps

__all__ = [
    "BLOCK_OVERHEAD",
    "CHARS_PER_TOKEN",
    "ROLE_OVERHEAD",
    "estimate_block",
    "estimate_content",
    "estimate_header",
    "estimate_message",
    "offloaded_image_text",
    "text_length",
]

CHARS_PER_TOKEN: Final = 4
BLOCK_OVERHEAD: Final = 4
ROLE_OVERHEAD: Final = 4


def text_length(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (a JavaScript ``string.length``)."""
    if text.isascii():
        return len(text)
    # Encoding in C beats counting astral characters in a Python loop by two orders of magnitude.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _tokens(text: Any) -> int:
    length = text_length(text) if isinstance(text, str) else text_length(dumps(text).decode())
    return -(-length // CHARS_PER_TOKEN)


def offloaded_image_text(block: Mapping[str, Any]) -> str:
    """What a request carries instead of an offloaded image (spec/plugins.md §3)."""
    attachment = block.get("attachment")
    name = None
    if isinstance(attachment, Mapping):
        name = attachment.get("name") or attachment.get("attachmentId")
    return f"[image {name or 'attachment'} offloaded from the request; saved as an attachment]"


def estimate_block(block: Any) -> int:
    """The estimated tokens of one content block."""
    if not isinstance(block, Mapping):
        return BLOCK_OVERHEAD + _tokens(block)
    block_type = block.get("type")
    if block_type in ("text", "reasoning") and isinstance(block.get("text"), str):
        return _tokens(block["text"]) + BLOCK_OVERHEAD
    if block_type == "tool-call":
        return _tokens(block.get("name", "")) + _tokens(block.get("arguments", "")) + BLOCK_OVERHEAD
    if block_type == "tool-result":
        return estimate_content(block.get("content")) + BLOCK_OVERHEAD
    if block_type == "image" and block.get("offloaded") is True:
        return _tokens(offloaded_image_text(block)) + BLOCK_OVERHEAD
    return BLOCK_OVERHEAD + _tokens(dumps(block).decode())


def estimate_content(content: Any) -> int:
    """The estimated tokens of a list of content blocks (0 for anything else)."""
    if not isinstance(content, list):
        return 0
    return sum(estimate_block(block) for block in content)


def estimate_message(message: Any) -> int:
    """The estimated tokens of one message: its content plus the role overhead."""
    content = message.get("content") if isinstance(message, Mapping) else None
    return estimate_content(content) + ROLE_OVERHEAD


def estimate_header(header: Any) -> int:
    """The estimated tokens of a canonical request header: its tool schemas (format 4).

    The system prompt is a surface node in format 4, priced as a message.
    """
    tools = header.get("tools") if isinstance(header, Mapping) else None
    if not tools:
        return 0
    return _tokens(dumps(tools).decode()) + BLOCK_OVERHEAD
