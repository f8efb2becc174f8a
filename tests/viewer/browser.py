"""A real headless browser for the viewer's tests: Debian's chromium, driven by playwright.

Never ``playwright install``: the system's ``/usr/bin/chromium`` is used, with flags that keep
it off the network. Under CI (``CI=true``) a missing browser fails the tests; elsewhere they
are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "chromium"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests must run under CI: {reason}")
    pytest.skip(reason)


@contextmanager
def chromium() -> Iterator[Any]:
    """A launched headless chromium (a playwright ``Browser``)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install 'agentlog[viewer-test]')")
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        _unavailable(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
