"""A real HTTP server on loopback that plays scripted model answers (shared by both fakes).

``FakeServer`` listens on ``127.0.0.1`` on an ephemeral port, in a thread, and answers each
POST with the next reply of its script: an ``Answer`` (streamed as server-sent events in the
provider's real wire format, rendered by the subclass), a ``Failure`` (an HTTP error with the
provider's error body and any headers), or a callable that picks one from the request. Every
request is recorded (``requests``: path, headers, JSON body, the validation problems found, and
whether the client hung up mid-stream), and every body is validated as the real API would
validate it: an invalid request gets a 400 and its problems are kept for assertions.

Streams are sent with chunked transfer encoding, so an ``Answer`` can also be cut the two ways
a real connection ends early: ``drop_after=n`` aborts the connection after ``n`` events (the
client sees an incomplete body), ``end_after=n`` ends the body cleanly after ``n`` events (no
finish ever arrives). ``delay`` spaces the events out, and ``hold_after=n`` stalls the stream
after ``n`` events until the client hangs up (``hold=True``: after the last one) — for
cancellation tests.

The provider-neutral script vocabulary (``Answer``, ``ToolCall``, ``Usage``, ``Failure``) is
what makes one contract suite run against both servers.

Use (the fixtures ``openai_server`` and ``anthropic_server`` are registered for the whole
suite by ``tests/conftest.py``)::

    def test_something(openai_server: FakeOpenAI) -> None:
        openai_server.script(
            Failure(status=429, headers={"Retry-After": "1"}),
            Answer(text="Hello", tool_calls=[ToolCall(id="c1", name="ls")]),
        )
        provider = OpenAIChat("m", base_url=openai_server.url, api_key="k")
        ...  # drive the provider or an Agent
        assert openai_server.bodies[1]["messages"] == to_chat_completions(derived, model="m")
        assert all(not r.problems for r in openai_server.requests)
"""

from __future__ import annotations

import json
import select
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self

__all__ = [
    "Answer",
    "Failure",
    "FakeServer",
    "Received",
    "Reply",
    "ToolCall",
    "Usage",
]


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """A tool call the model makes; ``arguments`` fragments are streamed one per event."""

    id: str
    name: str
    arguments: str | Sequence[str] = "{}"

    @property
    def fragments(self) -> list[str]:
        return [self.arguments] if isinstance(self.arguments, str) else list(self.arguments)


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Token counts in the neutral, disjoint buckets; each fake renders its API's fields."""

    input: int = 12
    output: int = 7
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


def _parts(value: str | Sequence[str]) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    return list(value)


@dataclass(frozen=True, kw_only=True)
class Failure:
    """An HTTP error response, or (``after`` set, on an ``Answer``) an error event mid-stream."""

    status: int = 500
    message: str = "The server had an error while processing your request."
    type: str | None = None
    """The API's error type (default: the provider's usual type for ``status``)."""
    code: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Answer:
    """A streamed model answer; a ``str`` content field is one delta, a list is one per item."""

    text: str | Sequence[str] = ()
    reasoning: str | Sequence[str] = ()
    """Reasoning deltas: DeepSeek's ``reasoning_content``, or Anthropic ``thinking``."""
    signature: str | None = None
    """Anthropic: the thinking block's signature (default: one the server makes up)."""
    redacted_thinking: str | None = None
    """Anthropic: a ``redacted_thinking`` block with this data, before everything else."""
    tool_calls: Sequence[ToolCall] = ()
    usage: Usage | None = field(default_factory=Usage)
    raw_usage: Mapping[str, Any] | None = None
    """The wire usage object verbatim, instead of one rendered from ``usage``."""
    finish: str | None = None
    """The wire finish / stop reason (default: from the content)."""
    model: str | None = None
    """The model the response names (default: the requested one)."""
    error: Failure | None = None
    """An error event sent after ``error_after`` events, ending the stream."""
    error_after: int = 0
    delay: float = 0.0
    """Seconds between events."""
    drop_after: int | None = None
    """Abort the connection after this many events."""
    end_after: int | None = None
    """End the body cleanly after this many events."""
    raw_events: Sequence[bytes] | None = None
    """SSE events to send verbatim instead of rendering the fields above."""
    hold_after: int | None = None
    """Stall after this many events: send nothing more until the client hangs up."""
    hold: bool = False
    """Stall after the last event, before the body ends, until the client hangs up (the
    answer is complete but its stream never closes)."""

    @property
    def text_parts(self) -> list[str]:
        return _parts(self.text)

    @property
    def reasoning_parts(self) -> list[str]:
        return _parts(self.reasoning)


@dataclass(kw_only=True)
class Received:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any
    problems: list[str] = field(default_factory=list)
    """What made the request invalid for the real API (empty: valid)."""
    disconnected: threading.Event = field(default_factory=threading.Event)
    """Set when the client hung up before the stream ended."""
    finished: threading.Event = field(default_factory=threading.Event)
    """Set when the server is done with the request."""


