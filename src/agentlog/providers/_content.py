"""What the message adapters share: how blocks a wire format cannot carry become text.

The derived messages of a session (spec/core.md §2.3) hold content blocks no provider's wire
format knows: image and file blocks are durable *references* (the bytes are never in the log),
developer messages list tool additions and removals. Every adapter renders them the same way,
so a model sees the same words whichever provider serves it:

* an image offloaded by ``image/offload`` becomes the placeholder text the token meter prices
  (spec/plugins.md §3, ``agentlog.plugins.tokens.offloaded_image_text``);
* any other image or file becomes a one-line reference naming the attachment;
* a developer message becomes one sentence naming the tools added and removed.

Reasoning is replayed only to the model that produced it (spec/plugins.md §5.5): ``same_model``
is the check both adapters apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentlog.plugins.tokens import offloaded_image_text

__all__ = [
    "attachment_text",
    "check_message",
    "developer_text",
    "same_model",
    "text_of",
]


def check_message(message: object, index: int) -> tuple[str, list[Mapping[str, Any]]]:
    """The role and content blocks of ``messages[index]``, or ``ValueError`` saying what is wrong.

    Args:
        message: One derived message (spec/core.md §2.3).
        index: Its position, for the error text.
    """
    if not isinstance(message, Mapping):
        raise ValueError(f"messages[{index}] is not a message object: {message!r}")
    role = message.get("role")
    content = message.get("content")
    if not isinstance(role, str) or not isinstance(content, list):
        raise ValueError(f"messages[{index}] needs a string role and a content list")
    blocks = [block for block in content if isinstance(block, Mapping)]
    if len(blocks) != len(content):
        raise ValueError(f"messages[{index}].content holds a non-object block")
    return role, blocks


def _attachment_name(block: Mapping[str, Any]) -> str:
    attachment = block.get("attachment")
    if isinstance(attachment, Mapping):
        name = attachment.get("name") or attachment.get("attachmentId")
        if isinstance(name, str) and name:
            return name
    return "attachment"


def attachment_text(block: Mapping[str, Any]) -> str:
    """The text a request carries for an ``image`` or ``file`` block (never its bytes)."""
    if block.get("type") == "image" and block.get("offloaded") is True:
        return offloaded_image_text(block)
    attachment = block.get("attachment")
    media = attachment.get("mediaType") if isinstance(attachment, Mapping) else None
    kind = "image" if block.get("type") == "image" else "file"
    detail = f" ({media})" if isinstance(media, str) and media else ""
    return f"[{kind} {_attachment_name(block)}{detail}]"


def text_of(block: Mapping[str, Any]) -> str | None:
    """The text a user-side block is sent as, or ``None`` for a block no request carries.

    ``text`` blocks give their text; ``image`` and ``file`` blocks their reference text. Other
    block types (plugin blocks, stored and passed through by the log) are not sent.
    """
    kind = block.get("type")
    if kind == "text":
        value = block.get("text")
        return value if isinstance(value, str) else None
    if kind in ("image", "file"):
        return attachment_text(block)
    return None


def developer_text(blocks: Iterable[Mapping[str, Any]]) -> str:
    """One sentence naming the tools a developer message adds and removes ('' for none)."""
    blocks = list(blocks)
    added = [str(b.get("toolName")) for b in blocks if b.get("type") == "tool-addition"]
    removed = [str(b.get("toolName")) for b in blocks if b.get("type") == "tool-removal"]
    parts = []
    if added:
        parts.append("Tools now available: " + ", ".join(added) + ".")
    if removed:
        parts.append("Tools no longer available: " + ", ".join(removed) + ".")
    return " ".join(parts)


def same_model(message: Mapping[str, Any], model: str | None) -> bool:
    """Whether ``message`` was produced by ``model`` (its reasoning may be replayed to it)."""
    source = message.get("source")
    return model is not None and isinstance(source, Mapping) and source.get("model") == model
