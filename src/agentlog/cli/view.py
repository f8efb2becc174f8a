"""``view``: a session in the offline HTML viewer (a file, or served on localhost)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentlog.cli.common import SessionArgument, StoreOption, fail, session_store, stdout
from agentlog.viewer import render_html, serve

__all__ = ["view"]


def view(
    session: SessionArgument,
    store: StoreOption = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Where to write the page. Default: <session>.html in the current directory.",
        ),
    ] = None,
    serve_it: Annotated[
        bool, typer.Option("--serve", help="Serve the page on localhost instead of writing it.")
    ] = False,
    port: Annotated[
        int, typer.Option("--port", metavar="PORT", help="The port for --serve (0: any free).")
    ] = 0,
) -> None:
    """Open a session in the viewer: one self-contained HTML file that works offline.

    The log as a timeline grouped by turn and step, the surface overlaid, each replacement
    collapsed over what it replaced (click it to see exactly that, through nested
    replacements), tool calls joined to their results, errors and retries highlighted, token
    usage per step, filters, full-text search and links to any seq (page.html#seq=N).

    Example: agentlog view demo-1a2b3c4d -o demo.html
    """
    with session_store(session, store) as (opened_store, session_id):
        inspection = opened_store.inspection(session_id)
    page = render_html(inspection)
    if serve_it:
        if output is not None:
            fail("pass either --serve or --output, not both", code=2)
        try:
            serve(
                page, port=port, ready=lambda url: stdout().print(f"serving {session_id} at {url}")
            )
        except KeyboardInterrupt:
            raise typer.Exit(0) from None
        return
    target = output or Path(f"{_file_name(session_id)}.html")
    try:
        target.write_text(page, encoding="utf-8", errors="surrogatepass")
    except OSError as exc:
        fail(f'cannot write "{target}": {exc.strerror}')
    stdout().print(
        f"wrote {target} ({len(inspection.session.events)} events); open it in a browser"
    )


def _file_name(session_id: str) -> str:
    """A safe file name for a session id."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id).strip(".")
    return safe or "session"
