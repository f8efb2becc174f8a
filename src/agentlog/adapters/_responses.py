"""OpenAI Responses API input items and agentlog messages, converted both ways.

Implements the message shapes of spec/core.md §2.3 for the OpenAI Agents SDK adapter. One
agentlog message stands for one *group* of items: consecutive model output (assistant text,
reasoning, function calls) becomes one assistant message, as the model produced it, so that
parallel calls and their outputs pair up in the derived history; every other item (a user,
system or developer message, a function call output) becomes one message of its own.

``from_response_items`` is strict: an item or content part with no agentlog form raises
``ConversionError`` naming it. ``to_response_items`` splits each assistant message back into
one item per block. Identity holds on the canonical forms ``to_response_items`` writes:
``{"type": "message", "role": ..., "content": [parts]}`` with ``input_text`` parts (assistant:
one ``output_text`` part), ``function_call`` and ``function_call_output`` (a string output, or
a list of two or more ``input_text`` parts) and ``reasoning`` with one summary part, none of
them carrying an ``id``.

The session adapter reads items leniently through ``model_blocks`` and ``text_blocks``: parts
and items without an agentlog form are kept in the event (exactly) and left out of the derived
message, never refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import orjson

from agentlog.errors import ConversionError
from agentlog.events.messages import new_id

__all__ = [
    "CALL_OUTPUT_TYPES",
    "MODEL",
    "OUTPUT_CALL_TYPES",
    "PROVIDER",
    "ItemKind",
    "assistant_message",
    "classify",
    "from_response_items",
    "message_items",
    "model_blocks",
    "output_call_id",
    "output_text",
    "role_message",
    "text_blocks",
    "to_response_items",
    "tool_message",
]

PROVIDER: Final = "openai"
"""The provider recorded on assistant messages read from items (an item does not say it)."""
MODEL: Final = "unknown"
"""The model recorded on assistant messages read from items."""

CALL_OUTPUT_TYPES: Final = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "tool_search_call": "tool_search_output",
    "program": "program_output",
}
"""Tool-call item types the SDK pairs by ``call_id``, and the type of their output items."""
OUTPUT_CALL_TYPES: Final = {output: call for call, output in CALL_OUTPUT_TYPES.items()}

_MODEL_TYPES: Final = frozenset(
    {
        *CALL_OUTPUT_TYPES,
        "reasoning",
        "compaction",
        "file_search_call",
        "web_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "hosted_tool_call",
        "mcp_list_tools",
        "mcp_call",
        "mcp_approval_request",
    }
)
"""Item types only a model produces: they join the assistant message of their response."""
_ROLES: Final = frozenset({"user", "system", "developer", "assistant"})
_TEXT_PARTS: Final = frozenset({"input_text", "output_text", "text"})

ItemKind = Literal["user", "system", "developer", "model", "output", "opaque"]
"""How the session adapter stores an item (see ``classify``)."""


def classify(item: Any) -> ItemKind:
    """What an item is: a role's message, model output, a call's output, or opaque.

    ``model`` covers assistant messages and every item type only a model emits (reasoning,
    tool calls, hosted tool calls, compaction); ``output`` an output item with a string
    ``call_id``; ``opaque`` everything else (unknown dicts, references, non-dicts).
    """
    if not isinstance(item, Mapping):
        return "opaque"
    item_type = item.get("type")
    role = item.get("role")
    if item_type in (None, "message") and role in _ROLES:
        return "model" if role == "assistant" else role
    if item_type in _MODEL_TYPES:
        return "model"
    if item_type in OUTPUT_CALL_TYPES and isinstance(item.get("call_id"), str):
        return "output"
    return "opaque"


def output_call_id(item: Mapping[str, Any]) -> str:
    """The ``call_id`` an output item answers (``classify`` said ``output``)."""
    return item["call_id"]  # type: ignore[no-any-return]


# --- items -> blocks ----------------------------------------------------------------------


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def text_blocks(content: Any, *, where: str, strict: bool) -> list[dict[str, Any]]:
    """Text blocks of a message's or output's ``content``: a string or a list of text parts.

    Args:
        content: The item's ``content`` (or ``output``).
        where: The item, for error texts (``"response item 3"``).
        strict: Raise on a part with no agentlog form instead of leaving it out.

    Raises:
        ConversionError: (strict) for a non-text part or content of another type.
    """
    if isinstance(content, str):
        return [_text(content)]
    if not isinstance(content, list):
        if strict:
            raise ConversionError(f"{where} has content of type {type(content).__name__}")
        return []
    blocks = []
    for index, part in enumerate(content):
        part_type = part.get("type") if isinstance(part, Mapping) else None
        if part_type in _TEXT_PARTS and isinstance(part.get("text"), str):
            blocks.append(_text(part["text"]))
        elif part_type == "refusal" and isinstance(part.get("refusal"), str) and not strict:
            blocks.append(_text(part["refusal"]))
        elif strict:
            raise ConversionError(
                f"{where} content part {index} ({part_type!r}) has no agentlog form; "
                "only text parts convert"
            )
    return blocks


def _arguments(item: Mapping[str, Any]) -> str:
    for key in ("arguments", "input"):
        value = item.get(key)
        if isinstance(value, str):
            return value
    payload = {key: value for key, value in item.items() if key in ("action", "actions")}
    return orjson.dumps(payload).decode()


def model_blocks(item: Mapping[str, Any], *, where: str, strict: bool) -> list[dict[str, Any]]:
    """The content blocks of one model output item (assistant text, reasoning, a tool call).

    Raises:
        ConversionError: (strict) for an item with no agentlog form.
    """
    item_type = item.get("type")
    if item_type in (None, "message"):
        return text_blocks(item.get("content"), where=where, strict=strict)
    if item_type == "reasoning":
        texts = [
            part["text"]
            for key in ("summary", "content")
            for part in (item.get(key) or ())
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        ]
        if texts or not strict:
            return [{"type": "reasoning", "text": text} for text in texts]
        raise ConversionError(f"{where} (a reasoning item) carries no readable text")
    if item_type == "function_call" or (not strict and item_type in CALL_OUTPUT_TYPES):
        call_id, name = item.get("call_id"), item.get("name") or item_type
        if isinstance(call_id, str) and isinstance(name, str):
            return [
                {"type": "tool-call", "id": call_id, "name": name, "arguments": _arguments(item)}
            ]
    if strict:
        raise ConversionError(f"{where} ({item_type!r}) has no agentlog message form")
    return []


def output_text(item: Mapping[str, Any], *, where: str, strict: bool) -> list[dict[str, Any]]:
    """The content blocks of a call's output item (a string, text parts, or JSON text).

    Raises:
        ConversionError: (strict) for an output that is neither a string nor text parts.
    """
    output = item.get("output")
    if isinstance(output, str | list):
        return text_blocks(output, where=where, strict=strict)
    if strict:
        raise ConversionError(f"{where} has an output of type {type(output).__name__}")
    return [_text(orjson.dumps(output).decode())] if output is not None else []


# --- the public converters ----------------------------------------------------------------


def _message(role: str, content: list[dict[str, Any]], source: dict[str, Any]) -> dict[str, Any]:
    return {"id": new_id(), "role": role, "content": content, "source": source}


def assistant_message(content: list[dict[str, Any]]) -> dict[str, Any]:
    """An assistant message of blocks read from items."""
    return _message("assistant", content, {"kind": "model", "provider": PROVIDER, "model": MODEL})


def tool_message(call_id: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    """The role-``tool`` message answering ``call_id``."""
    message = _message("tool", content, {"kind": "tool", "callId": call_id})
    message["toolCallId"] = call_id
    return message


def role_message(role: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    """A user, system or developer message."""
    kinds = {"user": "user", "system": "system-prompt", "developer": "developer"}
    return _message(role, content, {"kind": kinds[role]})


def from_response_items(items: Iterable[Any]) -> list[dict[str, Any]]:
    """Convert Responses API input items to agentlog messages.

    Consecutive model output (assistant text, reasoning, function calls) becomes one assistant
    message; each other item becomes one message.

    Raises:
        ConversionError: naming the first item or part with no agentlog form (images, files,
            hosted tool calls, compaction items, unknown types).
    """
    messages: list[dict[str, Any]] = []
    group: list[dict[str, Any]] | None = None
    for index, item in enumerate(items):
        where = f"response item {index}"
        kind = classify(item)
        if kind == "model":
            blocks = model_blocks(item, where=where, strict=True)
            if group is None:
                group = blocks
                messages.append(assistant_message(group))
            else:
                group.extend(blocks)
            continue
        group = None
        if kind == "output" and item.get("type") == "function_call_output":
            content = output_text(item, where=where, strict=True)
            messages.append(tool_message(output_call_id(item), content))
        elif kind in ("user", "system", "developer"):
            content = text_blocks(item.get("content"), where=where, strict=True)
            messages.append(role_message(kind, content))
        else:
            item_type = item.get("type") if isinstance(item, Mapping) else type(item).__name__
            raise ConversionError(f"{where} ({item_type!r}) has no agentlog message form")
    return messages


def message_items(message: Mapping[str, Any], *, strict: bool = True) -> list[dict[str, Any]]:
    """The canonical Responses input items of one agentlog message (see ``to_response_items``).

    Args:
        message: An agentlog message.
        strict: Raise on a block with no Responses form instead of leaving it out.

    Raises:
        ConversionError: (strict) for a block other than text, reasoning or a tool call.
    """
    role = message.get("role")
    content: Sequence[Mapping[str, Any]] = message.get("content") or ()
    if role == "tool":
        texts = _texts(content, role, strict)
        output: Any = texts[0] if len(texts) == 1 else [_part("input_text", t) for t in texts]
        return [
            {"type": "function_call_output", "call_id": message["toolCallId"], "output": output}
        ]
    if role in ("user", "system", "developer"):
        parts = [_part("input_text", text) for text in _texts(content, role, strict)]
        return [{"type": "message", "role": role, "content": parts}]
    if role != "assistant":
        raise ConversionError(f"a message of role {role!r} has no Responses item form")
    items: list[dict[str, Any]] = []
    for index, block in enumerate(content):
        block_type = block.get("type")
        if block_type == "text":
            part = {**_part("output_text", block["text"]), "annotations": []}
            items.append({"type": "message", "role": "assistant", "content": [part]})
        elif block_type == "reasoning":
            summary = [_part("summary_text", block["text"])]
            items.append({"type": "reasoning", "summary": summary})
        elif block_type == "tool-call":
            items.append(
                {
                    "type": "function_call",
                    "call_id": block["id"],
                    "name": block["name"],
                    "arguments": block["arguments"],
                }
            )
        elif strict:
            raise ConversionError(
                f"assistant content block {index} ({block_type!r}) has no Responses item form"
            )
    return items


def _part(part_type: str, text: str) -> dict[str, Any]:
    return {"type": part_type, "text": text}


def _texts(content: Sequence[Mapping[str, Any]], role: Any, strict: bool) -> list[str]:
    texts = []
    for index, block in enumerate(content):
        if block.get("type") == "text":
            texts.append(block["text"])
        elif strict:
            raise ConversionError(
                f"{role} content block {index} ({block.get('type')!r}) has no Responses form"
            )
    return texts


def to_response_items(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Convert agentlog messages to Responses API input items.

    An assistant message becomes one item per block: a ``message`` per text block, a
    ``reasoning`` item per reasoning block, a ``function_call`` per tool call; a tool message
    becomes a ``function_call_output``; user, system and developer messages become ``message``
    items of ``input_text`` parts. Empty assistant messages give no item.

    Raises:
        ConversionError: for an image, a file or another block with no Responses form.
    """
    return [item for message in messages for item in message_items(message)]
