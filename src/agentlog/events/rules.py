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

from agentlog.values import MAX_SAFE_INTEGER, is_safe_integer, is_seq

__all__ = ["RuleViolation", "check_event", "check_event_data", "event_message"]


class RuleViolation(Exception):
    """A data rule failed; ``str()`` is the catalogue text without its subject."""


def event_message(event_type: str, data: Any) -> Any:
    """The message a surface event carries: ``data`` for ``user/message``, else ``data.message``.

    Returns ``None`` when ``data`` holds no message.
    """
    if event_type == "user/message":
        return data
    return data.get("message") if isinstance(data, dict) else None


# --- the rules ---------------------------------------------------------------------------

_TOOL_CHANGE_BLOCKS: Final = frozenset({"tool-addition", "tool-removal"})
_REASONS: Final = frozenset({"initial", "resume", "change", "series"})
_ADAPTER_MARKERS: Final = frozenset({"reasoningEffort", "maxTokens"})
_ROLES: Final = {
    "system/message": "system",
    "developer/message": "developer",
    "user/message": "user",
    "assistant/message": "assistant",
    "tool/result": "tool",
}


def _nonempty_str(value: Any) -> bool:
    return type(value) is str and value != ""


def _is_counter(value: Any) -> bool:
    if type(value) is int:
        return 0 <= value <= MAX_SAFE_INTEGER
    return is_safe_integer(value) and value >= 0


def _check_message_event(event_type: str, data: Any, shape: bool) -> None:
    """The rules of the five message-bearing types, in the spec's order.

    Data rules (spec/core.md §4 step 7, E49–E54, E58): a tool result's data is an object;
    developer role ⇔ ``developer/message``; tool-change blocks only in developer messages, each
    with a nonempty ``toolName`` and no inline ``tool``; ``headerSeq`` exactly when there are
    additions; a tool result's ``error`` needs ``message.isError === true``. Then, with
    ``shape``, the seed checks of §9.1 step 4: settlement fields of an assistant message (E39)
    and the message shape of §9.2 (E40–E48).
    """
    is_user = event_type == "user/message"
    if event_type == "tool/result" and not isinstance(data, dict):
        raise RuleViolation("data must be an object")
    message: Any = data if is_user else (data.get("message") if isinstance(data, dict) else None)
    is_message = isinstance(message, dict)
    role = message.get("role") if is_message else None
    content = message.get("content") if is_message else None
    is_developer = role == "developer"
    if (event_type == "developer/message") is not is_developer:
        raise RuleViolation("developer/message and developer role must occur together")
    blocks = content if isinstance(content, list) else ()
    if is_developer:
        has_additions = False
        for block in blocks:
            block_type = block.get("type") if isinstance(block, dict) else None
            if not isinstance(block_type, str) or block_type not in _TOOL_CHANGE_BLOCKS:
                continue
            if not _nonempty_str(block.get("toolName")):
                raise RuleViolation(f"{block_type} requires a nonempty toolName")
            if block_type == "tool-addition":
                if "tool" in block:
                    raise RuleViolation("tool-addition must omit inline tool definitions")
                has_additions = True
        # A headerSeq that is not a seq counts as absent: the reference reports this rule.
        if has_additions is not is_seq(data.get("headerSeq")):
            raise RuleViolation("requires headerSeq exactly when tool additions are present")
    else:
        for block in blocks:
            if isinstance(block, dict) and _is_tool_change(block.get("type")):
                raise RuleViolation("tool-change blocks require developer role")
    if (
        event_type == "tool/result"
        and "error" in data
        and (not is_message or message.get("isError") is not True)
    ):
        raise RuleViolation("error requires message.isError === true")
    if not shape:
        return
    if event_type == "assistant/message" and not (
        isinstance(data, dict)
        and _is_counter(data.get("turn"))
        and _is_counter(data.get("step"))
        and isinstance(data.get("stream"), list)
    ):
        raise RuleViolation("has invalid settlement fields")
    if not is_message or not _nonempty_str(message.get("id")):
        raise RuleViolation("lacks an identified message")
    expected_role = _ROLES[event_type]
    if role != expected_role:
        raise RuleViolation(f'message must have role "{expected_role}"')
    source: Any = message.get("source")
    kind = source.get("kind") if isinstance(source, dict) else None
    if not _nonempty_str(kind):
        raise RuleViolation("message has invalid source")
    if not isinstance(content, list):
        raise RuleViolation("message has invalid content")
    if is_user or event_type == "developer/message":
        return
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
    else:
        call_id = source.get("callId")
        if kind != "tool" or not _nonempty_str(call_id):
            raise RuleViolation("message must have tool source")
        if message.get("toolCallId") != call_id:
            raise RuleViolation("message has mismatched tool call ids")


def _check_request_header(data: Any, shape: bool) -> None:
    """Request-header payload (E54–E57), then with ``shape`` its fields (§7.4, E34–E38)."""
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
    defaults = header.get("adapterDefaults", _ABSENT)
    if isinstance(defaults, dict) and not defaults:
        raise RuleViolation("must omit empty adapterDefaults")
    if not shape:
        return
    config = header.get("config")
    if not (
        isinstance(config, dict)
        and _nonempty_str(config.get("provider"))
        and _nonempty_str(config.get("model"))
    ):
        raise RuleViolation("lacks provider/model")
    if "reasoningEffort" in config and not _nonempty_str(config["reasoningEffort"]):
        raise RuleViolation("has an invalid reasoningEffort")
    if defaults is not _ABSENT and (
        not isinstance(defaults, dict)
        or not _ADAPTER_MARKERS.issuperset(defaults)
        or any(value is not True or key not in config for key, value in defaults.items())
    ):
        raise RuleViolation("has invalid adapterDefaults")
    if data.get("reason") not in _REASONS:
        raise RuleViolation("has an invalid reason")
    if "startsSeries" in data and data["startsSeries"] is not True:
        raise RuleViolation("has an invalid startsSeries marker")


def _check_attempt(data: Any, shape: bool) -> None:
    """``assistant/attempt`` settlement fields (§2.5, E39); it has no data rules."""
    if shape and not (
        isinstance(data, dict)
        and _is_counter(data.get("turn"))
        and _is_counter(data.get("step"))
        and isinstance(data.get("stream"), list)
    ):
        raise RuleViolation("has invalid settlement fields")


_ABSENT: Final[Any] = object()


def _message_check(event_type: str) -> Callable[[Any, bool], None]:
    return lambda data, shape: _check_message_event(event_type, data, shape)


_CHECKS: Final[dict[str, Callable[[Any, bool], None]]] = {
    **{event_type: _message_check(event_type) for event_type in _ROLES},
    "request/header": _check_request_header,
    "assistant/attempt": _check_attempt,
}


def check_event_data(event_type: str, data: Any) -> None:
    """Run only the data rules of spec/core.md §4 step 7 (texts E49–E58), as folds do.

    Raises:
        RuleViolation: with the catalogue text after the subject.
    """
    check = _CHECKS.get(event_type)
    if check is not None:
        check(data, False)


def check_event(event_type: str, data: Any) -> None:
    """Run every per-type rule in the spec's order: data rules, then the seed shape checks.

    Raises:
        RuleViolation: with the catalogue text after the subject.
    """
    check = _CHECKS.get(event_type)
    if check is not None:
        check(data, True)


def _is_tool_change(block_type: object) -> bool:
    """Whether a block's ``type`` (any stored value, even an unhashable one) is a tool change."""
    return isinstance(block_type, str) and block_type in _TOOL_CHANGE_BLOCKS
