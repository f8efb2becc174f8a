"""``search``: full-text search across the sessions of a store.

Through a separate, disposable SQLite FTS5 index (``agentlog.stores.search``) kept in the user's
cache directory: it is brought up to date from the store's read-only views before each search
(only new or changed sessions are read), and the store itself is never written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from agentlog.cli.common import (
    EXIT_USAGE,
    JsonOption,
    StoreOption,
    echo_json,
    fail,
    opened,
    progress,
    reported,
    stdout,
)
from agentlog.cli.render import Column, grid
from agentlog.stores.search import SearchIndex, default_index_path

__all__ = ["search"]


def search(
    query: Annotated[
        str, typer.Argument(metavar="TEXT", help="The words to find (matched as a phrase).")
    ],
    store: StoreOption = None,
    session: Annotated[
        str | None, typer.Option("--session", help="Search one session only.")
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", metavar="N", help="Show at most N hits.", min=1)
    ] = 20,
    index: Annotated[
        Path | None,
        typer.Option(
            "--index",
            metavar="PATH",
            help="The index file. Default: one per store in ~/.cache/agentlog/search "
            "($XDG_CACHE_HOME).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Find events by their text across every session of a store.

    Matches message text, tool calls and results, and any other text in events. The first
    search of a store builds its index; later ones read only sessions that changed.

    Example: agentlog search "drops the last token"
    """
    if not query.strip():
        fail("the search text is empty", code=EXIT_USAGE)
    with opened(store) as opened_store, reported(store):
        path = index or default_index_path(opened_store.url)
        with SearchIndex(path) as search_index:
            sessions = len(opened_store.list())
            with progress("indexing", sessions) as advance:
                search_index.update(opened_store, progress=lambda done, _: advance(done))
            hits = search_index.search(query, store=opened_store, session_id=session, limit=limit)
    if as_json:
        echo_json([hit.to_json() for hit in hits])
        return
    console = stdout()
    if not hits:
        console.print(f"no event contains {query!r}", style="dim")
        return
    rows = [
        [
            Text(hit.session_id, style="bold"),
            Text(str(hit.seq)),
            Text(hit.type),
            _snippet(hit.snippet),
        ]
        for hit in hits
    ]
    columns = [
        Column(header="session", max_width=24),
        Column(header="seq", justify="right"),
        Column(header="type", max_width=18),
        Column(header="match"),
    ]
    console.print(grid(columns, rows, console.width))


def _snippet(snippet: str) -> Text:
    """The snippet on one line, the match (between brackets) highlighted."""
    text = Text()
    for index, part in enumerate(" ".join(snippet.split()).replace("]", "[").split("[")):
        text.append(part, style="bold yellow" if index % 2 else "")
    return text
