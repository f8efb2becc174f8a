"""The ``agentlog`` command: a thin typer layer over the public API (STYLE.md §23).

Each command is one library call plus rendering. Library errors print ``Error: <message>`` and
exit 1; usage errors exit 2 (typer's default).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agentlog.cli.chat import chat
from agentlog.cli.demo import demo
from agentlog.cli.migrate import describe, file_store, migrated_location
from agentlog.cli.render import render_events, render_session
from agentlog.errors import AgentlogError
from agentlog.events import render_event_catalog
from agentlog.formats import FORMAT_VERSION
from agentlog.plugins import expand
from agentlog.stores import Store, default_store_url, open_store
from agentlog.values import dumps

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
def _reported() -> Iterator[None]:
    """Turn a library error into ``Error: ...`` on stderr and exit status 1."""
    try:
        yield
    except AgentlogError as exc:
        Console(stderr=True).print(f"[red]Error:[/red] {exc}", highlight=False, markup=True)
        raise typer.Exit(1) from None


@contextmanager
def _store(url: str | None, **options: object) -> Iterator[Store]:
    """Open the store for one command, reporting library errors."""
    with _reported(), open_store(url, **options) as store:  # type: ignore[arg-type]  # typed
        yield store


app.command()(demo)
app.command()(chat)


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


@app.command(name="expand")
def expand_command(
    session_id: str,
    seq: int,
    store: StoreOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print each event as a JSON line (wire form).")
    ] = False,
) -> None:
    """Show the original events a replacement (a summary, a pruned result) stands for.

    Read-only. Follows earlier replacements among them, down to events that replaced nothing.

    Example: agentlog expand demo-1a2b3c4d 34
    """
    with _store(store) as opened:
        session = opened.inspect(session_id)
    if not 0 <= seq < session.seq:
        Console(stderr=True).print(
            f"[red]Error:[/red] session {session_id!r} has no event at seq {seq} "
            f"(it holds seqs 0-{session.seq - 1})",
            highlight=False,
        )
        raise typer.Exit(1)
    originals = expand(session, seq)
    if as_json:
        for event in originals:
            typer.echo(dumps(event.to_wire()).decode("utf-8", "surrogatepass"))
        return
    if not originals:
        typer.echo(f"event {seq} ({session.event_at(seq).type}) replaced nothing")
        return
    console = Console()
    title = f"Event {seq} ({session.event_at(seq).type}) stands for {len(originals)} events"
    console.print(render_events(originals, title, console.width))


@app.command()
def migrate(
    targets: Annotated[
        list[str] | None,
        typer.Argument(
            help="Session ids in the store, or transcript files. Default: every session of the "
            "store stored in an older format.",
            show_default=False,
        ),
    ] = None,
    store: StoreOption = None,
    write: Annotated[
        bool,
        typer.Option("--write", help="Publish the format-4 artifacts; without it, a dry run."),
    ] = False,
) -> None:
    """Convert sessions stored in older dsh formats (v0–v3) to format 4.

    A dry run unless --write: each session is read through the migration chain in memory and
    summarised. --write continues each one, which writes its format-4 transcript beside the
    original; the original is never changed.

    Example: agentlog migrate --store jsonl:////home/me/.dsh/sessions --write
    """
    files = [Path(target) for target in targets or () if Path(target).is_file()]
    ids = [target for target in targets or () if not Path(target).is_file()]
    for file in files:
        with _reported(), file_store(file) as (opened, session_id):
            _migrate_one(opened, session_id, write)
    if ids or not files:
        with _store(store) as opened:
            if not ids:
                older = [i for i in opened.list() if i.version < FORMAT_VERSION]
                ids = [info.id for info in older]
                if not ids:
                    typer.echo(f"{opened.url}: every session is in format {FORMAT_VERSION}")
            for session_id in ids:
                _migrate_one(opened, session_id, write)


def _migrate_one(opened: Store, session_id: str, write: bool) -> None:
    plan = opened.plan_migration(session_id)
    for line in describe(plan):
        typer.echo(line)
    if not plan.needed:
        return
    target = migrated_location(plan) or "the store"
    if Path(target).exists():
        typer.echo(f"  already continued in {target}")
        return
    if write:
        opened.open(session_id).close()
        typer.echo(f"  wrote {target}")
    else:
        typer.echo(f"  would write {target} (dry run; --write to publish)")


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
