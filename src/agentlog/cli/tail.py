"""``tail``: the last events of a session, and with ``-f`` each new one as it is stored.

Following reads the store as another process writes it (``Store.follow``: only new events are
read; file and SQLite stores are polled for their revision, a PostgreSQL store wakes the
follower on ``LISTEN``/``NOTIFY`` as soon as an append commits). It never writes, so it can watch a
session whose writer holds the lock.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from agentlog import Event
from agentlog.cli.common import (
    SessionArgument,
    StoreOption,
    echo_json_line,
    reported,
    session_store,
    stdout,
)
from agentlog.cli.render import event_summary
from agentlog.values import thaw

__all__ = ["tail"]


def tail(
    session: SessionArgument,
    store: StoreOption = None,
    lines: Annotated[
        int,
        typer.Option(
            "--lines", "-n", metavar="N", help="How many stored events to show first.", min=0
        ),
    ] = 10,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing events as they are stored.")
    ] = False,
    interval: Annotated[
        float,
        typer.Option(
            "--interval",
            metavar="SECONDS",
            help="Seconds between polls when following (PostgreSQL: the longest wait; a "
            "NOTIFY wakes it at once).",
            min=0.01,
        ),
    ] = 0.25,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print each event as a JSON line (wire form).")
    ] = False,
) -> None:
    """Print the last stored events of a session; with -f, follow it as it grows.

    Only stored events are shown (no repair closers). Stop following with Ctrl-C.

    Example: agentlog tail -f demo-1a2b3c4d
    """
    console = stdout()

    def emit(event: Event) -> None:
        if as_json:
            echo_json_line(thaw(event.to_wire()))
            return
        line = Text(f"{event.seq:>6}  ", style="dim")
        line.append(f"{event.type:<20} ", style="bold")
        line.append(event_summary(event))
        line.truncate(console.width, overflow="ellipsis")
        console.print(line)

    with session_store(session, store) as (opened_store, session_id), reported(store):
        stored = opened_store.read_from(session_id, 0)
        for event in stored[len(stored) - min(lines, len(stored)) :]:
            emit(event)
        if not follow:
            return
        try:
            for event in opened_store.follow(session_id, from_seq=len(stored), interval=interval):
                emit(event)
        except KeyboardInterrupt:
            raise typer.Exit(0) from None
