"""The ``agentlog`` command: a thin typer layer over the public API (STYLE.md §23).

Each command is one library call plus rendering. Library errors print ``Error: <message>`` and
exit 1; usage errors exit 2 (typer's default).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.console import Console

from agentlog.cli.demo import build_demo_session, demo_clock
from agentlog.cli.render import render_session
from agentlog.errors import AgentlogError
from agentlog.events import render_event_catalog
from agentlog.stores import Store, default_store_url, open_store

__all__ = ["app"]

app = typer.Typer(
    name="agentlog",
    help="The durable, lossless session log for LLM agents.",
    no_args_is_help=True,
    add_completion=False,
)

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Store URL (jsonl:///dir, jsonl+zstd:///dir, sqlite:///file.db). Default: "
        "$AGENTLOG_STORE, else sessions.db in $AGENTLOG_HOME.",
        show_default=False,
    ),
]


@contextmanager
def _store(url: str | None, **options: object) -> Iterator[Store]:
    """Open the store for one command; turn library errors into ``Error: ...`` and exit 1."""
    try:
        with open_store(url, **options) as store:  # type: ignore[arg-type]  # typed options
            yield store
    except AgentlogError as exc:
        Console(stderr=True).print(f"[red]Error:[/red] {exc}", highlight=False, markup=True)
        raise typer.Exit(1) from None


@app.command()
def demo(store: StoreOption = None) -> None:
    """Play a scripted three-turn coding session into the store and show it.

    Offline and deterministic: a system prompt, tool calls and results, a pruned tool result
    and a compaction whose summary shadows the first turn, all kept in the log.

    Example: agentlog demo --store jsonl:///tmp/sessions
    """
    console = Console()
    with _store(store, clock=demo_clock()) as opened:
        session_id = f"demo-{uuid.uuid4().hex[:8]}"
        with opened.create(session_id, cwd="/demo/project") as session:
            build_demo_session(session)
            stored = session.seq
            console.print(render_session(session, console.width))
            console.print(
                f"\n{stored} events in the log, {len(session.surface.nodes)} on the surface, "
                f"{len(session.derive_messages())} messages for the model; nothing was deleted.",
                soft_wrap=True,
            )
        console.print(
            f"Saved as session {session_id!r} in {opened.url} "
            f"(see it again with: agentlog show {session_id})",
            soft_wrap=True,
            highlight=False,
        )


@app.command(name="list")
def list_sessions(
    store: StoreOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
) -> None:
    """List the sessions in a store, oldest first.

    Example: agentlog list --store sqlite:///sessions.db
    """
    with _store(store) as opened:
        infos = opened.list()
    if as_json:
        for info in infos:
            typer.echo(
                json.dumps(
                    {
                        "id": info.id,
                        "createdAt": info.created_at,
                        "version": info.version,
                        "cwd": info.cwd,
                        "parentSession": info.parent_session,
                    }
                )
            )
        return
    for info in infos:
        parent = f"  (fork of {info.parent_session})" if info.parent_session else ""
        typer.echo(f"{info.id}  v{info.version}  {info.cwd or '-'}{parent}")


@app.command()
def show(session_id: str, store: StoreOption = None) -> None:
    """Show a stored session: its log beside its surface, then the derived messages.

    Read-only: a crash tail or an interrupted turn is repaired in the view only.

    Example: agentlog show demo-1a2b3c4d
    """
    console = Console()
    with _store(store) as opened:
        session = opened.inspect(session_id)
    console.print(render_session(session, console.width))


@app.command()
def where() -> None:
    """Print the URL of the default store.

    Example: agentlog where
    """
    typer.echo(default_store_url())


@app.command()
def catalog() -> None:
    """Print the event-type catalog (Markdown), the same as docs/event-catalog.md.

    Example: agentlog catalog
    """
    typer.echo(render_event_catalog(), nl=False)
