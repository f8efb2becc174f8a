"""Commands that write: ``fork``, ``compact``, ``prune`` and ``rm``.

``fork``, ``compact`` and ``prune`` only append (a new child session, a summary, pruned
results): nothing is lost, and ``agentlog expand`` shows what a replacement stands for.
``rm`` is the one command that removes events, and asks first.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated

import typer

from agentlog import ExtractiveSummarizer, PruneConfig, Session, compact, prune_tool_results
from agentlog.cli.common import (
    EXIT_USAGE,
    JsonOption,
    SessionArgument,
    StoreOption,
    echo_json,
    fail,
    opened,
    reported,
    session_store,
    stdout,
)
from agentlog.lifecycle import open_turn

__all__ = ["compact_command", "fork", "prune", "rm"]


def _no_file(session: str, command: str) -> None:
    if Path(session).is_file():
        fail(
            f"{command} works on a session in a store, not on a session file",
            f"import it first: agentlog import {session} --store URL|PATH",
            code=EXIT_USAGE,
        )


def fork(
    session: SessionArgument,
    store: StoreOption = None,
    at: Annotated[
        int | None,
        typer.Option(
            "--at",
            metavar="SEQ",
            help="The last event the child inherits (inclusive). Default: the whole log.",
            min=0,
        ),
    ] = None,
    child: Annotated[
        str | None, typer.Option("--id", help="The child's id. Default: a fresh UUID.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Fork a session into a new child session that inherits its log up to --at SEQ.

    The child holds events 0..SEQ of the parent (SEQ included); a turn the cut leaves open is
    closed with "forked" closers, so the child's history is provider-valid. The parent is only
    read.

    Example: agentlog fork demo-1a2b3c4d --at 20 --id demo-retry
    """
    _no_file(session, "fork")
    with opened(store, read_only=False) as opened_store, reported(store):
        created = opened_store.fork(session, at, child)
        child_id, seq = created.id, created.seq
        created.close()
    if as_json:
        echo_json({"session": child_id, "parent": session, "boundary": at, "events": seq})
        return
    stdout().print(f"forked {session} into {child_id} ({seq} events)")


def compact_command(
    session: SessionArgument,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Compact a session: a summary replaces all but the newest exchange (nothing is deleted).

    Uses the offline extractive summarizer (no model call). The session must be idle (no
    open turn). The summary cites every node it shadows; agentlog expand shows them.

    Example: agentlog compact demo-1a2b3c4d
    """
    with session_store(session, store, read_only=False) as (opened_store, session_id):
        writable = opened_store.open(session_id)
        try:
            result = asyncio.run(compact(writable, ExtractiveSummarizer()))
        finally:
            writable.close()
    if result is None:
        if as_json:
            echo_json({"session": session_id, "compacted": False})
            return
        stdout().print("nothing to compact: the history is already as short as it can be")
        return
    if as_json:
        echo_json(
            {
                "session": session_id,
                "compacted": True,
                "checkpoint": result.replacement_seq,
                "shadowed": list(result.shadowed_seqs),
            }
        )
        return
    stdout().print(
        f"compacted {session_id}: the summary at seq {result.replacement_seq} replaces "
        f"{len(result.shadowed_seqs)} nodes (agentlog expand {session} {result.replacement_seq})"
    )


def prune(
    session: SessionArgument,
    store: StoreOption = None,
    threshold: Annotated[
        int,
        typer.Option(
            "--threshold", metavar="CHARS", help="Prune tool results longer than this (chars)."
        ),
    ] = PruneConfig().threshold_chars,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be pruned; write nothing.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Prune oversized tool results: each is replaced by its head and tail (nothing deleted).

    A pruner runs inside a turn, before a step; on an idle session this command opens a turn
    of its own for it (turn/start, the pruned results, turn/end). Nothing is written when no
    result is long enough.

    Example: agentlog prune demo-1a2b3c4d --threshold 4000
    """
    with reported(store):
        config = PruneConfig(
            threshold_chars=threshold, head_chars=threshold // 2, tail_chars=threshold // 8
        )
    with session_store(session, store, read_only=dry_run) as (opened_store, session_id):
        view = opened_store.inspect(session_id)
        would = _pruned(view, config)
        if would and not dry_run:
            writable = opened_store.open(session_id)
            try:
                with writable.batch():
                    done = _pruned(writable, config)
            finally:
                writable.close()
            assert done == would
    if as_json:
        echo_json({"session": session_id, "pruned": would, "written": bool(would) and not dry_run})
        return
    if not would:
        stdout().print(f"nothing to prune: no tool result is longer than {threshold} characters")
        return
    verb = "would prune" if dry_run else "pruned"
    stdout().print(f"{verb} {len(would)} tool results of {session_id}: seqs {would}")


def _pruned(session: Session, config: PruneConfig) -> list[int]:
    """Prune ``session`` in a turn of its own (when idle); the seqs of the pruned results."""
    own_turn = open_turn(session.events) is None
    if own_turn:
        last = max((e.data["turn"] for e in session.events if e.type == "turn/start"), default=0)
        session.append("turn/start", {"turn": last + 1})
    result = prune_tool_results(session, config)
    if own_turn:
        session.append("turn/end", {"turn": last + 1, "reason": {"kind": "completed"}})
    return [pruned.original_seq for pruned in result.pruned]


def rm(
    sessions: Annotated[
        list[str],
        typer.Argument(metavar="SESSION", help="Session ids in the store.", show_default=False),
    ],
    store: StoreOption = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Remove sessions from a store, with every event (asks first unless --yes).

    The only command that deletes anything. A session open for writing is refused.

    Example: agentlog rm demo-1a2b3c4d --yes
    """
    for session in sessions:
        _no_file(session, "rm")
    with opened(store, read_only=False) as opened_store:
        counts = {}
        for session in sessions:
            with reported(store):
                counts[session] = opened_store.inspection(session).stored_events
        if not yes:
            if not sys.stdin.isatty():
                fail("rm asks for confirmation; pass --yes to remove without asking", code=2)
            listing = ", ".join(f"{s} ({n} events)" for s, n in counts.items())
            if not typer.confirm(f"Remove {listing} from {opened_store.url}?", default=False):
                fail("nothing removed")
        for session in sessions:
            with reported(store):
                opened_store.delete(session)
            stdout().print(f"removed {session} ({counts[session]} events)")
