"""How HTTP failures become LlmFailure codes (spec/plugins.md §5.3), for every provider."""

from __future__ import annotations

import email.utils

import httpx2
import pytest

from agentlog.loop import DEFAULT_RETRY_POLICY
from agentlog.providers._failures import (
    error_fields,
    retry_after_ms,
    status_failure,
    transport_code,
)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "2"}, 2000),
        ({"retry-after": "0.5"}, 500),
        ({"retry-after-ms": "1250"}, 1250),
        ({"retry-after-ms": "40", "retry-after": "9"}, 40),  # the precise one wins
        ({"retry-after": "0"}, None),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "soon"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_is_read_in_milliseconds_when_positive(
    headers: dict[str, str] | None, expected: int | None
) -> None:
    assert retry_after_ms(headers) == expected


def test_retry_after_may_be_an_http_date() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert retry_after_ms({"retry-after": date}, now=now) == 30_000
    assert (
        retry_after_ms({"retry-after": email.utils.formatdate(now - 5, usegmt=True)}, now=now)
        is None
    )


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (429, "RATE_LIMIT"),
        (500, "SERVER"),
        (502, "SERVER"),
        (503, "SERVER"),
        (529, "SERVER"),
        (409, "SERVER"),
        (408, "TIMEOUT"),
        (401, "AUTHENTICATION"),
        (403, "AUTHENTICATION"),
        (413, "CONTEXT_WINDOW_EXCEEDED"),
        (400, "BAD_REQUEST"),
        (404, "BAD_REQUEST"),
        (422, "BAD_REQUEST"),
    ],
)
def test_a_status_maps_to_its_code(status: int, code: str) -> None:
    error = status_failure(status=status, body={"error": {"message": "x"}}, headers={}, message="m")
    assert (error.code, error.failure) == (code, {"message": "x", "code": code, "status": status})


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 128000 tokens. However, your messages resulted "
        "in 130000 tokens. Please reduce the length of the messages.",
        "prompt is too long: 208310 tokens > 200000 maximum",
        "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000",
        "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
    ],
)
def test_the_ways_apis_say_the_prompt_is_too_long(message: str) -> None:
    error = status_failure(status=400, body={"error": {"message": message}}, headers={}, message="")
    assert error.code == "CONTEXT_WINDOW_EXCEEDED"


def test_an_error_code_alone_says_context_length_exceeded() -> None:
    body = {
        "message": "too big",
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
    assert status_failure(status=400, body=body, headers={}, message="").code == (
        "CONTEXT_WINDOW_EXCEEDED"
    )


def test_only_rate_limits_carry_the_retry_after_and_every_failure_its_request_id() -> None:
    headers = {"retry-after": "4"}
    limited = status_failure(
        status=429, body=None, headers=headers, message="slow", request_id="r1"
    )
    assert limited.failure == {
        "message": "slow", "code": "RATE_LIMIT", "status": 429, "providerRetryAfterMs": 4000,
        "requestId": "r1",
    }  # fmt: skip
    assert "providerRetryAfterMs" not in (
        status_failure(status=500, body=None, headers=headers, message="x").failure or {}
    )


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ({"type": "overloaded_error", "message": "Overloaded"}, "SERVER"),
        ({"type": "rate_limit_error", "message": "slow"}, "RATE_LIMIT"),
        (
            {"type": "invalid_request_error", "message": "prompt is too long"},
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        ({"message": "internal", "type": "server_error", "code": None}, "SERVER"),
        ({"message": "?"}, "SERVER"),
    ],
)
def test_an_error_event_in_a_started_stream_is_classified_by_what_it_says(
    error: dict[str, str], code: str
) -> None:
    failure = status_failure(
        status=200, body={"type": "error", "error": error}, headers=None, message=""
    )
    assert failure.code == code
    assert "status" not in (failure.failure or {})


def test_the_retryable_codes_are_the_transient_ones() -> None:
    retryable = DEFAULT_RETRY_POLICY.retryable_codes
    assert {"RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"} <= retryable
    assert not {"BAD_REQUEST", "AUTHENTICATION", "CONTEXT_WINDOW_EXCEEDED"} & retryable


def test_error_fields_reads_either_body_shape() -> None:
    inner = {"message": "m", "type": "t", "code": "c"}
    assert error_fields({"error": inner}) == ("m", "t", "c")
    assert error_fields(inner) == ("m", "t", "c")
    assert error_fields("plain text") == ("plain text", None, None)
    assert error_fields(None) == (None, None, None)


def test_transport_exceptions_are_recognised_by_class() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1/")
    assert transport_code(httpx2.ReadTimeout("slow", request=request)) == "TIMEOUT"
    assert transport_code(httpx2.RemoteProtocolError("cut", request=request)) == "TRANSPORT"
    assert transport_code(httpx2.ConnectError("refused", request=request)) == "TRANSPORT"
    assert transport_code(ConnectionResetError()) == "TRANSPORT"
    assert transport_code(TimeoutError()) == "TIMEOUT"
    assert transport_code(ValueError("a bug")) is None
