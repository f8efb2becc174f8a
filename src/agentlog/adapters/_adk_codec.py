"""An ADK ``Event`` as agentlog event data: exact, and readable as provider messages.

Every ADK event is carried, whole, in one agentlog event under the data key ``"adk"``: its
JSON dump (``model_dump(mode="json")`` without default values, read back with
``Event.model_validate_json``; checked at write time to give back an equal event). Where the
same event also becomes an agentlog message — a user message, an assistant message with its
``tool-call`` blocks, a tool result — the text the message holds is not stored twice: the
carried dump leaves out those fields and ``"adkStripped"`` lists where to find them again,
``[part, field, offset, block]`` (part ``part``'s ``text``, ``function_call.args`` or
``function_response.response`` is block ``block`` of the message of the event ``offset`` seqs
after the carrier). The stripped dump is used only when it rebuilds the original exactly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import orjson
from google.adk.events.event import Event

from agentlog.adapters._adk_build import build

__all__ = [
    "Kind",
    "blocks",
    "carried",
    "classify",
    "decode",
    "event_payload",
    "response_text",
    "restore",
    "strip",
    "summary_text",
]

_logger = logging.getLogger("agentlog.adapters.adk")

Kind = Literal["user", "model", "responses", "other"]
"""How an ADK event maps to agentlog events (see ``classify``)."""


def event_payload(event: Event) -> dict[str, Any]:
    """The JSON dump of ``event`` that reads back as an equal event.

    Fields at their defaults are left out. An event with a field that takes any Python value is
    read back at once to check: when the short dump is not equal, every field is kept, and a
    value JSON cannot hold (an arbitrary object in ``output`` or a state delta) is stored as
    ADK's own persistent services store it, with a warning.
    """
    payload: dict[str, Any] = orjson.loads(event.model_dump_json(exclude_defaults=True))
    if not _may_not_read_back(event) or _reads_back(payload, event):
        return payload
    payload = orjson.loads(event.model_dump_json())
    if not _reads_back(payload, event):
        _logger.warning(
            "ADK event %s holds a value JSON cannot represent; it is stored as its JSON form",
            event.id,
        )
    return payload


def _may_not_read_back(event: Event) -> bool:
    """Whether ``event`` holds a field that takes any Python value (so its dump is checked).

    Every other field is typed JSON (strings, numbers, bytes, enums, nested models), which a
    dump without defaults reads back equal; checking each event would double its cost.
    """
    actions = event.actions
    return bool(
        event.output is not None
        or event.custom_metadata
        or actions.state_delta
        or actions.agent_state
        or actions.set_model_response is not None
        or actions.requested_auth_configs
        or actions.route is not None
    )


def _reads_back(payload: Mapping[str, Any], event: Event) -> bool:
    try:
        return Event.model_validate_json(orjson.dumps(payload)) == event
    except ValueError:
        return False


def _parts(payload: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    content = payload.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None  # JSON: dict, list
    return parts if isinstance(parts, list) else ()


def classify(payload: Mapping[str, Any]) -> Kind:
    """Which agentlog events an ADK event becomes.

    * ``user`` — user-role content without function calls or responses: a ``user/message``;
    * ``model`` — model-role content whose function calls all carry distinct ids: an
      ``assistant/message`` (text, reasoning and ``tool-call`` blocks) and a ``tool/call`` per
      call;
    * ``responses`` — content made only of function responses: a ``tool/result`` for each
      one that answers a pending call;
    * ``other`` — everything else (no content, mixed content, state or control events): the
      log-only ``adk/event``.
    """
    parts = _parts(payload)
    if not parts:
        return "other"
    calls = [part["function_call"] for part in parts if "function_call" in part]
    responses = sum(1 for part in parts if "function_response" in part)
    if responses:
        return "responses" if responses == len(parts) else "other"
    content = payload["content"]
    role = content.get("role") or ("user" if payload.get("author") == "user" else "model")
    if role == "model":
        ids = [call.get("id") for call in calls]
        if all(isinstance(call_id, str) and call_id for call_id in ids) and len(set(ids)) == len(
            ids
        ):
            return "model"
        return "other"
    return "other" if calls else "user"


def blocks(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One agentlog content block per part of a ``user`` or ``model`` event.

    Text becomes ``text`` (a thought: ``reasoning``), a function call a ``tool-call`` block
    with its arguments as JSON text; any other part (inline data, files, code) is named in a
    ``text`` block, its content staying in the carried event only.
    """
    found: list[dict[str, Any]] = []
    for part in _parts(payload):
        if "function_call" in part:
            call = part["function_call"]
            arguments = orjson.dumps(call.get("args") or {}).decode()
            found.append(
                {
                    "type": "tool-call",
                    "id": call["id"],
                    "name": call.get("name") or "",
                    "arguments": arguments,
                }
            )
        elif "text" in part:
            kind = "reasoning" if part.get("thought") else "text"
            found.append({"type": kind, "text": part["text"]})
        else:
            names = ", ".join(key for key in part if key not in ("thought", "thought_signature"))
            found.append({"type": "text", "text": f"[{names or 'empty part'}]"})
    return found


