"""The offline viewer: a session's log and surface as one self-contained HTML file.

``render_html(inspection)`` writes the page (data embedded, hand-written JS and CSS inlined, no
network); ``serve(html)`` serves it on localhost. ``agentlog view`` is the command.
"""

from agentlog.viewer.html import render_html
from agentlog.viewer.model import view_data
from agentlog.viewer.serve import serve

__all__ = ["render_html", "serve", "view_data"]
