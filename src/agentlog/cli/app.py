"""The ``agentlog`` command: a thin typer layer over the public API (STYLE.md §23)."""

from __future__ import annotations

import typer
from rich.console import Console

from agentlog.cli.demo import build_demo_session
from agentlog.cli.render import render_session
from agentlog.events import render_event_catalog

__all__ = ["app"]

app = typer.Typer(
    name="agentlog",
    help="The durable, lossless session log for LLM agents.",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
def demo() -> None:
    """Play a scripted three-turn coding session and show its log, surface and messages.

    Offline and deterministic: a system prompt, tool calls and results, a pruned tool result
    and a compaction whose summary shadows the first turn, all kept in the log.

    Example: agentlog demo
    """
    session = build_demo_session()
    console = Console()
    console.print(render_session(session, console.width))
    console.print(
        f"\n{session.seq} events in the log, {len(session.surface.nodes)} on the surface, "
        f"{len(session.derive_messages())} messages for the model; nothing was deleted.",
        soft_wrap=True,
    )


@app.command()
def catalog() -> None:
    """Print the event-type catalog (Markdown), the same as docs/event-catalog.md.

    Example: agentlog catalog
    """
    typer.echo(render_event_catalog(), nl=False)
