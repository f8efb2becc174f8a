"""Format 3 → 4: tool results become role ``tool``; producers own their message sources.

Implements ``session-format-v3-to-v4`` (spec/persistence.md §5.4):

* a ``tool/result`` message ``{role: "user", content: [{type: "tool-result", toolCallId,
  content, isError?}]}`` becomes ``{role: "tool", toolCallId, isError?, content}`` (same id and
  source); other wrapper fields move to ``plugin:result:<name>``, other message fields to
  ``plugin:message:<name>``;
* a message source ``{kind: "plugin", plugin: X}`` becomes a producer kind (``SOURCE_KINDS``;
  ``@deepseek-ai/dsh-system-prompt`` is ``system-prompt`` on a system message and
  ``runtime-context`` elsewhere), and ``plugin:<X>`` for any other producer;
* content blocks of an unknown type ``T`` become ``plugin:T`` (in streams too);
* an unknown event type marked ``ignorable`` becomes ``plugin:<type>``;
* a ``turn/start`` that finds the previous turn still open with no step open (a restarted
  agent) gets an ``interrupted`` ``turn/end`` inserted before it, and seqs are remapped.

Refused: a tool result without exactly one tool-result block, a tool definition with a
top-level ``deferLoading`` (a format-4 feature), an unknown required event type.

Not done (no evidence in a single log): the parent's ``subagent/catalog`` completion, which dsh
derives from the child sessions' files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentlog.formats.artifact import Artifact, Refusal
from agentlog.formats.references import Renumbering
from agentlog.formats.v2_to_v3 import SYSTEM_PROMPT_PLUGIN
from agentlog.formats.vocabulary import known_at

__all__ = ["NAME", "SOURCE_KINDS", "migrate", "source_kind"]

NAME: Final = "session-format-v3-to-v4"

SOURCE_KINDS: Final = {
    "compact": "compact-checkpoint",
    "tools-code-mode": "ptc-mode",
    "tools-ptc": "ptc-mode",
    "dsh-compaction-basic": "compact-basic",
}
"""Plugin attributions whose producers declare their own source kind in format 4."""

KNOWN_BLOCK_TYPES: Final = frozenset(
    {"text", "reasoning", "image", "file", "tool-call", "tool-addition", "tool-removal"}
)
"""Content block types of format 4 (spec/core.md §2.3); others are namespaced."""

_MESSAGE_TYPES: Final = frozenset(
    {"user/message", "assistant/message", "tool/result", "system/message"}
)
_MESSAGE_KEYS: Final = frozenset({"id", "role", "content", "source"})
_WRAPPER_KEYS: Final = frozenset({"type", "toolCallId", "content", "isError"})


def source_kind(plugin: Any, role: Any) -> str:
    """The format-4 source kind of a message a plugin attributed to itself."""
    if plugin == SYSTEM_PROMPT_PLUGIN:
        return "system-prompt" if role == "system" else "runtime-context"
    return SOURCE_KINDS.get(plugin, f"plugin:{plugin}")


def migrate(artifact: Artifact) -> Artifact:
    """Lift a format-3 artifact to format 4.

    Raises:
        Refusal: as listed in the module docstring.
    """
    session_id = artifact.session_id
    known = known_at(3)
    renumbering = Renumbering(session_id)
    out: list[Mapping[str, Any]] = []
    open_turn: Any = None
    step_open = False
    for event in artifact.events:
        event_type = event.get("type")
        data = event.get("data")
        if event_type == "turn/start":
            if open_turn is not None and not step_open:
                renumbering.inserted(len(out))
                out.append(_interrupted(open_turn, len(out), event.get("time")))
            open_turn = data.get("turn") if isinstance(data, Mapping) else None
        elif event_type == "turn/end":
            open_turn = None
        elif event_type == "step/start":
            step_open = True
        elif event_type == "step/end":
            step_open = False
        lifted = _lift(event, known, session_id)
        renumbering.keep(event["seq"], len(out))
        out.append(renumbering.event(lifted, len(out)))
    return Artifact(header={**artifact.header, "version": 4}, events=out)


def _interrupted(turn: Any, seq: int, time: Any) -> dict[str, Any]:
    return {
        "type": "turn/end",
        "seq": seq,
        "time": time,
        "data": {"turn": turn, "reason": {"kind": "interrupted"}},
    }


def _lift(event: Mapping[str, Any], known: frozenset[str], session_id: str) -> Mapping[str, Any]:
    event_type, seq, data = event.get("type"), event.get("seq"), event.get("data")
    if event_type not in known:
        if event.get("ignorable") is not True:
            raise Refusal(
                f'session "{session_id}" contains event type "{event_type}" (seq {seq}) unknown '
                "to this harness and not marked ignorable; refusing to interpret the log — it "
                "was likely written by a newer harness"
            )
        if isinstance(event_type, str) and not event_type.startswith("plugin:"):
            return {**event, "type": f"plugin:{event_type}"}
        return event
    if not isinstance(data, Mapping):
        return event
    new_data: Mapping[str, Any] = data
    if event_type == "user/message":
        new_data = _message(data, event_type, seq, session_id)
    elif event_type in _MESSAGE_TYPES and isinstance(data.get("message"), Mapping):
        new_data = {**data, "message": _message(data["message"], event_type, seq, session_id)}
    if event_type in ("assistant/message", "assistant/attempt") and isinstance(
        data.get("stream"), list
    ):
        new_data = {**new_data, "stream": [_stream_record(r) for r in data["stream"]]}
    if event_type == "request/header":
        _refuse_deferred_tools(data, seq, session_id)
    return event if new_data == data else {**event, "data": new_data}


def _message(message: Mapping[str, Any], event_type: Any, seq: Any, session_id: str) -> Any:
    role = message.get("role")
    source = message.get("source")
    changes: dict[str, Any] = {}
    if isinstance(source, Mapping) and source.get("kind") == "plugin":
        rest = {k: v for k, v in source.items() if k not in ("kind", "plugin")}
        changes["source"] = {"kind": source_kind(source.get("plugin"), role), **rest}
    content = message.get("content")
    if isinstance(content, list):
        changes["content"] = _blocks(content)
    lifted = {**message, **changes}
    if event_type == "tool/result" and role == "user":
        return _tool_message(lifted, seq, session_id)
    return lifted


def _tool_message(message: Mapping[str, Any], seq: Any, session_id: str) -> dict[str, Any]:
    content = message.get("content")
    block = content[0] if isinstance(content, list) and len(content) == 1 else None
    if not (isinstance(block, Mapping) and block.get("type") == "tool-result"):
        raise Refusal(
            f'session "{session_id}" tool/result at seq {seq} message must contain one '
            "tool-result block"
        )
    lifted: dict[str, Any] = {
        "id": message.get("id"),
        "role": "tool",
        "source": message.get("source"),
        "toolCallId": block.get("toolCallId"),
    }
    if "isError" in block:
        lifted["isError"] = block["isError"]
    inner = block.get("content")
    lifted["content"] = _blocks(inner) if isinstance(inner, list) else inner
    for key, value in block.items():
        if key not in _WRAPPER_KEYS:
            lifted[f"plugin:result:{key}"] = value
    for key, value in message.items():
        if key not in _MESSAGE_KEYS:
            lifted[f"plugin:message:{key}"] = value
    return lifted


def _block_type(block_type: Any) -> Any:
    if type(block_type) is str and block_type not in KNOWN_BLOCK_TYPES:
        return (
            block_type
            if block_type.startswith("plugin:") or block_type == "tool-result"
            else f"plugin:{block_type}"
        )
    return block_type


def _blocks(blocks: Sequence[Any]) -> list[Any]:
    lifted = []
    for block in blocks:
        if isinstance(block, Mapping) and _block_type(block.get("type")) != block.get("type"):
            block = {**block, "type": _block_type(block["type"])}
        lifted.append(block)
    return lifted


def _stream_record(record: Any) -> Any:
    """A stream record with unknown block types namespaced in its block-start/end chunk."""
    if not (isinstance(record, Mapping) and record.get("type") == "chunk"):
        return record
    chunk = record.get("chunk")
    if not isinstance(chunk, Mapping):
        return record
    if chunk.get("type") == "block-start" and _block_type(chunk.get("blockType")) != chunk.get(
        "blockType"
    ):
        return {**record, "chunk": {**chunk, "blockType": _block_type(chunk["blockType"])}}
    block = chunk.get("block")
    if chunk.get("type") == "block-end" and isinstance(block, Mapping):
        renamed = _blocks([block])[0]
        if renamed is not block:
            return {**record, "chunk": {**chunk, "block": renamed}}
    return record


def _refuse_deferred_tools(data: Mapping[str, Any], seq: Any, session_id: str) -> None:
    header = data.get("header")
    tools = header.get("tools") if isinstance(header, Mapping) else None
    if not isinstance(tools, list):
        return
    for tool in tools:
        if isinstance(tool, Mapping) and "deferLoading" in tool:
            raise Refusal(
                f'session "{session_id}" request/header at seq {seq} defines tool '
                f'"{tool.get("name")}" with deferLoading, which format 3 cannot hold'
            )
