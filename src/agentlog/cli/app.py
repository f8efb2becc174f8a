"""The ``agentlog`` command: a thin typer layer over the public API (STYLE.md §23).

Each command lives in a module of its group and is registered below with one line; a new
command is one module (or one function in its group's module) plus one line here. Shared
options (``--store``, ``--json``, the ``SESSION`` argument), error reporting and output are in
``agentlog.cli.common``.

Exit codes: 0 success; 1 failure (an error, or a verification that failed); 2 usage.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Annotated

import typer

from agentlog.cli import (
    browse,
    catalog,
    chat,
    check,
    demo,
    edit,
    migrate,
    repair,
    search,
    tail,
    transfer,
    view,
)
from agentlog.formats import FORMAT_VERSION

__all__ = ["app"]

app = typer.Typer(
    name="agentlog",
    help="The durable, lossless session log for LLM agents: look at, check, copy and edit "
    "sessions. Exit codes: 0 success, 1 failure (an error, or a check that failed), 2 usage.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        try:
            installed = package_version("agentlog")
        except PackageNotFoundError:  # running from a source tree that was never installed
            installed = "unknown"
        typer.echo(f"agentlog {installed} (session format {FORMAT_VERSION})")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """The durable, lossless session log for LLM agents."""


app.command("ls")(browse.list_sessions)
app.command("list", hidden=True)(browse.list_sessions)
app.command()(browse.show)
app.command()(browse.messages)
app.command("expand")(browse.expand_command)
app.command()(check.stats)
app.command()(check.verify)
app.command()(tail.tail)
app.command()(search.search)
app.command()(view.view)
app.command()(edit.fork)
app.command("compact")(edit.compact_command)
app.command()(edit.prune)
app.command()(edit.rm)
app.command()(migrate.migrate)
app.command("migrate-store")(migrate.migrate_store)
app.command()(repair.repair)
app.command()(transfer.export)
app.command("import")(transfer.import_sessions)
app.command()(demo.demo)
app.command()(chat.chat)
app.command()(catalog.catalog)
app.command()(catalog.where)
