"""Take the viewer screenshots of docs/cli-guide.md: python scripts/viewer_screenshots.py.

The demo session in headless chromium (Debian's /usr/bin/chromium, driven by playwright, as in
the tests): the compaction summary expanded, with the pruned result inside it expanded to its
original; and a search revealing a match inside the summary.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from agentlog.cli.demo import build_demo_session
from agentlog.stores import Inspection
from agentlog.viewer import render_html

IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _until(page: Page, condition: str) -> None:
    deadline = time.monotonic() + 30
    while not page.evaluate(condition):
        if time.monotonic() > deadline:
            raise TimeoutError(condition)
        time.sleep(0.05)


def main() -> None:
    """Write docs/images/viewer-summary.png and viewer-search.png."""
    session = build_demo_session()
    inspection = Inspection(
        session=session, stored_events=42, stored_version=4, location=None, torn_tail=False
    )
    with tempfile.TemporaryDirectory() as directory:
        page_file = Path(directory, "demo.html")
        page_file.write_text(render_html(inspection), encoding="utf-8")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(page_file.as_uri())
            _until(page, "document.body.dataset.ready === '1'")
            page.click(".row[data-seq='34'] .toggle")
            page.click(".row[data-seq='21'] .toggle")
            page.click(".row[data-seq='34'] .type")
            page.evaluate("document.getElementById('timeline').scrollTop = 330")
            IMAGES.mkdir(exist_ok=True)
            page.screenshot(path=str(IMAGES / "viewer-summary.png"))
            page.goto(page_file.as_uri())
            page.reload()
            _until(page, "document.body.dataset.ready === '1'")
            page.fill("#search", "empty input")
            page.press("#search", "Enter")
            _until(page, "document.getElementById('search-count').textContent.includes('of')")
            page.screenshot(path=str(IMAGES / "viewer-search.png"))
            browser.close()


if __name__ == "__main__":
    main()
