"""How an HTTP model API's failures become ``LlmFailure`` codes (spec/plugins.md §5.3, §4.8).

Both official clients raise the same kinds of failure: a status error carrying the response
(status, headers, JSON error body), a connection error, a timeout, and — from inside a stream —
an error event or a bare transport exception of their HTTP library. ``status_failure`` and
``transport_code`` are the one mapping both providers use, so a code means the same thing
whichever API produced it:

======================================  ==========================
what happened                           code
======================================  ==========================
429, or an error of type rate-limit     ``RATE_LIMIT`` (+ ``providerRetryAfterMs``)
5xx, 529 overloaded, 409, server error  ``SERVER``
408, a timeout                          ``TIMEOUT``
connection refused / reset / dropped    ``TRANSPORT``
the prompt does not fit the context     ``CONTEXT_WINDOW_EXCEEDED`` (400 / 413 / 422 whose
                                        error says so, or 413)
401, 403                                ``AUTHENTICATION``
any other 4xx                           ``BAD_REQUEST``
======================================  ==========================

``Retry-After`` is read from ``retry-after-ms`` (milliseconds) or ``retry-after`` (seconds or an
HTTP date), and kept only when positive.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from typing import Final

from agentlog.errors import ProviderError

__all__ = ["error_fields", "retry_after_ms", "status_failure", "transport_code"]

_CONTEXT_OVERFLOW: Final = re.compile(
    r"context[ _-]?(length|window)|maximum context|prompt is too long|input is too long"
    r"|too many (input )?tokens|exceeds? (the )?(model'?s? )?(context|maximum)"
    r"|exceed context limit|reduce the length",
    re.IGNORECASE,
)

_ANYIO_BROKEN: Final = ("EndOfStream", "BrokenResourceError", "ClosedResourceError")

_TYPE_CODES: Final = {
    # Anthropic error types, also used by some compatible servers.
    "rate_limit_error": "RATE_LIMIT",
    "overloaded_error": "SERVER",
    "api_error": "SERVER",
    "server_error": "SERVER",
    "timeout_error": "TIMEOUT",
    "authentication_error": "AUTHENTICATION",
    "permission_error": "AUTHENTICATION",
    "request_too_large": "CONTEXT_WINDOW_EXCEEDED",
    # OpenAI error codes.
    "rate_limit_exceeded": "RATE_LIMIT",
    "context_length_exceeded": "CONTEXT_WINDOW_EXCEEDED",
    "invalid_api_key": "AUTHENTICATION",
}


def error_fields(body: object) -> tuple[str | None, str | None, str | None]:
    """``(message, type, code)`` of an API error body (``{"error": {...}}`` or the inner object)."""
    error = body.get("error", body) if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        return (body if isinstance(body, str) and body else None), None, None
    fields = (error.get("message"), error.get("type"), error.get("code"))
    return tuple(value if isinstance(value, str) and value else None for value in fields)  # type: ignore[return-value]  # a 3-tuple by construction


def retry_after_ms(headers: Mapping[str, str] | None, *, now: float | None = None) -> int | None:
    """The provider's requested wait in milliseconds, when it gave a positive one.

    Args:
        headers: Response headers (case-insensitive lookups are the caller's mapping's job;
            lower-case names are tried).
        now: The current epoch time in seconds, for an HTTP-date value (default: the clock).
    """
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            ms = float(value)
        except ValueError:
            ms = 0.0
        return round(ms) if ms > 0 else None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return round(seconds * 1000) if seconds > 0 else None


def _code(status: int | None, kind: str | None, code: str | None, message: str) -> str:
    if status is None or status < 400:
        # An error event inside a stream that already started: classify by what it says.
        for key in (code, kind):
            if key in _TYPE_CODES:
                return _TYPE_CODES[key]
        if _CONTEXT_OVERFLOW.search(message):
            return "CONTEXT_WINDOW_EXCEEDED"
        return "SERVER"
    if status in (400, 413, 422) and (
        "CONTEXT_WINDOW_EXCEEDED" in (_TYPE_CODES.get(code or ""), _TYPE_CODES.get(kind or ""))
        or _CONTEXT_OVERFLOW.search(message)
    ):
        return "CONTEXT_WINDOW_EXCEEDED"
    if status == 429:
        return "RATE_LIMIT"
    if status == 413:
        return "CONTEXT_WINDOW_EXCEEDED"
    if status in (401, 403):
        return "AUTHENTICATION"
    if status == 408:
        return "TIMEOUT"
    if status == 409 or status >= 500:
        return "SERVER"
    return "BAD_REQUEST"


def status_failure(
    *,
    status: int | None,
    body: object,
    headers: Mapping[str, str] | None,
    message: str,
    request_id: str | None = None,
) -> ProviderError:
    """The ``ProviderError`` for an API error response or an error event inside a stream.

    Args:
        status: The HTTP status (``None`` or 2xx for an error event in a started stream).
        body: The decoded error body.
        headers: The response headers.
        message: The client's message, used when the body has none.
        request_id: The provider's request id, when it sent one.
    """
    api_message, kind, code = error_fields(body)
    text = api_message or message
    failure_code = _code(status, kind, code, text)
    return ProviderError.of(
        text,
        failure_code,
        status=status if status is not None and status >= 400 else None,
        providerRetryAfterMs=retry_after_ms(headers) if failure_code == "RATE_LIMIT" else None,
        requestId=request_id or None,
    )


def transport_code(exc: BaseException) -> str | None:
    """``TIMEOUT`` / ``TRANSPORT`` for a transport exception of the HTTP layer, else ``None``.

    The official clients wrap most transport errors, but one raised while a stream is being
    read can surface as the HTTP library's own exception (``httpx`` or its successor
    ``httpx2``), or as a bare socket error. They are recognised by class, whichever library
    version raised them, without importing it.
    """
    for cls in type(exc).__mro__:
        if cls.__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2"):
            if cls.__name__ in ("TimeoutException", "ReadTimeout", "TimeoutError"):
                return "TIMEOUT"
            if cls.__name__ in ("TransportError", "RequestError", "NetworkError"):
                return "TRANSPORT"
        if cls.__module__.split(".")[0] == "anyio" and cls.__name__ in _ANYIO_BROKEN:
            return "TRANSPORT"
    if isinstance(exc, TimeoutError):
        return "TIMEOUT"
    if isinstance(exc, (ConnectionError, EOFError)):
        return "TRANSPORT"
    return None
