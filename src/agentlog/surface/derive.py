"""The per-event projection rule: which message a surface node shows the model.

Implements spec/core.md §6.1 ``deriveEventMessage`` for format 4.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentlog.values import JsonValue

__all__ = ["derive_event_message", "derive_node_messages"]

_EMPTY_MEANS_NONE = frozenset({"assistant/message", "system/message", "developer/message"})


def derive_event_message(
    event: Mapping[str, Any], projected: Mapping[int, JsonValue] | None = None
) -> JsonValue:
    """Return the message ``event`` contributes to the model history, or ``None``.

    ``user/message`` shows its data itself (the same object); ``tool/result`` its
    ``data.message``; ``assistant/message``, ``system/message`` and ``developer/message`` their
    ``data.message`` unless its content is empty; every other type shows nothing. A message
    rewritten by a projection is shown in its projected form. ``surfaceOp`` is not consulted.
    """
    if projected:
        message = projected.get(event["seq"])
        if message is not None:
            return message
    event_type = event["type"]
    if event_type == "user/message":
        return event["data"]
    if event_type == "tool/result":
        return event["data"]["message"]
    if event_type in _EMPTY_MEANS_NONE:
        message = event["data"]["message"]
        return message if message["content"] else None
    return None


def derive_node_messages(
    log: Sequence[Mapping[str, Any]],
    nodes: Iterable[int],
    projected: Mapping[int, JsonValue] | None = None,
) -> list[JsonValue]:
    """The messages of the surface nodes ``nodes`` of ``log``, in order (spec/core.md §6.2).

    ``derive_event_message`` of each node's event, with the ``None``s left out; the rule is
    inlined for a log without projected messages, so a cold history of 10^5 nodes is one loop.
    """
    if projected:
        return [
            message
            for seq in nodes
            if (message := derive_event_message(log[seq], projected)) is not None
        ]
    messages: list[JsonValue] = []
    append = messages.append
    for seq in nodes:
        event = log[seq]
        event_type = event["type"]
        if event_type == "user/message":
            append(event["data"])
        elif event_type == "tool/result":
            append(event["data"]["message"])
        elif event_type in _EMPTY_MEANS_NONE:
            message = event["data"]["message"]
            if message["content"]:
                append(message)
    return messages
