"""The page: one file, assets inlined, data embedded so that no text can break out of it."""

from __future__ import annotations

import json
import re

from agentlog import Session
from agentlog import messages as m
from agentlog.stores import Inspection
from agentlog.viewer import render_html, view_data


def _inspection(session: Session) -> Inspection:
    return Inspection(
        session=session, stored_events=session.seq, stored_version=4, location=None, torn_tail=False
    )


def test_the_page_is_self_contained() -> None:
    session = Session.create("s")
    session.append("user/message", m.user("hello", id="u1"), surface_op="append")
    page = render_html(_inspection(session))
    assert "/*SCRIPT*/" not in page
    assert "/*STYLE*/" not in page
    assert "{{data}}" not in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing to fetch
    assert "default-src 'none'" in page  # and the page may not fetch anything either
    assert "<title>agentlog · s</title>" in page


def test_hostile_text_stays_inside_the_data_element() -> None:
    hostile = "</script><script>alert(1)</script><!-- \u2028 & <b>"
    session = Session.create("</title>x")
    session.append("user/message", m.user(hostile, id="u1"), surface_op="append")
    page = render_html(_inspection(session))
    start = page.index('<script type="application/json" id="data">') + len(
        '<script type="application/json" id="data">'
    )
    end = page.index("</script>", start)
    embedded = json.loads(page[start:end])
    assert embedded == json.loads(json.dumps(view_data(_inspection(session))))
    assert embedded["events"][0][4]["content"][0]["text"] == hostile
    assert "<title>agentlog · &lt;/title&gt;x</title>" in page
