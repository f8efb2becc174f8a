"""``serve``: the page on localhost, and nothing else."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request

import pytest

from agentlog.viewer import serve


def test_serve_answers_with_the_page_until_stopped() -> None:
    stop = threading.Event()
    urls: list[str] = []
    ready = threading.Event()

    def started(url: str) -> None:
        urls.append(url)
        ready.set()

    thread = threading.Thread(
        target=serve, args=("<p>page</p>",), kwargs={"ready": started, "stop": stop}
    )
    thread.start()
    try:
        assert ready.wait(10)
        (url,) = urls
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.read() == b"<p>page</p>"
        with urllib.request.urlopen(url + "index.html#seq=3", timeout=10) as response:
            assert response.status == 200
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(url + "secrets.txt", timeout=10)
        assert missing.value.code == 404
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
