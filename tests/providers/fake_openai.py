"""A fake Chat Completions server: OpenAI's streaming wire format, DeepSeek's reasoning field.

``FakeOpenAI`` serves ``POST /v1/chat/completions`` (so a client's ``base_url`` is
``server.url``). A scripted ``Answer`` streams as the real API does: a first chunk with the
assistant role, ``reasoning_content`` deltas (DeepSeek), ``content`` deltas, tool calls as
index-keyed fragments (the first carries id, type and name; later ones argument text only), a
chunk with ``finish_reason``, a usage chunk with empty ``choices`` when the request asked for
``stream_options.include_usage``, then ``data: [DONE]``. Errors use the API's body
``{"error": {"message", "type", "param", "code"}}``.

``validate_chat_request`` checks a body as the real API does: roles and their keys, content
shapes, tool definitions, and tool pairing (every ``tool_calls`` entry answered by a ``tool``
message before the next other message; no ``tool`` message without its call).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import pytest

from tests.providers.fake_server import Answer, Failure, FakeServer, sse

__all__ = ["FakeOpenAI", "chat_chunk", "openai_server", "validate_chat_request"]

_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 429: "requests"}

_KEYS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "reasoning_content", "refusal"},
    "tool": {"role", "content", "tool_call_id"},
}


class FakeOpenAI(FakeServer):
    """A Chat Completions server on loopback, answering from a script."""

    error_headers: ClassVar[dict[str, str]] = {"x-request-id": "req_fake"}
    path: ClassVar[str] = "/v1/chat/completions"

    @property
    def url(self) -> str:
        """The ``base_url`` to give the client."""
        return f"{self.base_url}/v1"

    def validate(self, body: Any) -> list[str]:
        return validate_chat_request(body)

    def error_body(self, failure: Failure) -> dict[str, Any]:
        return {
            "error": {
                "message": failure.message,
                "type": failure.type or _ERROR_TYPES.get(failure.status, "server_error"),
                "param": None,
                "code": failure.code,
            }
        }

    def error_event(self, failure: Failure) -> bytes:
        return sse(self.error_body(failure))

    def events(self, answer: Answer, body: Mapping[str, Any]) -> list[bytes]:
        model = str(answer.model or body.get("model"))

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return chat_chunk(delta, finish, model=model)

        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": None, "reasoning_content": r}) for r in answer.reasoning_parts]
        events += [chunk({"content": text}) for text in answer.text_parts]
        for i, call in enumerate(answer.tool_calls):
            fragments = call.fragments
            first = {
                "index": i,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            events.append(chunk({"tool_calls": [first]}))
            for fragment in fragments:
                events.append(
                    chunk({"tool_calls": [{"index": i, "function": {"arguments": fragment}}]})
                )
        finish = answer.finish or ("tool_calls" if answer.tool_calls else "stop")
        events.append(chunk({}, finish))
        wants_usage = (body.get("stream_options") or {}).get("include_usage") is True
        if wants_usage and (answer.usage is not None or answer.raw_usage is not None):
            events.append(sse({**_base(model), "choices": [], "usage": _usage(answer)}))
        events.append(sse("[DONE]"))
        return events


def _base(model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "system_fingerprint": "fp_fake",
    }


def chat_chunk(delta: dict[str, Any], finish: str | None = None, *, model: str = "m") -> bytes:
    """One ``chat.completion.chunk`` event with one choice carrying ``delta``."""
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return sse({**_base(model), "choices": [choice]})


def _usage(answer: Answer) -> dict[str, Any]:
    if answer.raw_usage is not None:
        return dict(answer.raw_usage)
    usage = answer.usage
    assert usage is not None
    prompt = usage.input + usage.cache_read + usage.cache_write
    completion = usage.output + usage.reasoning
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning, "audio_tokens": 0},
    }


def _text_parts_ok(content: Any, *, images: bool) -> bool:
    if isinstance(content, str):
        return True
    allowed = {"text", "image_url"} if images else {"text"}
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and p.get("type") in allowed for p in content)
        and all(isinstance(p.get("text"), str) for p in content if p.get("type") == "text")
    )


def validate_chat_request(body: Any) -> list[str]:
    """What the Chat Completions API would refuse in ``body`` (empty: nothing)."""
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    problems: list[str] = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model must be a non-empty string")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages must be a non-empty array"]
    pending: list[str] = []  # calls of the last assistant message not answered yet
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in _KEYS:
            problems.append(f"{where}: invalid role {role!r}")
            continue
        extra = set(message) - _KEYS[role]
        if extra:
            problems.append(f"{where}: unknown keys {sorted(extra)}")
        if role != "tool" and pending:
            problems.append(
                f"{where}: an assistant message with 'tool_calls' must be followed by tool "
                f"messages responding to each 'tool_call_id' ({pending} unanswered)"
            )
            pending = []
        content = message.get("content")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                problems.append(
                    f"{where}: messages with role 'tool' must be a response to a preceding "
                    f"message with 'tool_calls' (id {call_id!r})"
                )
            else:
                pending.remove(call_id)
            if not _text_parts_ok(content, images=False):
                problems.append(f"{where}: tool content must be a string or text parts")
        elif role == "assistant":
            calls = message.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list) or not calls:
                    problems.append(f"{where}: tool_calls must be a non-empty array")
                    calls = []
                for j, call in enumerate(calls):
                    function = call.get("function") if isinstance(call, dict) else None
                    if (
                        not isinstance(call.get("id"), str)
                        or not call["id"]
                        or call.get("type") != "function"
                        or not isinstance(function, dict)
                        or not isinstance(function.get("name"), str)
                        or not isinstance(function.get("arguments"), str)
                    ):
                        problems.append(f"{where}.tool_calls[{j}] is malformed: {call!r}")
                    else:
                        pending.append(call["id"])
            if content is None and not calls:
                problems.append(f"{where}: content is required unless tool_calls are given")
            elif content is not None and not _text_parts_ok(content, images=False):
                problems.append(f"{where}: content must be a string or text parts")
            reasoning = message.get("reasoning_content")
            if reasoning is not None and not isinstance(reasoning, str):
                problems.append(f"{where}: reasoning_content must be a string")
        elif not _text_parts_ok(content, images=role == "user"):
            problems.append(f"{where}: content must be a string or content parts")
    if pending:
        problems.append(f"tool calls {pending} of the last assistant message are unanswered")
    for j, tool in enumerate(body.get("tools") or []):
        function = tool.get("function") if isinstance(tool, dict) else None
        if (
            tool.get("type") != "function"
            or not isinstance(function, dict)
            or not isinstance(function.get("name"), str)
            or not isinstance(function.get("parameters", {}), dict)
        ):
            problems.append(f"tools[{j}] is malformed: {tool!r}")
    return problems


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    """A running fake Chat Completions server; its script starts empty."""
    with FakeOpenAI() as server:
        yield server
