"""``view``: the page written to a file, or served on localhost."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.cli.support import ENV, demo_in, run


def test_view_writes_a_self_contained_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = str(tmp_path / "store")
    demo_in(url)
    monkeypatch.chdir(tmp_path)
    ran = run("view", "demo", "--store", url)
    assert ran.code == 0, ran.stderr
    assert ran.stdout == "wrote demo.html (43 events); open it in a browser\n"
    page = (tmp_path / "demo.html").read_text()
    assert page.startswith("<!doctype html>")
    assert "http://" not in page
    assert "https://" not in page
    chosen = run("view", "demo", "-o", str(tmp_path / "x" / "y.html"), "--store", url)
    assert chosen.code == 1
    assert "cannot write" in chosen.stderr


def test_view_serve_serves_the_page_on_localhost(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    demo_in(url)
    server = subprocess.Popen(
        [sys.executable, "-m", "agentlog", "view", "demo", "--serve", "--store", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **ENV},
    )
    assert server.stdout is not None
    try:
        line = server.stdout.readline()
        assert line.startswith("serving demo at http://127.0.0.1:")
        address = line.split(" at ")[1].strip()
        with urllib.request.urlopen(address, timeout=30) as response:
            page = response.read().decode()
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        assert '"id":"demo"' in page
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(address + "other", timeout=30)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_view_refuses_serve_with_an_output_file(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    demo_in(url)
    assert run("view", "demo", "--serve", "-o", "x.html", "--store", url).code == 2
