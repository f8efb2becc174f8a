"""OpenAI Chat Completions messages and agentlog messages, converted both ways.

Implements the message shapes of spec/core.md §2.3 against the Chat Completions wire format.
``to_chat_messages`` merges an assistant message into the one before it when that one has tool
calls still to be answered (agentlog may hold a response's items as separate assistant
messages), so the result pairs every ``tool_calls`` entry with the ``tool`` messages right after
it; reasoning blocks have no Chat Completions form and are left out. ``from_chat_messages``
refuses parts with no agentlog form (images, audio, files) with ``ConversionError``.

Identity holds on the canonical forms ``to_chat_messages`` writes: ``content`` a string for one
text block, a list of two or more ``{"type": "text"}`` parts otherwise; assistant messages always
carry ``content`` (``None`` without text) and ``tool_calls`` only when they have some.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentlog.adapters._responses import assistant_message, role_message, tool_message
from agentlog.errors import ConversionError

__all__ = ["from_chat_messages", "to_chat_messages"]


def _content(blocks: Sequence[Mapping[str, Any]], where: str) -> str | list[dict[str, Any]]:
    texts: list[str] = []
    for index, block in enumerate(blocks):
        if block.get("type") != "text":
            raise ConversionError(
                f"{where} content block {index} ({block.get('type')!r}) has no Chat Completions "
                "form"
            )
        texts.append(block["text"])
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": text} for text in texts]


def to_chat_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Convert agentlog messages to Chat Completions messages.

    Raises:
        ConversionError: for an image, a file or another block with no Chat Completions form.
    """
    chat: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        blocks: Sequence[Mapping[str, Any]] = message.get("content") or ()
        where = f"message {index} ({role})"
        if role == "tool":
            content = _content(blocks, where)
            chat.append({"role": "tool", "tool_call_id": message["toolCallId"], "content": content})
        elif role in ("system", "developer", "user"):
            chat.append({"role": role, "content": _content(blocks, where)})
        elif role == "assistant":
            _add_assistant(chat, blocks, where)
        else:
            raise ConversionError(f"{where} has no Chat Completions form")
    return chat


def _add_assistant(
    chat: list[dict[str, Any]], blocks: Sequence[Mapping[str, Any]], where: str
) -> None:
    texts = [block for block in blocks if block.get("type") == "text"]
    calls = [
        {
            "id": block["id"],
            "type": "function",
            "function": {"name": block["name"], "arguments": block["arguments"]},
        }
        for block in blocks
        if block.get("type") == "tool-call"
    ]
    for index, block in enumerate(blocks):
        if block.get("type") not in ("text", "tool-call", "reasoning"):
            raise ConversionError(
                f"{where} content block {index} ({block.get('type')!r}) has no Chat Completions "
                "form"
            )
    if not texts and not calls:
        return  # reasoning only: nothing a Chat Completions model can be sent
    previous = chat[-1] if chat else None
    if previous is not None and previous["role"] == "assistant" and "tool_calls" in previous:
        # The calls before are not answered yet: this is more of the same response.
        if texts:
            before = previous["content"]
            joined = [block["text"] for block in texts]
            previous["content"] = "".join(([before] if isinstance(before, str) else []) + joined)
        previous["tool_calls"].extend(calls)
        return
    message: dict[str, Any] = {
        "role": "assistant",
        "content": _content(texts, where) if texts else None,
    }
    if calls:
        message["tool_calls"] = calls
    chat.append(message)


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise ConversionError(f"{where} has content of type {type(content).__name__}")
    blocks = []
    for index, part in enumerate(content):
        if isinstance(part, Mapping) and part.get("type") == "text":
            blocks.append({"type": "text", "text": part["text"]})
        else:
            kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
            raise ConversionError(
                f"{where} content part {index} ({kind!r}) has no agentlog form; only text parts "
                "convert"
            )
    return blocks


def from_chat_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Convert Chat Completions messages to agentlog messages.

    Raises:
        ConversionError: naming the first message or part with no agentlog form.
    """
    result: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        where = f"chat message {index} ({role})"
        content = _blocks(message.get("content"), where)
        if role in ("system", "developer", "user"):
            result.append(role_message(role, content))
        elif role == "tool":
            result.append(tool_message(message["tool_call_id"], content))
        elif role == "assistant":
            for call in message.get("tool_calls") or ():
                if call.get("type", "function") != "function":
                    raise ConversionError(f"{where} has a {call.get('type')!r} tool call")
                function = call["function"]
                content.append(
                    {
                        "type": "tool-call",
                        "id": call["id"],
                        "name": function["name"],
                        "arguments": function["arguments"],
                    }
                )
            result.append(assistant_message(content))
        else:
            raise ConversionError(f"{where} has no agentlog form")
    return result
