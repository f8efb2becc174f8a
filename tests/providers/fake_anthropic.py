"""A fake Anthropic Messages server: the real streaming events, signed thinking, strict checks.

``FakeAnthropic`` serves ``POST /v1/messages`` (a client's ``base_url`` is ``server.url``). A
scripted ``Answer`` streams as the real API does: ``message_start`` (input and cache usage), a
``ping``, then one content block after another — ``redacted_thinking``, ``thinking``
(``thinking_delta`` events, then a ``signature_delta``), ``text`` (``text_delta``),
``tool_use`` (``input_json_delta`` fragments) — each opened by ``content_block_start`` and
closed by ``content_block_stop``, then ``message_delta`` (stop reason, output usage) and
``message_stop``. Errors use the API's body ``{"type": "error", "error": {"type",
"message"}}`` and a ``request-id`` header; an error inside a stream is an ``error`` event.

``validate_messages_request`` checks a body as the real API does: roles alternate from
``user``; no empty text blocks; every ``tool_use`` answered by a ``tool_result`` at the start
of the next user message (and no result without its call); and every ``thinking`` block is one
this server issued — same text, same signature, same model — as the API verifies signatures.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import pytest

from tests.providers.fake_server import Answer, Failure, FakeServer, sse

__all__ = ["FakeAnthropic", "anthropic_server", "validate_messages_request"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class FakeAnthropic(FakeServer):
    """An Anthropic Messages server on loopback, answering from a script."""

    error_headers: ClassVar[dict[str, str]] = {"request-id": "req_fake"}
    path: ClassVar[str] = "/v1/messages"

    def __init__(self) -> None:
        super().__init__()
        self.signatures: dict[str, tuple[str, str]] = {}
        """Signatures issued: signature → (model, thinking text)."""

    @property
    def url(self) -> str:
        """The ``base_url`` to give the client."""
        return self.base_url

    def validate(self, body: Any) -> list[str]:
        return validate_messages_request(body, self.signatures)

    def error_body(self, failure: Failure) -> dict[str, Any]:
        kind = failure.type or _ERROR_TYPES.get(failure.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": failure.message}}

    def error_event(self, failure: Failure) -> bytes:
        return sse(self.error_body(failure), "error")

    def events(self, answer: Answer, body: Mapping[str, Any]) -> list[bytes]:
        model = answer.model or str(body.get("model"))
        usage = answer.usage
        start_usage = {
            "input_tokens": usage.input if usage else 0,
            "output_tokens": 1,
            "cache_creation_input_tokens": usage.cache_write if usage else 0,
            "cache_read_input_tokens": usage.cache_read if usage else 0,
        }
        message: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": dict(answer.raw_usage) if answer.raw_usage else start_usage,
        }
        events = [sse({"type": "message_start", "message": message}, "message_start")]
        events.append(sse({"type": "ping"}, "ping"))
        index = 0

        def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
            nonlocal index
            events.append(
                sse(
                    {"type": "content_block_start", "index": index, "content_block": start},
                    "content_block_start",
                )
            )
            for delta in deltas:
                events.append(
                    sse(
                        {"type": "content_block_delta", "index": index, "delta": delta},
                        "content_block_delta",
                    )
                )
            events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
            index += 1

        if answer.redacted_thinking is not None:
            block({"type": "redacted_thinking", "data": answer.redacted_thinking}, [])
        if answer.reasoning_parts:
            thinking = "".join(answer.reasoning_parts)
            signature = answer.signature or f"sig-{len(self.signatures)}-{abs(hash(thinking))}"
            self.signatures[signature] = (model, thinking)
            deltas = [{"type": "thinking_delta", "thinking": t} for t in answer.reasoning_parts]
            deltas.append({"type": "signature_delta", "signature": signature})
            block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
        if answer.text_parts:
            block(
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": t} for t in answer.text_parts],
            )
        for call in answer.tool_calls:
            block(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
                [{"type": "input_json_delta", "partial_json": f} for f in call.fragments],
            )
        stop = answer.finish or ("tool_use" if answer.tool_calls else "end_turn")
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": usage.output if usage else 0},
        }
        events.append(sse(delta, "message_delta"))
        events.append(sse({"type": "message_stop"}, "message_stop"))
        return events


_USER_BLOCKS = {"text", "image", "tool_result", "document"}
_ASSISTANT_BLOCKS = {"text", "thinking", "redacted_thinking", "tool_use"}


def validate_messages_request(
    body: Any, signatures: Mapping[str, tuple[str, str]] | None = None
) -> list[str]:
    """What the Messages API would refuse in ``body`` (empty: nothing).

    Args:
        body: The request body.
        signatures: Thinking signatures the server issued (signature → (model, text)); a
            thinking block whose signature, text or model does not match is refused.
    """
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    problems: list[str] = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model: Field required")
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        problems.append("max_tokens: Field required")
    system = body.get("system")
    if system is not None and not (
        (isinstance(system, str) and system)
        or (isinstance(system, list) and all(b.get("type") == "text" for b in system))
    ):
        problems.append("system: must be a non-empty string or text blocks")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages: at least one message is required"]
    expected_role = "user"
    pending: list[str] = []
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        role = message.get("role") if isinstance(message, dict) else None
        if role != expected_role:
            problems.append(f"{where}: roles must alternate starting with user, got {role!r}")
        expected_role = "assistant" if role == "user" else "user"
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list) or not content:
            problems.append(f"{where}: content must be a non-empty array")
            continue
        allowed = _USER_BLOCKS if role == "user" else _ASSISTANT_BLOCKS
        results: list[str] = []
        for j, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            at = f"{where}.content.{j}"
            if kind not in allowed:
                problems.append(f"{at}: block type {kind!r} is not allowed in a {role} message")
            elif kind == "text" and not (isinstance(block.get("text"), str) and block["text"]):
                problems.append(f"{at}: text content blocks must be non-empty")
            elif kind == "tool_result":
                if j != len(results):
                    problems.append(f"{at}: tool_result blocks must come first in the message")
                results.append(block.get("tool_use_id"))
                inner = block.get("content", [])
                if not isinstance(inner, str | list) or (
                    isinstance(inner, list)
                    and any(not (isinstance(b.get("text"), str) and b["text"]) for b in inner)
                ):
                    problems.append(f"{at}: tool_result content must be non-empty text blocks")
            elif kind == "tool_use":
                if not isinstance(block.get("input"), dict) or not block.get("id"):
                    problems.append(f"{at}: tool_use needs an id and an input object")
                pending.append(block.get("id"))
            elif kind == "thinking":
                problems += _check_thinking(at, block, body.get("model"), signatures or {})
        if role == "user":
            if sorted(map(str, results)) != sorted(map(str, pending)):
                problems.append(
                    f"{where}: tool_use ids {pending} must each have a tool_result in the next "
                    f"user message, found {results}"
                )
            pending = []
        elif pending and i == len(messages) - 1:
            problems.append(f"{where}: tool_use ids {pending} have no tool_result")
    for j, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool.get("name"), str) or not isinstance(tool.get("input_schema"), dict):
            problems.append(f"tools.{j}: needs a name and an input_schema object")
    return problems


def _check_thinking(
    at: str, block: dict[str, Any], model: Any, signatures: Mapping[str, tuple[str, str]]
) -> list[str]:
    signature = block.get("signature")
    issued = signatures.get(signature) if isinstance(signature, str) else None
    if issued is None:
        return [f"{at}: Invalid `signature` in `thinking` block"]
    if issued != (model, block.get("thinking")):
        return [f"{at}: the thinking block does not match its signature (model or text changed)"]
    return []


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropic]:
    """A running fake Anthropic Messages server; its script starts empty."""
    with FakeAnthropic() as server:
        yield server
