"""What every command shares: options, opening stores and sessions, errors, output.

Defined once (STYLE.md §23): the ``--store`` and ``--json`` options and the ``SESSION``
argument; ``opened`` / ``session_store`` (read-only unless the command writes); ``reported``,
which turns a library error into ``Error: <message>`` plus a hint and exit status 1; JSON output;
the terminal console (plain text when stdout is not a terminal or ``NO_COLOR`` is set); paging
through ``$PAGER``; and progress bars on stderr.

Exit codes: 0 success, 1 failure (an error, or a verification that failed), 2 usage.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Final, NoReturn

import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentlog.errors import (
    AgentlogError,
    CorruptLog,
    FormatVersionError,
    SessionLocked,
    SessionNotFound,
    StoreError,
)
from agentlog.stores import Store, default_store_url, open_store
from agentlog.stores.files import open_transcript

__all__ = [
    "EXIT_FAILURE",
    "EXIT_USAGE",
    "JsonOption",
    "SessionArgument",
    "StoreOption",
    "echo_json",
    "echo_json_line",
    "fail",
    "opened",
    "page",
    "progress",
    "reported",
    "session_store",
    "stdout",
]

EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="URL|PATH",
        help="The store: a URL (sqlite:///rel.db, sqlite:////abs.db, jsonl:///dir, "
        "jsonl+zstd:///dir, postgresql://host/db, memory:) or a path (a directory is JSONL, "
        "a .db file SQLite). "
        "Default: $AGENTLOG_STORE, else sessions.db in $AGENTLOG_HOME.",
        show_default=False,
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON for scripts instead of a table.")
]
SessionArgument = Annotated[
    str,
    typer.Argument(
        metavar="SESSION",
        help="A session id in the store, or the path of a session file (.jsonl, .jsonl.zstd).",
        show_default=False,
    ),
]


def _hint(exc: AgentlogError, store_url: str | None) -> str | None:
    """What to do about an error, for the line after ``Error:``."""
    store = f" --store {store_url}" if store_url else ""
    if isinstance(exc, SessionNotFound):
        return f"list the sessions with: agentlog ls{store}"
    if isinstance(exc, SessionLocked):
        return "another process is writing it; agentlog tail -f SESSION follows it read-only"
    if isinstance(exc, CorruptLog):
        return "agentlog verify SESSION reports every problem; agentlog repair cuts a damaged log"
    if isinstance(exc, FormatVersionError):
        return "this log needs a newer agentlog, or an older log needs agentlog migrate"
    if isinstance(exc, StoreError) and any(
        missing in str(exc) for missing in ("no SQLite store at", "no JSONL store at")
    ):
        if store_url is None:
            return (
                f"nothing is saved in the default store ({default_store_url()}) yet; "
                "run agentlog demo, or pass --store URL|PATH"
            )
        return "check the path; read-only commands never create a store"
    return None


def fail(message: str, hint: str | None = None, *, code: int = EXIT_FAILURE) -> NoReturn:
    """Print ``Error: <message>`` (and ``Hint: ...``) on stderr and exit with ``code``."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    err.print(f"[red]Error:[/red] {_escape(message)}")
    if hint:
        err.print(f"[dim]Hint:[/dim] {_escape(hint)}")
    raise typer.Exit(code)


def _escape(text: str) -> str:
    return text.replace("[", "\\[")


@contextmanager
def reported(store_url: str | None = None) -> Iterator[None]:
    """Turn a library error into ``Error: <message>`` plus a hint, and exit status 1."""
    try:
        yield
    except AgentlogError as exc:
        fail(str(exc), _hint(exc, store_url))


@contextmanager
def opened(url: str | None, *, read_only: bool = True) -> Iterator[Store]:
    """The store of ``--store`` (read-only unless the command writes), errors reported."""
    with reported(url), open_store(url, read_only=read_only) as store:
        yield store


@contextmanager
def session_store(
    session: str, url: str | None, *, read_only: bool = True
) -> Iterator[tuple[Store, str]]:
    """The store holding ``SESSION`` and its id: a session file's own, else ``--store``'s."""
    path = Path(session)
    with reported(url):
        if path.is_file():
            store, session_id = open_transcript(path, read_only=read_only)
        else:
            store, session_id = open_store(url, read_only=read_only), session
        with store:
            try:
                yield store, session_id
            except SessionNotFound as exc:
                if os.sep in session or session.endswith((".jsonl", ".zstd")):
                    fail(str(exc), f"there is no file {str(path)!r} either")
                raise


def stdout() -> Console:
    """The console for a command's output: styled on a terminal, plain text otherwise."""
    return Console(highlight=False, soft_wrap=True)


def echo_json(document: Any) -> None:
    """Print one JSON document (indented)."""
    sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")


def echo_json_line(document: Any) -> None:
    """Print one line of a JSON-lines stream, and flush it (streams are read as they come)."""
    sys.stdout.write(orjson.dumps(document).decode() + "\n")
    sys.stdout.flush()


def page(console: Console, text: str, *, enabled: bool = True) -> None:
    """Show ``text``, through ``$PAGER`` (default ``less -R``) when it overflows the terminal."""
    lines = text.count("\n") + 1
    if not (enabled and console.is_terminal and lines > console.height):
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    command = os.environ.get("PAGER") or "less -R"
    env = {**os.environ, "LESS": os.environ.get("LESS", "FRX")}
    try:
        pager = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, env=env)
    except OSError:
        sys.stdout.write(text + "\n")
        return
    assert pager.stdin is not None
    try:
        pager.stdin.write(text.encode())
        pager.stdin.close()
    except BrokenPipeError:
        pass  # the reader quit the pager early
    pager.wait()


@contextmanager
def progress(description: str, total: int) -> Iterator[Any]:
    """A progress bar on stderr (shown only when stderr is a terminal); yields ``advance(n)``."""
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not sys.stderr.isatty(),
    )
    with bar:
        task = bar.add_task(description, total=total)

        def update(done: int) -> None:
            bar.update(task, completed=done)

        yield update