def response_text(response: Any) -> str:
    """The text a tool result shows for a function response: its JSON."""
    return "" if response is None else orjson.dumps(response).decode()


def summary_text(payload: Mapping[str, Any]) -> str:
    """The text of a compaction's summary (``actions.compaction.compacted_content``)."""
    content = payload["actions"]["compaction"].get("compacted_content") or {}
    texts = [part["text"] for part in content.get("parts") or () if part.get("text")]
    return "\n".join(texts) or "[compacted]"


Lookup = Callable[[int, int], Mapping[str, Any]]
"""``(offset, block)`` → the content block it names."""


def strip(
    payload: Mapping[str, Any], sources: Sequence[tuple[int, int, int, Mapping[str, Any]]]
) -> tuple[dict[str, Any], list[list[Any]]]:
    """Leave out of ``payload`` the part fields that ``sources`` hold, when that is exact.

    Args:
        payload: The event's JSON dump.
        sources: ``(part, offset, block, block value)`` for each part also written as a block.

    Returns:
        The dump to store and the ``adkStripped`` manifest (``[]``: stored whole).
    """
    parts = [dict(part) for part in _parts(payload)]
    manifest: list[list[Any]] = []
    for index, offset, block_index, block in sources:
        part = parts[index]
        field = _stored_field(part, block)
        if field is None:
            continue
        if field == "text":
            del part["text"]
        else:
            key = "function_call" if field == "args" else "function_response"
            part[key] = {name: item for name, item in part[key].items() if name != field}
        manifest.append([index, field, offset, block_index])
    if not manifest:
        return dict(payload), []
    stripped = {**payload, "content": {**payload["content"], "parts": parts}}
    blocks_by_source = {(offset, block_index): block for _, offset, block_index, block in sources}
    # Key order may differ (a restored field comes last); the event read back does not.
    if restore(stripped, manifest, lambda o, b: blocks_by_source[(o, b)]) != payload:
        return dict(payload), []
    return stripped, manifest


def _stored_field(part: Mapping[str, Any], block: Mapping[str, Any]) -> str | None:
    """Which field of ``part`` ``block`` holds (the caller checks it rebuilds exactly)."""
    if "text" in part and block.get("type") in ("text", "reasoning"):
        return "text"
    call = part.get("function_call")
    if isinstance(call, Mapping) and "args" in call and block.get("type") == "tool-call":
        return "args"
    response = part.get("function_response")
    if isinstance(response, Mapping) and "response" in response and block.get("type") == "text":
        return "response"
    return None


def restore(
    payload: Mapping[str, Any], manifest: Sequence[Sequence[Any]], lookup: Lookup
) -> dict[str, Any]:
    """A copy of ``payload`` with the fields ``manifest`` lists put back from their blocks.

    (A trusted cold read restores its own plain JSON in place instead: ``_adk_read.adk_events``.)
    """
    parts = list(payload["content"]["parts"])
    for index, field, offset, block_index in manifest:
        block = lookup(offset, block_index)
        part = dict(parts[index])
        if field == "text":
            part["text"] = block["text"]
        elif field == "args":
            part["function_call"] = {
                **part["function_call"],
                "args": orjson.loads(block["arguments"]),
            }
        else:
            part["function_response"] = {
                **part["function_response"],
                "response": orjson.loads(block["text"]),
            }
        parts[index] = part
    return {**payload, "content": {**payload["content"], "parts": parts}}


def carried(data: Any) -> Mapping[str, Any] | None:
    """The ADK event dump an agentlog event's data carries, or ``None``."""
    # Event data is JSON: an object is a dict (the C check, not the abstract ``Mapping``).
    payload = data.get("adk") if isinstance(data, dict) else None
    return payload if isinstance(payload, dict) else None


def decode(data: Mapping[str, Any], lookup: Lookup) -> Event:
    """The ADK event a carrier's data holds, its stripped fields restored by ``lookup``."""
    payload = data["adk"]
    manifest = data.get("adkStripped")
    if manifest:
        payload = restore(payload, manifest, lookup)
    return build(payload)
