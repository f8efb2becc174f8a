"""``agentlog repair``: cut a damaged (or any) stored log at a seq, and say what was removed.

The command is ``Store.repair`` plus rendering (STYLE.md §23). It is the explicit, reported way
past ``CorruptLog`` (DESIGN.md, Reliability): the error names the seq to cut at, and nothing is
cut until this command is run with it.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from agentlog.cli.common import StoreOption, opened, reported
from agentlog.stores import RepairResult

__all__ = ["describe_repair", "repair"]


def repair(
    session_id: Annotated[str, typer.Argument(help="The session id.")],
    cut_at: Annotated[
        int,
        typer.Option(
            "--cut-at",
            metavar="SEQ",
            help="The first seq to remove; the log keeps seqs 0 to SEQ-1. A 'corrupt session "
            "log' error names it.",
        ),
    ],
    store: StoreOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Cut a stored session's log at a seq: every record from SEQ on is removed.

    For a log that is refused as corrupt: the damaged record and the well-formed ones after it
    are removed (the records before SEQ must be intact), and a copy of the removed bytes (rows)
    is kept in a file beside the log. The session must not be open for writing; its next open
    closes a turn the cut leaves open.

    Example: agentlog repair my-session --cut-at 42
    """
    with opened(store, read_only=False) as opened_store, reported(store):
        result = opened_store.repair(session_id, cut_at=cut_at)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "session": result.session_id,
                    "cutAt": result.cut_at,
                    "removed": result.removed,
                    "damaged": result.damaged,
                    "savedTo": result.saved_to,
                },
                ensure_ascii=False,
            )
        )
        return
    for line in describe_repair(result):
        typer.echo(line)


def describe_repair(result: RepairResult) -> list[str]:
    """What a repair removed, in a line or two."""
    session = repr(result.session_id)  # quoted in a sentence, and escaped
    if not result.removed and not result.damaged and result.saved_to is None:
        return [f"session {session} ends before seq {result.cut_at}: nothing to cut"]
    lines = [
        f"cut session {session} at seq {result.cut_at}: removed {result.removed} well-formed "
        f"and {result.damaged} damaged record(s)"
    ]
    if result.saved_to is not None:
        lines.append(f"the removed part is kept in {result.saved_to}")
    return lines
