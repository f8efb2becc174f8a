"""Derived messages → the ``messages`` of a Chat Completions request (a pure function).

Implements the Chat Completions side of spec/plugins.md §5.1–§5.2 and §5.5 over the derived
messages of spec/core.md §2.3 (``Session.derive_messages()``); ``OpenAIChat`` sends exactly
what ``to_chat_completions`` returns.

* ``system`` messages stay ``system``; a developer message (tools added or removed) becomes a
  ``system`` message naming them, since not every compatible server knows the ``developer``
  role.
* A user message with one text block is sent as a string, otherwise as text parts; images and
  files become reference text (the log keeps no bytes), offloaded images their placeholder.
* An assistant message's text blocks become ``content`` (joined by a blank line), its tool-call
  blocks ``tool_calls`` with the model's raw argument text; its reasoning blocks are sent back
  as ``reasoning_content`` (DeepSeek's field) only when ``model`` is the model that produced
  them (§5.5), and never to another. Chat Completions has no replay envelope: any
  ``replayState`` is ignored.
* A tool result becomes a ``tool`` message answering its call; Chat Completions has no error
  flag, so a result with ``isError`` is sent as ``Error: <text>``.

Example:
    >>> from agentlog.providers import to_chat_completions
    >>> wire = to_chat_completions([
    ...     {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}],
    ...      "source": {"kind": "user"}},
    ...     {"id": "a1", "role": "assistant", "source": {"kind": "model", "provider": "deepseek",
    ...      "model": "deepseek-reasoner"}, "content": [{"type": "reasoning", "text": "Greet."},
    ...      {"type": "text", "text": "Hello!"}]},
    ... ], model="deepseek-reasoner")
    >>> wire[0]
    {'role': 'user', 'content': 'hi'}
    >>> wire[1]
    {'role': 'assistant', 'content': 'Hello!', 'reasoning_content': 'Greet.'}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentlog.providers._content import check_message, developer_text, same_model, text_of

__all__ = ["to_chat_completions"]


def to_chat_completions(
    messages: Iterable[Mapping[str, Any]], *, model: str | None = None
) -> list[dict[str, Any]]:
    """Convert derived messages into Chat Completions ``messages``.

    Args:
        messages: Derived messages, as ``Session.derive_messages()`` returns them.
        model: The model the request goes to; reasoning produced by this model is sent back
            as ``reasoning_content`` (``None``: no reasoning is sent).

    Returns:
        New plain dicts, ready to be sent.

    Raises:
        ValueError: A message has no role or content list, or an unknown role.
    """
    wire: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role, blocks = check_message(message, index)
        if role == "system":
            text = "\n\n".join(t for b in blocks if (t := text_of(b)))
            if text:
                wire.append({"role": "system", "content": text})
        elif role == "developer":
            text = developer_text(blocks)
            if text:
                wire.append({"role": "system", "content": text})
        elif role == "user":
            wire.append({"role": "user", "content": _user_content(blocks)})
        elif role == "assistant":
            wire.append(_assistant(blocks, same_model(message, model)))
        elif role == "tool":
            wire.append(_tool_result(message, blocks))
        else:
            raise ValueError(f"messages[{index}] has an unknown role {role!r}")
    return wire


def _user_content(blocks: list[Mapping[str, Any]]) -> str | list[dict[str, Any]]:
    texts = [t for b in blocks if (t := text_of(b)) is not None]
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": text} for text in texts] if texts else ""


def _assistant(blocks: list[Mapping[str, Any]], replay_reasoning: bool) -> dict[str, Any]:
    texts = [b["text"] for b in blocks if b.get("type") == "text" and b.get("text")]
    calls = [
        {
            "id": b.get("id"),
            "type": "function",
            "function": {"name": b.get("name"), "arguments": b.get("arguments")},
        }
        for b in blocks
        if b.get("type") == "tool-call"
    ]
    message: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts)}
    if calls:
        if not texts:
            message["content"] = None  # the API's own shape for a reply that only calls tools
        message["tool_calls"] = calls
    if replay_reasoning:
        reasoning = "\n\n".join(
            b["text"] for b in blocks if b.get("type") == "reasoning" and b.get("text")
        )
        if reasoning:
            message["reasoning_content"] = reasoning
    return message


def _tool_result(message: Mapping[str, Any], blocks: list[Mapping[str, Any]]) -> dict[str, Any]:
    text = "\n".join(t for b in blocks if (t := text_of(b)) is not None)
    if message.get("isError") is True:
        text = f"Error: {text}" if text else "Error"
    return {"role": "tool", "tool_call_id": message.get("toolCallId"), "content": text}
