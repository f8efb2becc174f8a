"""A TCP proxy in front of the PostgreSQL server that cuts a connection around its COMMIT.

The store connects through ``CuttingProxy.url(...)``; the proxy forwards bytes both ways and
follows the protocol's messages (a type byte and a length; the client's first message has no
type). It learns each connection's server pid from ``BackendKeyData``. Armed with a ``cut``,
it ends the next connection that commits (a ``COMMIT``, or the store's one-statement append,
which commits as it completes), from a second connection with
``pg_terminate_backend``, at one of two points:

``before``
    the client's ``COMMIT`` is held back: the server never receives it, so the transaction is
    rolled back when its backend is terminated;
``after``
    the server's ``CommandComplete`` for ``COMMIT`` is held back: the transaction is committed,
    but the client never hears so.

Either way the client then sees its connection close while it waits for the ``COMMIT``'s
result: the outcome is unknown to it. (``during`` — the backend terminated while it runs the
COMMIT — needs the server to stop inside the COMMIT; ``test_postgres_commit.py`` does that with
a deferred trigger, with no proxy.)
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Literal

from agentlog.stores._pg_append import ONE_STATEMENT
from tests.stores.pg import admin

__all__ = ["CuttingProxy", "Cut"]

Cut = Literal["before", "after"]
_SERVER = ("127.0.0.1", 5432)


class CuttingProxy:
    """A proxy on 127.0.0.1 (an ephemeral port) to the test server; close it when done."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._armed: Cut | None = None
        self._skip = 0
        self.cuts: list[tuple[Cut, int]] = []
        """Every cut made: where, and the server pid of the connection ended."""
        self.commits = 0
        """``COMMIT`` messages clients sent through the proxy (held ones included)."""
        self._sockets: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, store_url: str) -> str:
        """``store_url`` (a URL of the test server) through the proxy, without TLS or GSS."""
        rest = store_url.split("@127.0.0.1:5432", 1)
        assert len(rest) == 2, store_url
        return f"{rest[0]}@127.0.0.1:{self.port}{rest[1]}&sslmode=disable&gssencmode=disable"

    def arm(self, cut: Cut, *, nth: int = 1) -> None:
        """Cut the connection of the ``nth`` COMMIT from now, at ``cut``."""
        with self._lock:
            self._armed = cut
            self._skip = nth - 1

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()

    # --- forwarding ---------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(_SERVER)
            for sock in (client, server):  # relayed message by message: no Nagle delays
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sockets += [client, server]
            connection = _Connection(self, client, server)
            threading.Thread(target=connection.client_to_server, daemon=True).start()
            threading.Thread(target=connection.server_to_client, daemon=True).start()

    def _take(self, cut: Cut) -> bool:
        """Whether this COMMIT's connection must be cut at ``cut`` now (then disarmed)."""
        with self._lock:
            if self._armed != cut:
                return False
            if self._skip:
                self._skip -= 1
                return False
            self._armed = None
            return True


def _commits(message: bytes) -> bool:
    """Whether a ``Query``/``Parse`` message commits: a ``COMMIT``, or the store's one-statement
    append (its own transaction in autocommit)."""
    return b"COMMIT" in message.upper() or ONE_STATEMENT.encode() in message


class _Connection:
    def __init__(self, proxy: CuttingProxy, client: socket.socket, server: socket.socket) -> None:
        self.proxy = proxy
        self.client = client
        self.server = server
        self.pid: int | None = None
        self.cut = threading.Event()
        self.committing = False
        """The client sent a committing message whose ``CommandComplete`` is still to come."""

    def client_to_server(self) -> None:
        first = True
        for message in _messages(self.client, typed=False):
            if first:
                first = False
            elif message[:1] in (b"Q", b"P") and _commits(message):
                with self.proxy._lock:
                    self.proxy.commits += 1
                if self.proxy._take("before"):
                    self._cut("before")
                    return
                self.committing = True
            if not self._send(self.server, message):
                return
        self._close()

    def server_to_client(self) -> None:
        for message in _messages(self.server, typed=True):
            kind = message[:1]
            if kind == b"K":
                self.pid = struct.unpack("!i", message[5:9])[0]
            elif kind == b"C" and self.committing:
                self.committing = False
                if self.proxy._take("after"):
                    self._cut("after")
                    return
            if not self._send(self.client, message):
                return
        self._close()

    def _cut(self, cut: Cut) -> None:
        assert self.pid is not None
        with admin() as connection:
            # With a timeout, the call returns once the backend is gone, not when it was merely
            # signalled: a client quick to recover (an async one) must not find it still there.
            connection.execute("SELECT pg_terminate_backend(%s, 10000)", (self.pid,))
        self.proxy.cuts.append((cut, self.pid))
        self.cut.set()
        self._close()

    def _send(self, sock: socket.socket, data: bytes) -> bool:
        if self.cut.is_set():
            return False
        try:
            sock.sendall(data)
        except OSError:
            self._close()
            return False
        return True

    def _close(self) -> None:
        for sock in (self.client, self.server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()


def _messages(sock: socket.socket, *, typed: bool) -> Iterator[bytes]:
    """Each whole protocol message read from ``sock`` (the first untyped unless ``typed``)."""
    buffer = b""
    header = 5 if typed else 4
    while True:
        while len(buffer) >= header:
            length = struct.unpack("!i", buffer[header - 4 : header])[0]
            size = length + (header - 4)
            if len(buffer) < size:
                break
            yield buffer[:size]
            buffer = buffer[size:]
            header = 5
        try:
            chunk = sock.recv(65536)
        except OSError:
            return
        if not chunk:
            return
        buffer += chunk
