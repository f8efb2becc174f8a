"""``render_html``: the viewer as one self-contained page that opens from ``file://``.

The page is ``static/viewer.html`` with ``viewer.css`` and ``viewer.js`` inlined and the
session's data (``view_data``) embedded as a JSON script element. Nothing is fetched: no
network, no server, no build step (the script is hand-written, with no dependencies).
"""

from __future__ import annotations

import html
from importlib.resources import files

import orjson

from agentlog.stores import Inspection
from agentlog.viewer.model import view_data

__all__ = ["render_html"]

_STATIC = files("agentlog.viewer") / "static"


def _asset(name: str) -> str:
    return (_STATIC / name).read_text(encoding="utf-8")


def render_html(inspection: Inspection) -> str:
    """The viewer page of one inspected session (``Store.inspection``)."""
    data = orjson.dumps(view_data(inspection)).decode("utf-8", "surrogatepass")
    # "<" occurs only inside JSON strings, where "\\u003c" is the same character: so nothing in
    # the data can end the script element early ("</script") or open a comment ("<!--").
    data = data.replace("<", "\\u003c")
    page = _asset("viewer.html")
    return (
        page.replace("/*STYLE*/", _asset("viewer.css"))
        .replace("/*SCRIPT*/", _asset("viewer.js"))
        .replace("{{title}}", html.escape(f"agentlog · {inspection.session.id}"))
        .replace("{{data}}", data)
    )
