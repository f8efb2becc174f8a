"""``serve``: the viewer page on localhost, for browsers that will not open local files."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["serve"]


def serve(
    page: str,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    ready: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Serve ``page`` at ``http://host:port/`` until ``stop`` is set (or Ctrl-C).

    Args:
        page: The HTML (``render_html``).
        host: The interface; localhost by default, so only this machine can see the session.
        port: The port (0: any free one).
        ready: Called with the URL once the server listens.
        stop: Set it to shut the server down.
    """
    body = page.encode("utf-8", "surrogatepass")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the http.server protocol's name
            if self.path.split("?")[0].split("#")[0] not in ("/", "/index.html"):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # the protocol's
            """Quiet: the command prints the URL once."""

    with ThreadingHTTPServer((host, port), Handler) as server:
        url = f"http://{host}:{server.server_address[1]}/"
        if ready is not None:
            ready(url)
        if stop is None:
            server.serve_forever()
            return
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        stop.wait()
        server.shutdown()
        thread.join()
