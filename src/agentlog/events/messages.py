"""Message model and constructors: build event data without hand-writing message dicts.

Implements the format-4 message shapes of spec/core.md §2.3 and the event payloads of §2.4.
Each ``*_event``-style constructor returns the ``data`` for one event type, ready for
``Session.append``; the content-block helpers build the blocks inside. Message ids default to a
fresh UUID.

Example:
    >>> from agentlog import Session, messages as m
    >>> s = Session.create("s", clock=lambda: 0)
    >>> _ = s.append("turn/start", {"turn": 1})
    >>> _ = s.append("user/message", m.user("List the files", id="u1"), surface_op="append")
    >>> _ = s.append("step/start", {"turn": 1, "step": 1})
    >>> _ = s.append(
    ...     "assistant/message",
    ...     m.assistant([m.tool_call("c1", "bash", '{"cmd": "ls"}')], provider="p", model="x",
    ...                 turn=1, step=1, id="a1"),
    ...     surface_op="append",
    ... )
    >>> _ = s.append("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash",
    ...                            "arguments": '{"cmd": "ls"}'})
    >>> _ = s.append("tool/result", m.tool_result("c1", "README.md", turn=1, step=1, id="r1"),
    ...              surface_op="append")
    >>> _ = s.append("step/end", {"turn": 1, "step": 1})
    >>> _ = s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    >>> [msg["role"] for msg in s.derive_messages()]
    ['user', 'assistant', 'tool']
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NotRequired, TypedDict

from agentlog.values import JsonValue

__all__ = [
    "AssistantMessage",
    "ContentBlock",
    "DeveloperMessage",
    "SystemMessage",
    "ToolResultMessage",
    "UserMessage",
    "assistant",
    "developer",
    "image",
    "new_id",
    "reasoning",
    "system",
    "text",
    "tool_call",
    "tool_result",
    "user",
]

ContentBlock = dict[str, Any]
"""A content block: ``{"type": "text" | "reasoning" | "image" | "tool-call" | ..., ...}``."""
Content = str | Iterable[ContentBlock]
"""Message content: a string (one text block) or a list of blocks."""


class UserMessage(TypedDict):
    """A ``user/message`` payload: the message itself."""

    id: str
    role: Literal["user"]
    content: list[ContentBlock]
    source: dict[str, Any]


class AssistantMessage(TypedDict):
    """The message inside ``assistant/message`` data."""

    id: str
    role: Literal["assistant"]
    content: list[ContentBlock]
    source: dict[str, Any]


class ToolResultMessage(TypedDict):
    """The role-``tool`` message inside ``tool/result`` data."""

    id: str
    role: Literal["tool"]
    toolCallId: str
    isError: NotRequired[bool]
    content: list[ContentBlock]
    source: dict[str, Any]


class SystemMessage(TypedDict):
    """The message inside ``system/message`` data; empty content means no system prompt."""

    id: str
    role: Literal["system"]
    content: list[ContentBlock]
    source: dict[str, Any]


class DeveloperMessage(TypedDict):
    """The message inside ``developer/message`` data: tool additions and removals."""

    id: str
    role: Literal["developer"]
    content: list[ContentBlock]
    source: dict[str, Any]


_RANDOM: list[int] = []
"""128-bit random values read ahead from ``os.urandom`` for ``new_id`` (``list.pop`` is atomic,
so threads never share one; emptied in a forked child, which must not repeat its parent's)."""
_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)

os.register_at_fork(after_in_child=_RANDOM.clear)


def new_id() -> str:
    """A fresh message id: a random (version 4) UUID, as ``str(uuid.uuid4())`` gives it.

    The same bits as ``uuid4`` (16 bytes of ``os.urandom``, version and variant set), read
    4 KiB at a time and formatted directly: the loop makes two ids per tool step, and
    ``uuid.UUID``'s checks plus one ``getrandom`` call per id cost more than the rest of it.
    """
    try:
        value = _RANDOM.pop()
    except IndexError:
        block = os.urandom(4096)
        _RANDOM.extend(int.from_bytes(block[i : i + 16], "big") for i in range(0, 4096, 16))
        value = _RANDOM.pop()
    h = f"{value & _UUID4_CLEAR | _UUID4_SET:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _content(content: Content) -> list[ContentBlock]:
    return [text(content)] if isinstance(content, str) else [dict(block) for block in content]


# --- content blocks -----------------------------------------------------------------------


def text(value: str) -> ContentBlock:
    """A ``text`` block."""
    return {"type": "text", "text": value}


def reasoning(value: str) -> ContentBlock:
    """A ``reasoning`` (thinking) block."""
    return {"type": "reasoning", "text": value}


def tool_call(call_id: str, name: str, arguments: str) -> ContentBlock:
    """A ``tool-call`` block; ``arguments`` is the raw JSON text the model produced."""
    return {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}


