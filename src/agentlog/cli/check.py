"""Read-only commands that measure and check sessions: ``stats`` and ``verify``."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.text import Text

from agentlog.cli.common import (
    EXIT_FAILURE,
    EXIT_USAGE,
    JsonOption,
    SessionArgument,
    StoreOption,
    echo_json,
    echo_json_line,
    fail,
    opened,
    progress,
    reported,
    session_store,
    stdout,
)
from agentlog.cli.render import Column, grid
from agentlog.plugins.stats import session_stats
from agentlog.plugins.verify import Verification, verify_session
from agentlog.stores import Store

__all__ = ["stats", "verify"]


def stats(
    session: SessionArgument,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Count and price a session: events by type, turns, estimated tokens, bytes, savings.

    Tokens are estimated as dsh prices them (four characters a token, plus overheads); the
    savings are what compaction and pruning keep out of every request, in estimated tokens.

    Example: agentlog stats demo-1a2b3c4d
    """
    with session_store(session, store) as (opened_store, session_id):
        inspection = opened_store.inspection(session_id)
    figures = session_stats(inspection.session, stored_events=inspection.stored_events)
    location = inspection.location
    size = os.path.getsize(location) if location and os.path.isfile(location) else None
    if as_json:
        echo_json({"session": session_id, **figures.to_json(), "fileBytes": size})
        return
    console = stdout()
    rows = [
        ("events", f"{figures.events} stored"),
        ("turns / steps", f"{figures.turns} / {figures.steps}"),
        ("tool calls", f"{figures.tool_calls} ({figures.tool_errors} results were errors)"),
        ("surface", f"{figures.surface_nodes} nodes, {figures.messages} messages for the model"),
        ("replacements", f"{figures.replacements} ({figures.shadowed} events shadowed)"),
        ("estimated tokens", f"{figures.estimated_tokens:,} per request now"),
        (
            "  without them",
            f"{figures.estimated_tokens_unreplaced:,} (saved: {figures.estimated_savings:,})",
        ),
        ("reported usage", ", ".join(f"{k} {v:,}" for k, v in figures.usage.items()) or "-"),
        ("JSON bytes", f"{figures.json_bytes:,}"),
    ]
    if size is not None:
        rows.append(("on disk", f"{size:,} bytes ({inspection.location})"))
    console.print(Text(f"Session {session_id}", style="bold"))
    console.print(
        grid(
            [Column(header="figure", max_width=18), Column(header="value")],
            [[Text(k), Text(v)] for k, v in rows],
            console.width,
        )
    )
    types = [[Text(str(n), style="bold"), Text(t)] for t, n in figures.by_type.items()]
    console.print(Text("\nEvents by type", style="bold"))
    console.print(
        grid([Column(header="count", justify="right"), Column(header="type")], types, console.width)
    )


def verify(
    sessions: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="SESSION",
            help="Session ids in the store, or session files.",
            show_default=False,
        ),
    ] = None,
    store: StoreOption = None,
    every: Annotated[
        bool, typer.Option("--all", help="Verify every session of the store.")
    ] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Fail on structure problems too (turn/step/tool-call, compaction)."
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object per session (JSON lines).")
    ] = False,
) -> None:
    """Check sessions in full; exit 1 when any fails.

    Three checks: load (every event validated, as a resume reads it), history (every tool
    call answered, as providers require) and structure (turn, step, tool-call and compaction
    brackets; reported as warnings unless --strict, since dsh loads logs without them).
    Nothing is written.

    Example: agentlog verify --all --store ./sessions
    """
    if bool(sessions) == every:
        fail("name the sessions to verify, or pass --all (not both)", code=EXIT_USAGE)
    verdicts: list[Verification] = []
    if every:
        with opened(store) as opened_store:
            infos = opened_store.list()
            with progress("verifying", len(infos)) as advance:
                for done, info in enumerate(infos, 1):
                    verdicts.append(_verify(opened_store, info.id, strict, store, as_json))
                    advance(done)
    for session in sessions or ():
        with session_store(session, store) as (opened_store, session_id):
            verdicts.append(_verify(opened_store, session_id, strict, store, as_json))
    if not as_json:
        failed = sum(1 for v in verdicts if not v.ok)
        summary = f"{len(verdicts) - failed} of {len(verdicts)} sessions passed"
        stdout().print(Text(summary, style="red" if failed else "green"))
    if any(not v.ok for v in verdicts):
        raise typer.Exit(EXIT_FAILURE)


def _verify(
    opened_store: Store, session_id: str, strict: bool, url: str | None, as_json: bool
) -> Verification:
    with reported(url):
        verdict = verify_session(opened_store, session_id, strict=strict)
    if as_json:
        echo_json_line(verdict.to_json())
        return verdict
    console = stdout()
    mark = Text("ok  ", style="green") if verdict.ok else Text("FAIL", style="bold red")
    line = Text.assemble(mark, " ", (session_id, "bold"), f"  {verdict.events} events")
    console.print(line)
    for problem in verdict.problems:
        console.print(Text(f"  {problem.check}: {problem.message}", style="red"))
    for warning in verdict.warnings:
        console.print(Text(f"  warning ({warning.check}): {warning.message}", style="yellow"))
    return verdict
