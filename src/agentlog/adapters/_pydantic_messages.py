"""Pydantic AI ``ModelRequest`` / ``ModelResponse`` and agentlog messages, converted both ways.

Implements the message shapes of spec/core.md §2.3 for the Pydantic AI adapter. A request
becomes one agentlog message per part — system prompt (``system``), user prompt (``user``),
tool return (``tool``, with its ``outcome``, ``isError`` when it is not ``success``, and its
``toolName``), retry feedback (``user``, source kind ``retry-feedback``), an application's
compaction summary (``user``, source kind ``compaction-summary``) — and a response one
``assistant`` message whose blocks are its text, thinking (``reasoning``, with its
``signature``), tool calls (``tool-call``, the tool-call id kept) and provider compaction
(``compaction``) parts. Any other part (speech, files, native tools, instruction and
capability deltas) raises ``ConversionError`` naming it; ``strict=False`` leaves it out.

``from_model_messages`` also keeps the exact message on each agentlog message (under
``pydanticAi``); ``to_model_messages`` uses it while the message's content is still what it
was converted to, so framework → agentlog → framework is identity, and otherwise rebuilds the
parts from the content (fresh timestamps, tool names from the calls they answer, a return value
that is not text as its text: the model is shown the same, except that the error wrapping of a
call that did not succeed quotes it).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from agentlog.errors import ConversionError

__all__ = ["CARRY_KEY", "from_model_messages", "message_of_part", "to_model_messages"]

CARRY_KEY: Final = "pydanticAi"
"""Where an agentlog message keeps the Pydantic AI message (or part) it was converted from."""
_PROVIDER: Final = "pydantic-ai"


def _adapter() -> Any:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return ModelMessagesTypeAdapter


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def _message(role: str, content: list[dict[str, Any]], source: dict[str, Any]) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "role": role, "content": content, "source": source}


def _user_content(content: Any, where: str, strict: bool) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [_text(content)]
    blocks = []
    for index, item in enumerate(content):
        if isinstance(item, str):
            blocks.append(_text(item))
        elif getattr(item, "kind", None) == "text-content":
            blocks.append(_text(item.content))
        elif strict:
            kind = getattr(item, "kind", type(item).__name__)
            raise ConversionError(f"{where} content item {index} ({kind!r}) has no agentlog form")
    return blocks


def message_of_part(part: Any, where: str, *, strict: bool = True) -> dict[str, Any] | None:
    """The agentlog message of one request part (``None`` when lenient and it has none).

    Raises:
        ConversionError: (strict) for a part with no agentlog form.
    """
    kind = part.part_kind
    if kind == "system-prompt":
        return _message("system", [_text(part.content)], {"kind": "system-prompt"})
    if kind == "user-prompt":
        return _message("user", _user_content(part.content, where, strict), {"kind": "user"})
    if kind == "tool-return":
        # The content as text; the outcome is kept beside it (a failed return is shown to the
        # model wrapped as an error, and rebuilding it from its wrapped text would wrap it again).
        text = dataclasses.replace(part, outcome="success").model_response_str()
        return _tool(part.tool_call_id, part.tool_name, text, part.outcome)
    if kind == "retry-prompt" and part.tool_name is not None:  # the legacy form of a retried call
        return _tool(part.tool_call_id, part.tool_name, part.model_response(), "retried")
    if kind in ("retry-prompt", "retry-feedback"):
        cause = part.retry.cause if kind == "retry-feedback" else None
        source = {"kind": "retry-feedback", **({"cause": cause} if cause else {})}
        return _message("user", [_text(part.model_response())], source)
    if kind == "compaction" and part.content is not None:
        return _message("user", [_text(part.content)], {"kind": "compaction-summary"})
    if strict:
        raise ConversionError(f"{where} ({kind!r}) has no agentlog form")
    return None


def _tool(call_id: str, name: str, text: str, outcome: str) -> dict[str, Any]:
    message = _message("tool", [_text(text)], {"kind": "tool", "callId": call_id})
    message["toolCallId"] = call_id
    if outcome != "success":
        message["isError"] = True
    message["toolName"] = name
    message["outcome"] = outcome
    return message


def _response_blocks(response: Any, where: str, strict: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for index, part in enumerate(response.parts):
        kind = part.part_kind
        if kind == "text":
            blocks.append(_text(part.content))
        elif kind == "thinking":
            block = {"type": "reasoning", "text": part.content}
            if part.signature is not None:
                block["signature"] = part.signature
            blocks.append(block)
        elif kind == "tool-call":
            arguments = part.args_as_json_str()
            blocks.append(
                {
                    "type": "tool-call",
                    "id": part.tool_call_id,
                    "name": part.tool_name,
                    "arguments": arguments,
                }
            )
        elif kind == "compaction":
            blocks.append({"type": "compaction", "text": part.content})
        elif strict:
            raise ConversionError(f"{where} part {index} ({kind!r}) has no agentlog form")
    return blocks


def response_message(response: Any, where: str, *, strict: bool = True) -> dict[str, Any]:
    """The agentlog assistant message of one ``ModelResponse``.

    Raises:
        ConversionError: (strict) for a part with no agentlog form.
    """
    source = {
        "kind": "model",
        "provider": response.provider_name or _PROVIDER,
        "model": response.model_name or "unknown",
    }
    return _message("assistant", _response_blocks(response, where, strict), source)


def from_model_messages(model_messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Convert Pydantic AI messages to agentlog messages (see the module docstring).

    Raises:
        ConversionError: naming the first part with no agentlog form.
    """
    messages = list(model_messages)
    dumps = _adapter().dump_python(messages, mode="json")
    result: list[dict[str, Any]] = []
    for index, (message, dump) in enumerate(zip(messages, dumps, strict=True)):
        if message.kind == "response":
            converted = response_message(message, f"message {index}")
            converted[CARRY_KEY] = {"response": dump}
            result.append(converted)
            continue
        envelope = {key: value for key, value in dump.items() if key != "parts"}
        for part_index, part in enumerate(message.parts):
            shown = message_of_part(part, f"message {index} part {part_index}")
            assert shown is not None  # strict
            carry: dict[str, Any] = {"part": dump["parts"][part_index]}
            if part_index == 0:
                carry["request"] = envelope
            shown[CARRY_KEY] = carry
            result.append(shown)
    return result


