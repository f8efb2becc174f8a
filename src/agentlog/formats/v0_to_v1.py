"""Format 0 → 1: the bounded normalisations of dsh's pre-release shapes.

Implements ``session-format-v0-to-v1`` (spec/persistence.md §5.4, with the narrow import
upgrades of §5.1 and scenarios 9–11 of §2.9). Formats 0 and 1 share one physical layout, so the
header changes only its version. Events keep their seqs; these shapes are rewritten:

* ``steering/message`` → ``user/message`` (wrapped ``{turn, message}`` or flat
  ``{turn, content, source}``);
* pre-identity messages get ids ``legacy-message:<session id>:<seq>``: a ``user/message``
  without ``id`` and ``role`` gains both; ``assistant/message {content, provenance}`` becomes
  ``{message: {id, role: "assistant", content, source: {...provenance, kind: "model"}}}``;
  ``tool/result {callId, content, isError}`` becomes a one-block tool-result message (a
  replacing result inherits the id of the node it replaces);
* ``turn/start.trigger`` is dropped (after checking it); retired ``turn/end`` reasons are mapped
  (bare ``aborted`` → ``aborted/legacy``, ``disposed`` → ``aborted/disposed``, an error with a
  failure or a message → ``{kind: "error", error}``);
* ``request/header.header.messagePrefix`` is dropped, ``compact/*`` events are named
  ``compaction/*``.

Refused: ``request/header-delta``, ``mode/set``, a ``request/header`` with reason ``fallback``,
malformed legacy shapes, and types unknown to format 1 that are not ``ignorable``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentlog.formats.artifact import Artifact, Refusal
from agentlog.formats.vocabulary import refuse_unknown_types
from agentlog.values import MAX_SAFE_INTEGER

__all__ = ["NAME", "migrate"]

NAME: Final = "session-format-v0-to-v1"

_PLAIN_REASONS: Final = frozenset({"completed", "max-tokens", "interrupted"})
_TOOL_RESULT_WRAPPER_KEYS: Final = ("callId", "content", "isError")


def migrate(artifact: Artifact) -> Artifact:
    """Normalise a format-0 artifact into format 1.

    Raises:
        Refusal: for a retired or malformed legacy shape, or an undeclared required type.
    """
    session_id = artifact.session_id
    message_ids: dict[int, str] = {}
    events = []
    for event in artifact.events:
        normalized = _normalize(event, session_id, message_ids)
        _remember_message_id(normalized, message_ids)
        events.append(normalized)
    refuse_unknown_types(events, 1, session_id)
    return Artifact(header={**artifact.header, "version": 1}, events=events)


def _normalize(
    event: Mapping[str, Any], session_id: str, message_ids: Mapping[int, str]
) -> Mapping[str, Any]:
    event_type, seq, data = event.get("type"), event.get("seq"), event.get("data")

    def refuse(what: str) -> Refusal:
        return Refusal(f'session "{session_id}" contains {what} at seq {seq}')

    def legacy_id() -> str:
        return f"legacy-message:{session_id}:{seq}"

    if event_type == "request/header-delta":
        raise refuse("unsupported legacy request/header-delta event")
    if event_type == "mode/set":
        raise refuse("unsupported legacy mode/set event")
    if not isinstance(data, Mapping):
        return event
    if isinstance(event_type, str) and event_type.startswith("compact/"):
        return {**event, "type": "compaction/" + event_type.removeprefix("compact/")}
    if event_type == "request/header":
        if data.get("reason") == "fallback":
            raise refuse('unsupported legacy request/header reason "fallback"')
        header = data.get("header")
        if isinstance(header, Mapping) and "messagePrefix" in header:
            header = {key: value for key, value in header.items() if key != "messagePrefix"}
            return {**event, "data": {**data, "header": header}}
        return event
    if event_type == "turn/start" and "trigger" in data:
        trigger = data["trigger"]
        if not (
            data.keys() == {"turn", "trigger"}
            and _is_turn(data["turn"])
            and isinstance(trigger, Mapping)
            and type(trigger.get("kind")) is str
            and trigger["kind"] != ""
        ):
            raise refuse("malformed pre-react-loop turn/start")
        return {**event, "data": {"turn": data["turn"]}}
    if event_type == "turn/end":
        reason = _turn_end_reason(data.get("reason"))
        if reason is None:
            raise refuse("malformed pre-react-loop turn/end")
        return (
            event if reason is data.get("reason") else {**event, "data": {**data, "reason": reason}}
        )
    if event_type == "steering/message":
        message = _steering_message(data, legacy_id)
        if message is None:
            raise refuse("malformed pre-react-loop steering/message")
        return {**event, "type": "user/message", "data": message}
    if event_type == "user/message" and "id" not in data and "role" not in data:
        return {**event, "data": {**data, "id": legacy_id(), "role": "user"}}
    if event_type == "assistant/message" and "message" not in data and "content" in data:
        provenance = data.get("provenance")
        source = {**provenance, "kind": "model"} if isinstance(provenance, Mapping) else {}
        message = {
            "id": legacy_id(),
            "role": "assistant",
            "content": data["content"],
            "source": source or {"kind": "model"},
        }
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        return {**event, "data": {**rest, "message": message}}
    if event_type == "tool/result" and "message" not in data and "callId" in data:
        return {**event, "data": _tool_result(event, data, message_ids, legacy_id())}
    return event


def _is_turn(value: object) -> bool:
    return type(value) is int and 1 <= value <= MAX_SAFE_INTEGER


def _turn_end_reason(reason: object) -> object | None:
    """The current form of a ``turn/end`` reason, ``reason`` itself when current, or None.

    Mappings of spec/persistence.md §2.9 scenario 10; an unknown (extension) kind passes.
    """
    if not isinstance(reason, Mapping):
        return None
    kind = reason.get("kind")
    extra = reason.keys() - {"kind"}
    if type(kind) is not str or kind == "":
        return None
    if kind in _PLAIN_REASONS:
        return reason if not extra else None
    if kind == "disposed":
        return {"kind": "aborted", "reason": {"kind": "disposed"}} if not extra else None
    if kind == "aborted":
        if not extra:
            return {"kind": "aborted", "reason": {"kind": "legacy"}}
        return reason if extra == {"reason"} else None
    if kind == "error":
        if extra == {"error"}:
            return reason
        legacy = extra - {"step"}
        failure = reason.get("failure")
        if legacy == {"failure"} and isinstance(failure, Mapping):
            return {"kind": "error", "error": failure}
        message, code = reason.get("message"), reason.get("code", "UNKNOWN")
        if "message" in legacy and legacy <= {"message", "code"} and type(message) is str:
            return {"kind": "error", "error": {"message": message, "code": code}}
        return None
    return reason


def _steering_message(data: Mapping[str, Any], legacy_id: Any) -> Mapping[str, Any] | None:
    """The user message of a ``steering/message``, wrapped or flat; None when malformed."""
    if not _is_turn(data.get("turn")):
        return None
    if "message" in data:
        message = data["message"]
        if data.keys() != {"turn", "message"} or not isinstance(message, Mapping):
            return None
        if "id" in message or "role" in message:
            return message
        return {**message, "id": legacy_id(), "role": "user"}
    if not isinstance(data.get("content"), list):
        return None
    flat = {key: value for key, value in data.items() if key != "turn"}
    return {**flat, "id": legacy_id(), "role": "user"}


def _tool_result(
    event: Mapping[str, Any],
    data: Mapping[str, Any],
    message_ids: Mapping[int, str],
    legacy_id: str,
) -> dict[str, Any]:
    """``tool/result {callId, content, isError}`` as a one-block tool-result message."""
    call_id = data["callId"]
    block: dict[str, Any] = {
        "type": "tool-result",
        "toolCallId": call_id,
        "content": data.get("content"),
    }
    if "isError" in data:
        block["isError"] = data["isError"]
    message_id = legacy_id
    surface_op = event.get("surfaceOp")
    if isinstance(surface_op, Mapping) and surface_op.get("op") == "replace":
        # A replacing result (a pruned output) is the same message as the one it replaces.
        message_id = message_ids.get(surface_op.get("start"), legacy_id)  # type: ignore[arg-type]
    rest = {k: v for k, v in data.items() if k not in _TOOL_RESULT_WRAPPER_KEYS}
    return {
        **rest,
        "message": {
            "id": message_id,
            "role": "user",
            "content": [block],
            "source": {"kind": "tool", "callId": call_id},
        },
    }


def _remember_message_id(event: Mapping[str, Any], message_ids: dict[int, str]) -> None:
    data = event.get("data")
    if not isinstance(data, Mapping) or type(event.get("seq")) is not int:
        return
    event_type = event.get("type")
    message = data if event_type == "user/message" else data.get("message")
    if event_type in ("user/message", "assistant/message", "tool/result") and isinstance(
        message, Mapping
    ):
        message_id = message.get("id")
        if type(message_id) is str:
            message_ids[event["seq"]] = message_id
