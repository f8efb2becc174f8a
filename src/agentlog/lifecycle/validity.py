"""Provider validity of a derived history: every tool call answered, exactly once, in place.

Model providers refuse a history in which an assistant's tool call has no result, a result
answers no call, or a result is separated from its call by another message (OpenAI: "an
assistant message with tool_calls must be followed by tool messages responding to each
tool_call_id"; Anthropic: tool results open the next user turn). ``history_problems`` lists
every such problem of a ``derive_messages()`` result; repair closers exist so that a resumed or
forked session never has one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentlog.errors import InvalidHistory

__all__ = ["check_provider_history", "history_problems"]


def history_problems(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every way ``messages`` breaks provider tool-call pairing, in history order.

    Rules: the tool calls of an assistant message are answered by ``tool`` messages that follow
    it directly (before any other message), each call exactly once; a tool message answers a
    call of the assistant message it follows. Call ids must be unique within one message.
    """
    problems: list[str] = []
    awaiting: dict[Any, Any] = {}
    answered: set[Any] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("toolCallId")
            if call_id in awaiting:
                del awaiting[call_id]
                answered.add(call_id)
            elif call_id in answered:
                problems.append(f"message {index}: tool call {call_id!r} is answered twice")
            else:
                problems.append(
                    f"message {index}: tool result for {call_id!r} answers no tool call of the "
                    "assistant message before it"
                )
            continue
        for call_id, owner in awaiting.items():
            problems.append(
                f"message {owner}: tool call {call_id!r} is not answered before message {index}"
            )
        awaiting.clear()
        answered.clear()
        if role == "assistant":
            for block in message.get("content") or ():
                if isinstance(block, Mapping) and block.get("type") == "tool-call":
                    call_id = block.get("id")
                    if call_id in awaiting:
                        problems.append(f"message {index}: tool call id {call_id!r} appears twice")
                    awaiting[call_id] = index
    for call_id, owner in awaiting.items():
        problems.append(f"message {owner}: tool call {call_id!r} is never answered")
    return problems


def check_provider_history(messages: Iterable[Mapping[str, Any]]) -> None:
    """Raise ``InvalidHistory`` when a provider would refuse ``messages``.

    Raises:
        InvalidHistory: naming the first problem; ``problems`` lists them all.
    """
    problems = history_problems(messages)
    if problems:
        raise InvalidHistory(problems[0], problems=tuple(problems))