def _still(message: Mapping[str, Any], carry: Mapping[str, Any]) -> bool:
    """Whether ``message`` still holds what its carried original converts to."""
    fresh: Mapping[str, Any]
    if "response" in carry:
        original = _adapter().validate_python([carry["response"]])[0]
        fresh = response_message(original, "carried", strict=False)
    else:
        request = _adapter().validate_python([{"kind": "request", "parts": [carry["part"]]}])[0]
        fresh = message_of_part(request.parts[0], "carried", strict=False) or {}
    keys = ("role", "content", "toolCallId", "isError", "outcome")
    return all(fresh.get(key) == message.get(key) for key in keys)


def to_model_messages(messages: Iterable[Mapping[str, Any]]) -> list[Any]:
    """Convert agentlog messages to Pydantic AI ``ModelRequest`` / ``ModelResponse`` messages.

    Consecutive system, user and tool messages make one ``ModelRequest``; each assistant
    message one ``ModelResponse``.

    Raises:
        ConversionError: for a block with no Pydantic AI form, or a tool message whose tool
            name is unknown.
    """
    dumps: list[dict[str, Any]] = []
    request: dict[str, Any] | None = None
    names: dict[str, str] = {}
    for index, message in enumerate(messages):
        carry = message.get(CARRY_KEY)
        if carry is not None and not _still(message, carry):
            carry = None
        if message.get("role") == "assistant":
            request = None
            dumps.append(carry["response"] if carry else _response(message, index))
            for block in message.get("content") or ():
                if block.get("type") == "tool-call":
                    names[block["id"]] = block["name"]
            continue
        if request is None or (carry is not None and "request" in carry):
            request = {**(carry or {}).get("request", {}), "kind": "request", "parts": []}
            dumps.append(request)
        request["parts"].append(carry["part"] if carry else _part(message, index, names))
    return _adapter().validate_python(dumps)  # type: ignore[no-any-return]


def _joined(message: Mapping[str, Any], index: int) -> str:
    texts = []
    for block in message.get("content") or ():
        if block.get("type") != "text":
            raise ConversionError(
                f"message {index} ({message.get('role')}) block ({block.get('type')!r}) has no "
                "Pydantic AI form"
            )
        texts.append(block["text"])
    return "".join(texts)


def _part(message: Mapping[str, Any], index: int, names: Mapping[str, str]) -> dict[str, Any]:
    role = message.get("role")
    if role in ("system", "developer"):
        return {"part_kind": "system-prompt", "content": _joined(message, index)}
    if role == "tool":
        call_id = message["toolCallId"]
        name = message.get("toolName") or names.get(call_id)
        if name is None:
            raise ConversionError(
                f"message {index} (tool) answers call {call_id!r}, whose tool name is unknown"
            )
        outcome = message.get("outcome") or ("failed" if message.get("isError") else "success")
        return {
            "part_kind": "tool-return",
            "tool_name": name,
            "tool_call_id": call_id,
            "content": _joined(message, index),
            "outcome": outcome,
        }
    if role != "user":
        raise ConversionError(f"message {index} has role {role!r}, which has no Pydantic AI form")
    kind = (message.get("source") or {}).get("kind")
    if kind == "compaction-summary":
        return {"part_kind": "compaction", "content": _joined(message, index)}
    texts = list(message.get("content") or ())
    if len(texts) == 1:
        return {"part_kind": "user-prompt", "content": _joined(message, index)}
    _joined(message, index)  # refuses non-text blocks
    return {"part_kind": "user-prompt", "content": [block["text"] for block in texts]}


def _response(message: Mapping[str, Any], index: int) -> dict[str, Any]:
    parts = []
    for block in message.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            parts.append({"part_kind": "text", "content": block["text"]})
        elif kind == "reasoning":
            parts.append(
                {
                    "part_kind": "thinking",
                    "content": block["text"],
                    "signature": block.get("signature"),
                }
            )
        elif kind == "tool-call":
            parts.append(
                {
                    "part_kind": "tool-call",
                    "tool_name": block["name"],
                    "args": block["arguments"],
                    "tool_call_id": block["id"],
                }
            )
        elif kind == "compaction":
            parts.append({"part_kind": "compaction", "content": block.get("text")})
        else:
            raise ConversionError(
                f"message {index} (assistant) block ({kind!r}) has no Pydantic AI form"
            )
    source: Sequence[Any] | Mapping[str, Any] = message.get("source") or {}
    model = source.get("model") if isinstance(source, Mapping) else None
    return {"kind": "response", "parts": parts, "model_name": model}
