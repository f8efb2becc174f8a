"""``export`` and ``import``: copy sessions between any two stores (or from session files).

Both are ``agentlog.stores.copy.copy_session`` per session: the stored log exactly (format 4),
written in durable batches so an interrupted copy resumes where it stopped when run again,
then read back and compared with the source. The source is only read.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from agentlog.cli.common import (
    EXIT_USAGE,
    StoreOption,
    echo_json_line,
    fail,
    opened,
    progress,
    reported,
    stdout,
)
from agentlog.stores import Store, open_store
from agentlog.stores.copy import copy_session
from agentlog.stores.files import open_transcript

__all__ = ["export", "import_sessions"]

_JSON = Annotated[bool, typer.Option("--json", help="Print one JSON object per session.")]


def export(
    sessions: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="SESSION", help="Session ids (default: every session).", show_default=False
        ),
    ] = None,
    to: Annotated[
        str,
        typer.Option(
            "--to", metavar="URL|PATH", help="The store to copy into (created if missing)."
        ),
    ] = "",
    store: StoreOption = None,
    as_json: _JSON = False,
) -> None:
    """Copy sessions from the store into another store, and verify each copy.

    Resumable: run it again after an interruption and it appends what is missing. A session
    the target already holds in full is left as it is; one it holds differently is an error.

    Example: agentlog export --store ./sessions.db --to ./backup
    """
    if not to:
        fail("export needs a target: --to URL|PATH", code=EXIT_USAGE)
    with opened(store) as source, opened(to, read_only=False) as target:
        ids = sessions or [info.id for info in source.list()]
        _copy(source, target, ids, as_json, store)


def import_sessions(
    sources: Annotated[
        list[str],
        typer.Argument(
            metavar="SOURCE",
            help="Stores (URL or path) to import every session of, or session files.",
            show_default=False,
        ),
    ],
    store: StoreOption = None,
    as_json: _JSON = False,
) -> None:
    """Copy every session of other stores, or session files, into the store; verify each.

    Session files of any dsh format are converted to format 4. Resumable, like export.

    Example: agentlog import ~/.dsh/sessions/--work--/abc/session.jsonl --store ./sessions.db
    """
    with opened(store, read_only=False) as target, ExitStack() as stack:
        for source_name in sources:
            with reported(source_name):
                if Path(source_name).is_file():
                    source, session_id = open_transcript(source_name, read_only=True)
                    ids = [session_id]
                else:
                    source = open_store(source_name, read_only=True)
                    ids = [info.id for info in source.list()]
                stack.enter_context(source)
            _copy(source, target, ids, as_json, store)


def _copy(source: Store, target: Store, ids: list[str], as_json: bool, url: str | None) -> None:
    console = stdout()
    with progress(f"copying to {target.url}", len(ids)) as advance:
        for done, session_id in enumerate(ids, 1):
            with reported(url):
                result = copy_session(source, target, session_id)
            advance(done)
            if as_json:
                echo_json_line(
                    {"session": session_id, "events": result.events, "copied": result.copied}
                )
            elif result.copied == 0:
                console.print(f"{session_id}: already in {target.url} ({result.events} events)")
            else:
                resumed = "" if result.copied == result.events else " (resumed)"
                console.print(
                    f"{session_id}: copied {result.copied} of {result.events} events{resumed}, "
                    "verified"
                )
