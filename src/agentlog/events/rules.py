"""Per-type data rules, checked wherever an event joins a log (append, seeds, folds).

Implements spec/core.md §4 step 7 (``validateSessionEventData``: developer role, tool-change
blocks, ``headerSeq`` presence, request-header and tool-result payloads) and the seed-time shape
checks of §9.1 step 4 (request-header fields of §7.4, settlement fields, message shape of §9.2).
The reference runs the latter only on seeds; agentlog runs both on every entry path (DESIGN
decision 5), so what ``append`` accepts always reopens.

Checks raise ``RuleViolation`` with the text *after* the subject; the caller prefixes the
subject of its entry path (``session event "<type>" at seq <n>`` for append,
``seed <type> at index <i>`` for seeds), giving the exact catalogue texts E34–E58.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from agentlog.values import is_safe_integer, is_seq

__all__ = [
    "RuleViolation",
    "check_event",
    "check_event_data",
    "check_event_shape",
    "event_message",
]


class RuleViolation(Exception):
    """A data rule failed; ``str()`` is the catalogue text without its subject."""


def event_message(event_type: str, data: Any) -> Any:
    """The message a surface event carries: ``data`` for ``user/message``, else ``data.message``.

    Returns ``None`` when ``data`` holds no message.
    """
    if event_type == "user/message":
        return data
    return data.get("message") if isinstance(data, dict) else None


# --- §4 step 7: validateSessionEventData -------------------------------------------------

_TOOL_CHANGE_BLOCKS: Final = frozenset({"tool-addition", "tool-removal"})


def _check_message_data(event_type: str, data: Any) -> None:
    message = event_message(event_type, data)
    role = message.get("role") if isinstance(message, dict) else None
    is_developer = role == "developer"
    if (event_type == "developer/message") != is_developer:
        raise RuleViolation("developer/message and developer role must occur together")
    content = message.get("content") if isinstance(message, dict) else None
    has_additions = False
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            block_type = block.get("type")
            if block_type not in _TOOL_CHANGE_BLOCKS:
                continue
            if not is_developer:
                raise RuleViolation("tool-change blocks require developer role")
            tool_name = block.get("toolName")
            if not isinstance(tool_name, str) or not tool_name:
                raise RuleViolation(f"{block_type} requires a nonempty toolName")
            if block_type == "tool-addition":
                if "tool" in block:
                    raise RuleViolation("tool-addition must omit inline tool definitions")
                has_additions = True
    # A headerSeq that is not a seq counts as absent: the reference reports the pairing rule.
    if is_developer and has_additions != (isinstance(data, dict) and is_seq(data.get("headerSeq"))):
        raise RuleViolation("requires headerSeq exactly when tool additions are present")


def _check_request_header_data(data: Any) -> None:
    if not isinstance(data, dict):
        raise RuleViolation("data must be an object")
    header = data.get("header")
    if not isinstance(header, dict):
        raise RuleViolation("header must be an object")
    if "system" in header:
        raise RuleViolation("must omit header.system; use system/message")
    tools = header.get("tools")
    if isinstance(tools, list) and not tools:
        raise RuleViolation("must omit empty tools")
    if isinstance(header.get("adapterDefaults"), dict) and not header["adapterDefaults"]:
        raise RuleViolation("must omit empty adapterDefaults")


def _check_tool_result_data(data: Any) -> None:
    if not isinstance(data, dict):
        raise RuleViolation("data must be an object")
    _check_message_data("tool/result", data)
    if "error" in data:
        message = data.get("message")
        if not isinstance(message, dict) or message.get("isError") is not True:
            raise RuleViolation("error requires message.isError === true")


def check_event_data(event_type: str, data: Any) -> None:
    """Run the format-4 data rules of spec/core.md §4 step 7 (texts E49–E58).

    Raises:
        RuleViolation: with the catalogue text after the subject.
    """
    if event_type == "tool/result":
        _check_tool_result_data(data)
    elif event_type in _MESSAGE_TYPES:
        _check_message_data(event_type, data)
    elif event_type == "request/header":
        _check_request_header_data(data)


# --- §9.1 step 4: header fields, settlement fields, message shape ------------------------

_REASONS: Final = frozenset({"initial", "resume", "change", "series"})
_ADAPTER_MARKERS: Final = frozenset({"reasoningEffort", "maxTokens"})


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _check_request_header_fields(data: Any) -> None:
    """spec/core.md §7.4 seed validation of headers (texts E34–E38)."""
    header = data["header"]
    config = header.get("config")
    if not (
        isinstance(config, dict)
        and _nonempty_str(config.get("provider"))
        and _nonempty_str(config.get("model"))
    ):
        raise RuleViolation("lacks provider/model")
    if "reasoningEffort" in config and not _nonempty_str(config["reasoningEffort"]):
        raise RuleViolation("has an invalid reasoningEffort")
    if "adapterDefaults" in header:
        defaults = header["adapterDefaults"]
        if (
            not isinstance(defaults, dict)
            or not _ADAPTER_MARKERS.issuperset(defaults)
            or any(value is not True or key not in config for key, value in defaults.items())
        ):
            raise RuleViolation("has invalid adapterDefaults")
    if data.get("reason") not in _REASONS:
        raise RuleViolation("has an invalid reason")
    if "startsSeries" in data and data["startsSeries"] is not True:
        raise RuleViolation("has an invalid startsSeries marker")


def _is_counter(value: Any) -> bool:
    return is_safe_integer(value) and value >= 0


def _check_settlement_fields(data: Any) -> None:
    """spec/core.md §2.5: ``turn``/``step`` non-negative safe integers, ``stream`` a list (E39)."""
    if not (
        isinstance(data, dict)
        and _is_counter(data.get("turn"))
        and _is_counter(data.get("step"))
        and isinstance(data.get("stream"), list)
    ):
        raise RuleViolation("has invalid settlement fields")


_ROLES: Final = {
    "system/message": "system",
    "developer/message": "developer",
    "user/message": "user",
    "assistant/message": "assistant",
    "tool/result": "tool",
}
_MESSAGE_TYPES: Final = frozenset(_ROLES)


def _check_message_shape(event_type: str, data: Any) -> None:
    """spec/core.md §9.2 ``assertMessageEventShape`` for format 4 (texts E40–E48)."""
    message = event_message(event_type, data)
    if not isinstance(message, dict) or not _nonempty_str(message.get("id")):
        raise RuleViolation("lacks an identified message")
    role = _ROLES[event_type]
    if message.get("role") != role:
        raise RuleViolation(f'message must have role "{role}"')
    source = message.get("source")
    if not isinstance(source, dict) or not _nonempty_str(source.get("kind")):
        raise RuleViolation("message has invalid source")
    if not isinstance(message.get("content"), list):
        raise RuleViolation("message has invalid content")
    kind = source["kind"]
    if event_type == "system/message":
        if kind != "system-prompt":
            raise RuleViolation("message must have system-prompt source")
    elif event_type == "assistant/message":
        if not (
            kind == "model"
            and _nonempty_str(source.get("provider"))
            and _nonempty_str(source.get("model"))
        ):
            raise RuleViolation("message must have model source")
    elif event_type == "tool/result":
        if kind != "tool" or not _nonempty_str(source.get("callId")):
            raise RuleViolation("message must have tool source")
        if message.get("toolCallId") != source["callId"]:
            raise RuleViolation("message has mismatched tool call ids")


def _shape_assistant_message(data: Any) -> None:
    _check_settlement_fields(data)
    _check_message_shape("assistant/message", data)


def _shape_of(event_type: str) -> Callable[[Any], None]:
    return lambda data: _check_message_shape(event_type, data)


_SHAPES: Final[dict[str, Callable[[Any], None]]] = {
    "request/header": _check_request_header_fields,
    "assistant/attempt": _check_settlement_fields,
    "assistant/message": _shape_assistant_message,
    "system/message": _shape_of("system/message"),
    "developer/message": _shape_of("developer/message"),
    "user/message": _shape_of("user/message"),
    "tool/result": _shape_of("tool/result"),
}


def check_event_shape(event_type: str, data: Any) -> None:
    """Run the seed-time shape checks of spec/core.md §9.1 step 4 (texts E34–E48).

    Assumes ``check_event_data`` passed (a request header's ``data.header`` is an object).

    Raises:
        RuleViolation: with the catalogue text after the subject.
    """
    shape = _SHAPES.get(event_type)
    if shape is not None:
        shape(data)


def check_event(event_type: str, data: Any) -> None:
    """Run every per-type rule, in the spec's order: data rules, then shape checks."""
    check_event_data(event_type, data)
    check_event_shape(event_type, data)
