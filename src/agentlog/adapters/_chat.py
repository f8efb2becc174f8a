"""OpenAI Chat Completions messages and agentlog messages, converted both ways.

Implements the message shapes of spec/core.md §2.3 against the Chat Completions wire format.
``to_chat_messages`` is ``agentlog.providers.to_chat_completions`` (one conversion for the
provider and the adapters: text joined, reasoning sent back only to the model that produced
it, a failed tool result as ``Error: ...``). ``from_chat_messages`` is its inverse on the forms
it writes — ``content`` a string for one text block (a user message's several texts a list of
``{"type": "text"}`` parts), an assistant message's ``content`` ``None`` when it only calls
tools — and refuses parts with no agentlog form (images, audio, files) with
``ConversionError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentlog.adapters._responses import assistant_message, role_message, tool_message
from agentlog.errors import ConversionError
from agentlog.providers import to_chat_completions

__all__ = ["from_chat_messages", "to_chat_messages"]


def to_chat_messages(
    messages: Iterable[Mapping[str, Any]], *, model: str | None = None
) -> list[dict[str, Any]]:
    """Convert agentlog messages to Chat Completions messages (``to_chat_completions``).

    Args:
        messages: Agentlog messages, as ``Session.derive_messages()`` returns them.
        model: The model the messages go to: reasoning it produced is sent back to it.
    """
    return to_chat_completions(messages, model=model)


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
