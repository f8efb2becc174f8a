"""``catalog`` and ``where``: what agentlog knows, and where it keeps sessions by default."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from agentlog.cli.common import JsonOption, echo_json, stdout
from agentlog.cli.render import Column, grid
from agentlog.events import KNOWN_EVENT_TYPES, render_event_catalog
from agentlog.events.catalog import declared_event_types
from agentlog.stores import default_store_url

__all__ = ["catalog", "where"]

_BADGES = {
    "surface": "shows the model a message",
    "log-only": "recorded, never shown to the model",
    "projection": "changes what visible messages show",
}


def catalog(
    as_json: JsonOption = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the catalog as a Markdown page.")
    ] = False,
) -> None:
    """List the event types a session log can hold, and what each one means.

    Example: agentlog catalog
    """
    types = [decl for decl in declared_event_types() if decl.name in KNOWN_EVENT_TYPES]
    if markdown:
        typer.echo(render_event_catalog(), nl=False)
        return
    if as_json:
        echo_json(
            [
                {
                    "type": d.name,
                    "kind": d.badge,
                    "owner": d.owner,
                    "meaning": " ".join(d.doc.split()),
                }
                for d in types
            ]
        )
        return
    console = stdout()
    console.print(Text(f"{len(types)} event types. Kinds:"))
    for kind, meaning in _BADGES.items():
        console.print(Text(f"  {kind:<10} {meaning}"))
    console.print()
    rows = [
        [Text(d.name, style="bold"), Text(d.badge), Text(" ".join(d.doc.split()))] for d in types
    ]
    columns = [
        Column(header="type", max_width=26),
        Column(header="kind", max_width=10),
        Column(header="meaning"),
    ]
    console.print(grid(columns, rows, console.width))


def where() -> None:
    """Print the URL of the default store ($AGENTLOG_STORE, else sessions.db in $AGENTLOG_HOME).

    Example: agentlog where
    """
    typer.echo(default_store_url())
