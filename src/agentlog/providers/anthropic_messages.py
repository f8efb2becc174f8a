"""Derived messages → the ``system`` and ``messages`` of an Anthropic Messages request.

Implements the Messages side of spec/plugins.md §5.1–§5.2 and the replay envelope of §5.5 over
the derived messages of spec/core.md §2.3; ``Anthropic`` sends exactly what ``to_anthropic``
returns.

* The leading ``system`` messages become the request's ``system`` string. A system message
  later in the history (a prompt changed in place) and a developer message (tools added or
  removed) become user text at their position, since the API has no such role mid-history.
* Tool results become ``tool_result`` blocks (``is_error`` for ``isError``) in a user message.
  Consecutive messages of one role are merged into one, as the API requires: the results of
  parallel tool calls travel together, right after the assistant turn that called them.
* An assistant message's text and tool calls become ``text`` and ``tool_use`` blocks (the raw
  argument text parsed into ``input``). Its reasoning blocks become signed ``thinking`` (or
  ``redacted_thinking``) blocks only when its replay envelope (``source.replayState``) was
  written by ``Anthropic`` for the very model the request goes to, block for block; otherwise
  the reasoning is not sent at all (a signature is not portable across models, §5.5, and
  unsigned thinking is refused). Any other provider's envelope is ignored.
* Images and files become reference text (the log keeps no bytes), offloaded images their
  placeholder; empty text blocks are left out (the API refuses them).

The envelope ``Anthropic`` writes on its ``finish`` chunk: ``{"response": {"kind":
"anthropic-messages", "version": 1, "model", "responseModel"?, "responseId"?, "stopReason"?},
"blocks": [...]}``, one entry per emitted content block: ``{"type": "text"}``, ``{"type":
"tool-call"}``, ``{"type": "reasoning", "signature"}`` or ``{"type": "reasoning", "redacted":
true, "data"}``.

Example:
    >>> from agentlog.providers import to_anthropic
    >>> request = to_anthropic([
    ...     {"id": "s", "role": "system", "content": [{"type": "text", "text": "Be brief."}],
    ...      "source": {"kind": "system-prompt"}},
    ...     {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}],
    ...      "source": {"kind": "user"}},
    ... ])
    >>> request["system"]
    'Be brief.'
    >>> request["messages"]
    [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from agentlog.providers._content import check_message, developer_text, same_model, text_of

__all__ = ["ENVELOPE_KIND", "ENVELOPE_VERSION", "to_anthropic"]

ENVELOPE_KIND: Final = "anthropic-messages"
"""``replayState.response.kind`` of the envelopes ``Anthropic`` writes."""
ENVELOPE_VERSION: Final = 1
"""``replayState.response.version`` of the envelopes ``Anthropic`` writes."""


def to_anthropic(
    messages: Iterable[Mapping[str, Any]], *, model: str | None = None
) -> dict[str, Any]:
    """Convert derived messages into an Anthropic request's ``system`` and ``messages``.

    Args:
        messages: Derived messages, as ``Session.derive_messages()`` returns them.
        model: The model the request goes to; signed thinking this model produced is echoed
            back (``None``: no thinking is sent).

    Returns:
        ``{"system": str | None, "messages": [...]}`` of new plain values.

    Raises:
        ValueError: A message has no role or content list, or an unknown role.
    """
    system: list[str] = []
    wire: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role, blocks = check_message(message, index)
        if role == "system":
            text = "\n\n".join(t for b in blocks if (t := text_of(b)))
            if text and not wire:
                system.append(text)
            elif text:
                _add(wire, "user", [_text(text)])
        elif role == "developer":
            text = developer_text(blocks)
            if text:
                _add(wire, "user", [_text(text)])
        elif role == "user":
            _add(wire, "user", [_text(t) for b in blocks if (t := text_of(b))])
        elif role == "assistant":
            _add(wire, "assistant", _assistant(message, blocks, model))
        elif role == "tool":
            _add(wire, "user", [_tool_result(message, blocks)])
        else:
            raise ValueError(f"messages[{index}] has an unknown role {role!r}")
    return {"system": "\n\n".join(system) if system else None, "messages": wire}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _add(wire: list[dict[str, Any]], role: str, content: list[dict[str, Any]]) -> None:
    """Append ``content`` as a ``role`` turn, merged into the previous turn of the same role."""
    if not content:
        return
    if wire and wire[-1]["role"] == role:
        wire[-1]["content"].extend(content)
    else:
        wire.append({"role": role, "content": content})


def _replay_blocks(message: Mapping[str, Any], count: int, model: str | None) -> list[Any] | None:
    """The envelope's per-block entries if ``message`` may be replayed natively to ``model``."""
    if not same_model(message, model):
        return None
    state = message["source"].get("replayState")
    if not isinstance(state, Mapping):
        return None
    response = state.get("response")
    blocks = state.get("blocks")
    if (
        not isinstance(response, Mapping)
        or response.get("kind") != ENVELOPE_KIND
        or response.get("version") != ENVELOPE_VERSION
        or response.get("model") != model
        or not isinstance(blocks, list)
        or len(blocks) != count
    ):
        return None
    return blocks


def _assistant(
    message: Mapping[str, Any], blocks: list[Mapping[str, Any]], model: str | None
) -> list[dict[str, Any]]:
    replay = _replay_blocks(message, len(blocks), model)
    content: list[dict[str, Any]] = []
    for i, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            content.append(_text(block["text"]))
        elif kind == "tool-call":
            content.append(
                {
                    "type": "tool_use",
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "input": _input(block.get("arguments")),
                }
            )
        elif kind == "reasoning" and replay is not None:
            thinking = _thinking(block, replay[i])
            if thinking is not None:
                content.append(thinking)
    return content


def _thinking(block: Mapping[str, Any], entry: Any) -> dict[str, Any] | None:
    """A signed thinking block from a reasoning block and its envelope entry, if it has one."""
    if not isinstance(entry, Mapping) or entry.get("type") != "reasoning":
        return None
    if entry.get("redacted") is True and isinstance(entry.get("data"), str):
        return {"type": "redacted_thinking", "data": entry["data"]}
    signature = entry.get("signature")
    text = block.get("text")
    if isinstance(signature, str) and signature and isinstance(text, str):
        return {"type": "thinking", "thinking": text, "signature": signature}
    return None


def _input(arguments: Any) -> dict[str, Any]:
    """A tool call's ``input`` object from the model's raw argument text.

    Empty or unparseable text (the loop answered such a call with an error result, §4.6) is
    sent as ``{}``: the API accepts only an object here.
    """
    if not isinstance(arguments, str) or not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _tool_result(message: Mapping[str, Any], blocks: list[Mapping[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message.get("toolCallId"),
        "content": [_text(t) for b in blocks if (t := text_of(b))],
    }
    if message.get("isError") is True:
        result["is_error"] = True
    return result
