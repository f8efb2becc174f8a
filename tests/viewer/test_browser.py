"""The viewer in a real headless browser (Debian's chromium via playwright), from file://.

A compacted session: clicking the summary shows exactly what it replaced, through the nested
replacement of a pruned result; search finds an event; a deep link opens at its seq; tool calls
link to their results; errors are marked; hostile text is only text; nothing touches the
network; and a session of 10^5 events opens and becomes interactive.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agentlog import Session, thaw
from agentlog import messages as m
from agentlog.stores import Inspection
from agentlog.viewer import render_html
from tests.agent_logs import grow_agent_session
from tests.cli.coding import coding_session
from tests.session.support import TR, A, begin, call, finish
from tests.viewer.browser import chromium


def _page_file(tmp_path: Path, session: Session, name: str = "page.html") -> Path:
    inspection = Inspection(
        session=session, stored_events=session.seq, stored_version=4, location=None, torn_tail=False
    )
    path = tmp_path / name
    path.write_text(render_html(inspection), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on("request", lambda request: requests.append(request.url))
    opened.errors, opened.requests = errors, requests
    yield opened
    context.close()
    assert errors == []
    assert all(url.startswith("file://") for url in requests)  # no network, ever


def _demo() -> Session:
    """The demo session, built off the thread on which playwright runs its event loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(coding_session).result()


def _until(page: Any, condition: str, timeout: float = 30.0) -> None:
    """Wait until ``condition`` (a JS expression) holds; polled from here, not by page script
    (the page's Content-Security-Policy forbids evaluating strings, as it should)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(condition):
        assert time.monotonic() < deadline, f"timed out waiting for {condition}"
        time.sleep(0.05)


def _open(page: Any, path: Path, fragment: str = "") -> None:
    page.goto(path.as_uri() + fragment)
    page.wait_for_selector("body[data-ready='1']")


def _visible_seqs(page: Any) -> list[int]:
    return [
        int(seq)
        for seq in page.eval_on_selector_all(".row", "rows => rows.map(r => r.dataset.seq)")
    ]


def test_clicking_a_summary_shows_what_it_replaced_through_nested_replacements(
    page: Any, tmp_path: Path
) -> None:
    _open(page, _page_file(tmp_path, _demo()))
    rows = _visible_seqs(page)
    assert 34 in rows
    assert not {5, 6, 8, 21} & set(rows)  # shadowed: collapsed under their replacement
    summary = page.locator(".row[data-seq='34'] .toggle")
    assert summary.inner_text() == "▸ replaced 9"
    summary.click()
    rows = _visible_seqs(page)
    after = rows[rows.index(34) + 1 : rows.index(34) + 10]
    assert after == [5, 6, 21, 11, 13, 16, 22, 24, 26]  # exactly the nodes it shadowed
    assert 8 not in rows
    page.click(".row[data-seq='21'] .toggle")  # the pruned result replaced the original
    rows = _visible_seqs(page)
    assert rows[rows.index(21) + 1] == 8
    assert "shadowed by #21" in page.locator(".row[data-seq='8']").inner_text()
    page.click(".row[data-seq='34'] .type")
    detail = page.locator("#detail").inner_text()
    assert "#34 user/message" in detail
    assert "replaced (through nested replacements):" in detail
    assert "#8 tool/result" in detail


def test_search_finds_an_event_and_reveals_it(page: Any, tmp_path: Path) -> None:
    session = _demo()
    phrase = "drops the last token"
    expected = [
        e.seq
        for e in session.events
        if phrase in (e.type + json.dumps(thaw(e.data), ensure_ascii=False)).lower()
    ]
    assert expected[:2] == [8, 11]
    _open(page, _page_file(tmp_path, session))
    page.fill("#search", phrase.upper())  # case does not matter; typing searches
    _until(page, "document.getElementById('search-count').textContent.includes('of')")
    assert page.locator("#search-count").inner_text() == f"1 of {len(expected)}"
    selected = page.locator(".row.selected")
    assert selected.get_attribute("data-seq") == "8"  # inside the summary, expanded to show it
    assert "hit" in (selected.get_attribute("class") or "")
    page.click("#search-next")
    assert page.locator(".row.selected").get_attribute("data-seq") == "11"
    page.check("#only-matches")
    assert sorted(_visible_seqs(page)) == expected


def test_a_deep_link_opens_at_its_seq(page: Any, tmp_path: Path) -> None:
    _open(page, _page_file(tmp_path, _demo()), "#seq=13")
    assert page.locator(".row.selected").get_attribute("data-seq") == "13"
    assert page.locator("#detail h2").inner_text() == "#13 tool/result"
    page.click("#detail a[href='#seq=12']")  # its tool call
    _until(page, "location.hash === '#seq=12'")
    assert page.locator("#detail h2").inner_text() == "#12 tool/call"


def test_tool_calls_join_results_and_errors_and_usage_show(page: Any, tmp_path: Path) -> None:
    session = Session.create("s")
    begin(session)
    session.append(
        "assistant/message",
        {**A([m.tool_call("c1", "ls", "{}")]), "usage": {"inputTokens": 1234, "outputTokens": 56}},
        surface_op="append",
    )
    tool_call = call(session, "c1")
    session.append(
        "tool/result",
        TR("c1", "permission denied", err=True),
        surface_op="append",
        source_event_seqs=[tool_call.seq],
    )
    finish(session)
    _open(page, _page_file(tmp_path, session))
    assert "→ result #4" in page.locator(".row[data-seq='3']").inner_text()
    result = page.locator(".row[data-seq='4']")
    assert "error" in (result.get_attribute("class") or "")
    assert "← call #3" in result.inner_text()
    assert "tokens in 1234 · out 56" in page.locator(".row[data-seq='1']").inner_text()


def test_filtering_by_event_type(page: Any, tmp_path: Path) -> None:
    _open(page, _page_file(tmp_path, _demo()))
    page.click("#types-menu summary")
    page.uncheck("input[data-type='step/start']")
    types = page.eval_on_selector_all(".row .type", "cells => cells.map(c => c.textContent)")
    assert "step/start" not in types
    assert "turn/start" in types


def test_hostile_text_is_shown_as_text(page: Any, tmp_path: Path) -> None:
    session = Session.create("s")
    text = '</script><img src=x onerror="document.body.dataset.pwned=1"><script>alert(1)</script>'
    session.append("user/message", m.user(text, id="u1"), surface_op="append")
    dialogs: list[str] = []

    def answer(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", answer)
    _open(page, _page_file(tmp_path, session))
    assert page.locator(".row[data-seq='0'] .text").inner_text() == text
    assert dialogs == []
    assert page.evaluate("document.body.dataset.pwned") is None


def test_a_session_of_100000_events_opens_and_becomes_interactive(
    page: Any, tmp_path: Path
) -> None:
    session = grow_agent_session(3, 100_000, "big")
    path = _page_file(tmp_path, session)
    _open(page, path)
    assert page.evaluate("window.agentlogViewer.events") == session.seq
    assert page.locator(".row").count() < 200  # only what is in view is rendered
    page.fill("#search", f"prompt {session.event_at(session.seq - 1).data['turn']}")
    page.press("#search", "Enter")
    _until(page, "document.getElementById('search-count').textContent.includes('of')")
    page.evaluate("document.getElementById('timeline').scrollTop = 1e9")
    last_rows = f"Number(r.dataset.seq) > {session.seq - 50}"
    _until(page, f"[...document.querySelectorAll('.row')].some(r => {last_rows})")
