"""A TCP proxy to the test PostgreSQL server that cuts a connection around its ``COMMIT``.

The unknown-commit-outcome case needs a connection that dies exactly at ``COMMIT``: armed with
``"after"``, the proxy forwards the next ``COMMIT`` to the server (which commits) and drops the
connection instead of relaying the reply, so the client cannot know the outcome although the
rows are stored; with ``"before"``, it drops the connection without forwarding the ``COMMIT``
(the server rolls the transaction back). Every other byte passes through unchanged; clients
connect with ``sslmode=disable`` so the proxy can see the statements.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Literal

from agentlog.stores._pg_append import ONE_STATEMENT

Cut = Literal["after", "before"]


class CommitCutter:
    """Listens on 127.0.0.1 (``port``) and relays to ``upstream``; ``arm`` cuts one COMMIT."""

    def __init__(self, upstream: tuple[str, int] = ("127.0.0.1", 5432)) -> None:
        self._upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._armed: Cut | None = None
        self._lock = threading.Lock()
        self.cuts = 0
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, cut: Cut) -> None:
        """Cut the next connection that sends a ``COMMIT``, ``before`` or ``after`` it."""
        with self._lock:
            self._armed = cut

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._upstream)
            self._sockets += [client, server]
            dropping = threading.Event()
            threading.Thread(
                target=self._to_server, args=(client, server, dropping), daemon=True
            ).start()
            threading.Thread(
                target=self._to_client, args=(server, client, dropping), daemon=True
            ).start()

    def _to_server(
        self, client: socket.socket, server: socket.socket, dropping: threading.Event
    ) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                cut = None
                if b"COMMIT" in data or ONE_STATEMENT.encode() in data:
                    with self._lock:
                        cut, self._armed = self._armed, None
                if cut == "before":
                    self.cuts += 1
                    break
                if cut == "after":
                    dropping.set()  # the reply is never relayed
                    self.cuts += 1
                    server.sendall(data)
                    # Give the server the time to commit, then drop the client's side.
                    threading.Event().wait(0.5)
                    break
                server.sendall(data)
        _close(client, server)

    def _to_client(
        self, server: socket.socket, client: socket.socket, dropping: threading.Event
    ) -> None:
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                if dropping.is_set():
                    continue
                client.sendall(data)
        _close(client, server)

    def close(self) -> None:
        """Stop listening and drop every relayed connection."""
        self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()