def image(
    attachment_id: str,
    media_type: str,
    *,
    size: int,
    width: int,
    height: int,
    name: str | None = None,
) -> ContentBlock:
    """An ``image`` block: a durable reference to stored bytes, never the bytes themselves."""
    attachment: dict[str, Any] = {
        "attachmentId": attachment_id,
        "mediaType": media_type,
        "bytes": size,
        "width": width,
        "height": height,
    }
    if name is not None:
        attachment["name"] = name
    return {"type": "image", "attachment": attachment}


# --- event payloads -----------------------------------------------------------------------


def user(
    content: Content, *, id: str | None = None, source: Mapping[str, Any] | None = None
) -> UserMessage:
    """Data for ``user/message``: a user-role message (the data *is* the message).

    Args:
        content: Text, or a list of content blocks.
        id: The message id (default: a fresh UUID).
        source: The producer, ``{"kind": "user"}`` by default; injected context uses its own
            kind (e.g. ``{"kind": "runtime-context"}``).
    """
    return {
        "id": id or new_id(),
        "role": "user",
        "content": _content(content),
        "source": dict(source) if source is not None else {"kind": "user"},
    }


def assistant(
    content: Content,
    *,
    provider: str,
    model: str,
    turn: int,
    step: int,
    stream: Iterable[Mapping[str, Any]] = (),
    usage: Mapping[str, Any] | None = None,
    id: str | None = None,
) -> dict[str, Any]:
    """Data for ``assistant/message``: a settled model reply with its stream records.

    Args:
        content: Text, or blocks (``text``, ``reasoning``, ``tool_call``, ``image``).
        provider: The provider that produced it.
        model: The model that produced it.
        turn: The open turn.
        step: The open step.
        stream: The attempt's stream records (see ``agentlog.events.stream``).
        usage: Token usage ``{inputTokens, outputTokens, ...}``.
        id: The message id (default: a fresh UUID).
    """
    message: AssistantMessage = {
        "id": id or new_id(),
        "role": "assistant",
        "content": _content(content),
        "source": {"kind": "model", "provider": provider, "model": model},
    }
    data: dict[str, Any] = {
        "turn": turn,
        "step": step,
        "message": message,
        "stream": [dict(record) for record in stream],
    }
    if usage is not None:
        data["usage"] = dict(usage)
    return data


def tool_result(
    call_id: str,
    content: Content,
    *,
    turn: int,
    step: int,
    is_error: bool | None = None,
    error: Mapping[str, Any] | None = None,
    meta: JsonValue = None,
    id: str | None = None,
) -> dict[str, Any]:
    """Data for ``tool/result``: the role-``tool`` answer to call ``call_id``.

    Args:
        call_id: The ``tool-call`` block id being answered.
        content: Text, or content blocks.
        turn: The turn of the call.
        step: The step of the call.
        is_error: Whether the tool failed (required ``True`` when ``error`` is given).
        error: ``{"name", "code", "reason"?}`` describing a failure.
        meta: Producer-defined JSON kept beside the message.
        id: The message id (default: a fresh UUID).
    """
    message: ToolResultMessage = {
        "id": id or new_id(),
        "role": "tool",
        "toolCallId": call_id,
        "content": _content(content),
        "source": {"kind": "tool", "callId": call_id},
    }
    if is_error is not None:
        message["isError"] = is_error
    data: dict[str, Any] = {"turn": turn, "step": step, "message": message}
    if error is not None:
        data["error"] = dict(error)
    if meta is not None:
        data["meta"] = meta
    return data


def system(prompt: str, *, turn: int, step: int, id: str | None = None) -> dict[str, Any]:
    """Data for ``system/message``: the system prompt (an empty prompt means none)."""
    message: SystemMessage = {
        "id": id or new_id(),
        "role": "system",
        "content": [text(prompt)] if prompt else [],
        "source": {"kind": "system-prompt"},
    }
    return {"turn": turn, "step": step, "message": message}


def developer(
    *,
    turn: int,
    step: int,
    additions: Iterable[str] = (),
    removals: Iterable[str] = (),
    header_seq: int | None = None,
    source_kind: str = "tool-registry",
    id: str | None = None,
) -> dict[str, Any]:
    """Data for ``developer/message``: tools added to or removed from the model's view.

    Args:
        turn: The open turn.
        step: The open step.
        additions: Names of added tools; each must be defined by the ``request/header`` at
            ``header_seq``.
        removals: Names of removed tools.
        header_seq: Seq of the defining ``request/header``; required exactly when there are
            additions.
        source_kind: The producer (``tool-registry`` by default).
        id: The message id (default: a fresh UUID).
    """
    content = [{"type": "tool-addition", "toolName": name} for name in additions]
    content += [{"type": "tool-removal", "toolName": name} for name in removals]
    message: DeveloperMessage = {
        "id": id or new_id(),
        "role": "developer",
        "content": content,
        "source": {"kind": source_kind},
    }
    data: dict[str, Any] = {"turn": turn, "step": step, "message": message}
    if header_seq is not None:
        data["headerSeq"] = header_seq
    return data