Reply = Answer | Failure | Callable[[Received], "Answer | Failure"]


class FakeServer:
    """A scripted model API on loopback; subclasses render one provider's wire format."""

    path: ClassVar[str]
    """The endpoint path the provider's client posts to."""
    error_headers: ClassVar[dict[str, str]] = {}
    """Headers every error response carries (the provider's request id)."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                server._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the test output is no place for an access log

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    # --- what tests use -------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The root URL (``http://127.0.0.1:<port>``)."""
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one."""
        with self._lock:
            self._script.extend(replies)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies received, in order."""
        return [request.body for request in self.requests]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> None:
        """Block until ``count`` requests have arrived (e.g. before killing a client mid-call)."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self.requests) >= count, timeout):
                raise TimeoutError(f"{len(self.requests)} of {count} requests arrived")

    @property
    def pending(self) -> int:
        """Replies not taken yet."""
        with self._lock:
            return len(self._script)

    def close(self) -> None:
        self._stopping.set()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- what subclasses provide ----------------------------------------------------------

    def validate(self, body: Any) -> list[str]:
        """The problems the real API would refuse ``body`` for."""
        raise NotImplementedError

    def events(self, answer: Answer, body: Mapping[str, Any]) -> list[bytes]:
        """The SSE events of ``answer`` (each ``event:``/``data:`` lines plus a blank line)."""
        raise NotImplementedError

    def error_body(self, failure: Failure) -> dict[str, Any]:
        """The JSON body of an error response."""
        raise NotImplementedError

    def error_event(self, failure: Failure) -> bytes:
        """The SSE event of an error inside a started stream."""
        raise NotImplementedError

    # --- the HTTP side --------------------------------------------------------------------

    def _next_reply(self, received: Received) -> Answer | Failure:
        with self._lock:
            reply = self._script.pop(0) if self._script else None
        if reply is None:
            return Failure(status=500, message="fake server: no scripted reply left")
        if isinstance(reply, Answer | Failure):
            return reply
        return reply(received)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        received = Received(path=handler.path, headers=dict(handler.headers.items()), body=body)
        with self._arrived:
            self.requests.append(received)
            self._arrived.notify_all()
        try:
            if handler.path.split("?")[0] != self.path:
                self._send_json(handler, 404, {"error": {"message": f"no route {handler.path}"}})
                return
            received.problems = self.validate(body)
            if received.problems:
                failure = Failure(status=400, message="; ".join(received.problems))
                self._send_json(handler, 400, self.error_body(failure))
                return
            reply = self._next_reply(received)
            if isinstance(reply, Failure):
                headers = {**self.error_headers, **reply.headers}
                self._send_json(handler, reply.status, self.error_body(reply), headers)
            else:
                self._stream(handler, reply, body, received)
        finally:
            received.finished.set()

    def _send_json(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        body: Any,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()

    def _stream(
        self,
        handler: BaseHTTPRequestHandler,
        answer: Answer,
        body: Mapping[str, Any],
        received: Received,
    ) -> None:
        events = (
            list(answer.raw_events) if answer.raw_events is not None else self.events(answer, body)
        )
        if answer.error is not None:
            events = [*events[: answer.error_after], self.error_event(answer.error)]
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        try:
            for i, event in enumerate(events):
                if answer.drop_after == i:
                    self._abort(handler)
                    return
                if answer.end_after == i:
                    break
                if answer.hold_after == i:
                    self._hold(handler, received)
                    return
                self._chunk(handler, event)
                if answer.delay and self._wait_for_hangup(handler, answer.delay):
                    received.disconnected.set()
                    return
            if answer.hold:
                self._hold(handler, received)
                return
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            received.disconnected.set()
            handler.close_connection = True

    def _hold(self, handler: BaseHTTPRequestHandler, received: Received) -> None:
        while not self._stopping.is_set():
            if self._wait_for_hangup(handler, 0.05):
                received.disconnected.set()
                return
        handler.close_connection = True

    @staticmethod
    def _chunk(handler: BaseHTTPRequestHandler, data: bytes) -> None:
        handler.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        handler.wfile.flush()

    @staticmethod
    def _abort(handler: BaseHTTPRequestHandler) -> None:
        """Cut the connection mid-body, as a crashed server or a broken network does."""
        handler.close_connection = True
        handler.wfile.flush()
        handler.connection.shutdown(socket.SHUT_RDWR)

    def _wait_for_hangup(self, handler: BaseHTTPRequestHandler, seconds: float) -> bool:
        """Wait ``seconds``; ``True`` as soon as the client closes its end."""
        connection: socket.socket = handler.connection
        readable, _, _ = select.select([connection], [], [], seconds)
        if not readable:
            return False
        try:
            return bool(connection.recv(1, socket.MSG_PEEK) == b"")
        except OSError:
            return True


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: an optional ``event:`` line, a ``data:`` line, a blank line."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()
