"""Read-only commands that show sessions: ``ls``, ``show``, ``messages``, ``expand``.

None of them writes anything: stores are opened read-only (a store that does not exist is an
error, never created), and a crash tail or an interrupted turn is repaired in the view only.
"""

from __future__ import annotations

import datetime
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from agentlog import Event, expand, fold_surface, thaw
from agentlog.cli.common import (
    EXIT_USAGE,
    JsonOption,
    SessionArgument,
    StoreOption,
    echo_json,
    fail,
    opened,
    page,
    session_store,
    stdout,
)
from agentlog.cli.render import (
    Column,
    event_summary,
    grid,
    render_events,
    render_messages,
    shown_id,
)
from agentlog.cli.render import render_session as render_session_text
from agentlog.providers import to_anthropic, to_chat_completions
from agentlog.stores import Inspection, SessionInfo
from agentlog.values import dumps

__all__ = ["MessageFormat", "expand_command", "list_sessions", "messages", "show"]


def list_sessions(
    store: StoreOption = None,
    as_json: JsonOption = False,
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-n", metavar="N", help="Show the N most recent.", min=1),
    ] = None,
) -> None:
    """List the sessions of a store, most recently updated first.

    Example: agentlog ls --store ./sessions.db
    """
    with opened(store) as opened_store:
        infos = sorted(opened_store.list(), key=_updated, reverse=True)
    infos = infos[:limit] if limit else infos
    if as_json:
        echo_json(
            [
                {
                    "id": info.id,
                    "createdAt": info.created_at,
                    "updatedAt": info.updated_at,
                    "version": info.version,
                    "cwd": info.cwd,
                    "parentSession": info.parent_session,
                    "location": info.location,
                }
                for info in infos
            ]
        )
        return
    console = stdout()
    if not infos:
        console.print("no sessions", style="dim")
        return
    rows = [
        [
            Text(shown_id(info.id), style="bold"),
            Text(_day(_updated(info)[0])),
            Text(f"v{info.version}"),
            Text(info.cwd or "-"),
            Text(f"fork of {shown_id(info.parent_session)}" if info.parent_session else ""),
        ]
        for info in infos
    ]
    columns = [
        Column(header="session", max_width=38),
        Column(header="updated", max_width=16),
        Column(header="format", max_width=6),
        Column(header="cwd", max_width=30),
        Column(header="parent"),
    ]
    console.print(grid(columns, rows, console.width))


def _updated(info: SessionInfo) -> tuple[int, str]:
    """When a session last changed (its creation when the store cannot tell), then its id."""
    return (info.created_at if info.updated_at is None else info.updated_at, info.id)


def _day(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M")


def _select(
    inspection: Inspection, tail: int | None, turn: int | None, session_ref: str
) -> list[Event]:
    """The events ``--tail`` / ``--turn`` ask for (all by default)."""
    events = list(inspection.session.events)
    if turn is not None:
        start = next(
            (e.seq for e in events if e.type == "turn/start" and e.data.get("turn") == turn), None
        )
        if start is None:
            fail(f"session {session_ref!r} has no turn {turn}", code=EXIT_USAGE)
        end = next(
            (e.seq for e in events[start:] if e.type == "turn/end" and e.data.get("turn") == turn),
            len(events) - 1,
        )
        events = events[start : end + 1]
    if tail is not None:
        events = events[-tail:]
    return events


def show(
    session: SessionArgument,
    store: StoreOption = None,
    tail: Annotated[
        int | None, typer.Option("--tail", "-n", metavar="N", help="Only the last N events.", min=1)
    ] = None,
    turn: Annotated[
        int | None, typer.Option("--turn", metavar="N", help="Only the events of turn N.", min=1)
    ] = None,
    as_json: JsonOption = False,
    pager: Annotated[
        bool, typer.Option("--pager/--no-pager", help="Page long output through $PAGER.")
    ] = True,
) -> None:
    """Show a session: its log beside its surface, then the messages the model sees.

    Each event shows its surface op; shadowed events are marked with the replacement that
    shadowed them, and each replacement with the nodes it cites. Read-only: a crash tail or an
    interrupted turn is repaired in this view only (such events are marked *).

    Example: agentlog show demo-1a2b3c4d --turn 2
    """
    with session_store(session, store) as (opened_store, session_id):
        inspection = opened_store.inspection(session_id)
    events = _select(inspection, tail, turn, session)
    if as_json:
        echo_json(_session_json(inspection, events))
        return
    console = stdout()
    styled = console.is_terminal and not console.no_color
    text = render_session_text(inspection, events, session, console.width, styled=styled)
    page(console, _rendered(console, text) if styled else text.plain, enabled=pager)


def _rendered(console: Console, text: Text) -> str:
    """``text`` as ``console`` prints it (with ANSI styles on a terminal), lines never wrapped."""
    with console.capture() as captured:
        console.print(text, no_wrap=True, overflow="ignore", crop=False)
    return captured.get()


def _session_json(inspection: Inspection, events: list[Event]) -> dict[str, Any]:
    session = inspection.session
    fold = fold_surface(session.events, session.projections)
    shadowed_by = {seq: r.seq for r in fold.replacements for seq in r.shadowed_seqs}
    replaced = {r.seq: list(r.shadowed_seqs) for r in fold.replacements}
    visible = set(session.surface.nodes)
    return {
        "session": session.id,
        "header": thaw(session.header),
        "storedVersion": inspection.stored_version,
        "storedEvents": inspection.stored_events,
        "location": inspection.location,
        "events": [
            {
                "event": thaw(event.to_wire()),
                "stored": event.seq < inspection.stored_events,
                "onSurface": event.seq in visible,
                "shadowedBy": shadowed_by.get(event.seq),
            }
            for event in events
        ],
        "surface": [
            {"seq": seq, "replaced": replaced.get(seq, [])} for seq in session.surface.nodes
        ],
        "messages": thaw(session.derive_messages()),
    }


class MessageFormat(StrEnum):
    """The shapes ``agentlog messages`` can print."""

    table = "table"
    json = "json"
    openai = "openai"
    anthropic = "anthropic"


def messages(
    session: SessionArgument,
    store: StoreOption = None,
    output: Annotated[
        MessageFormat,
        typer.Option(
            "--format",
            "-f",
            help="table: one line per message; json: agentlog's wire shape (as "
            "derive_messages() returns them); openai: Chat Completions messages; anthropic: "
            "an Anthropic Messages request's system and messages.",
        ),
    ] = MessageFormat.table,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="For openai/anthropic: the model the request goes to (its own reasoning is "
            "sent back).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Print the history the model sees: the session's derived messages.

    Example: agentlog messages demo-1a2b3c4d --format openai
    """
    with session_store(session, store) as (opened_store, session_id):
        view = opened_store.inspect(session_id)
    derived = view.derive_messages()
    try:
        if output is MessageFormat.openai:
            echo_json(to_chat_completions(derived, model=model))
            return
        if output is MessageFormat.anthropic:
            echo_json(to_anthropic(derived, model=model))
            return
    except ValueError as exc:
        fail(f"cannot convert the messages of {session!r}: {exc}")
    if as_json or output is MessageFormat.json:
        echo_json(thaw(derived))
        return
    console = stdout()
    console.print(render_messages(derived, console.width))


def expand_command(
    session: SessionArgument,
    seq: Annotated[int, typer.Argument(metavar="SEQ", help="The replacing event.", min=0)],
    store: StoreOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the original events as JSON lines (wire form).")
    ] = False,
) -> None:
    """Show what a replacement (a compaction summary, a pruned result) stands for.

    The replacement cites the surface nodes it shadowed; a cited node that was itself a
    replacement is followed in turn, down to the original events, which are printed.

    Example: agentlog expand demo-1a2b3c4d 34
    """
    with session_store(session, store) as (opened_store, session_id):
        view = opened_store.inspect(session_id)
    if seq >= view.seq:
        fail(
            f"session {session!r} has no event at seq {seq} (it holds seqs 0-{view.seq - 1})",
            code=EXIT_USAGE,
        )
    originals = expand(view, seq)
    if as_json:
        for event in originals:
            typer.echo(_wire_line(event))
        return
    event = view.event_at(seq)
    console = stdout()
    if not originals:
        console.print(f"event {seq} ({event.type}) replaced nothing")
        return
    fold = fold_surface(view.events, view.projections)
    shadowed = {r.seq: r.shadowed_seqs for r in fold.replacements}
    console.print(
        Text(f"Event {seq} ({event.type}) replaced {len(shadowed[seq])} nodes", style="bold")
    )
    console.print(_tree(view, shadowed, seq, console.width))
    console.print(
        Text(f"\nThe {len(originals)} original events:", style="bold"),
    )
    console.print(render_events(originals, console.width))


def _tree(view: Any, shadowed: dict[int, tuple[int, ...]], seq: int, width: int) -> Text:
    """The cited nodes of ``seq``, nested replacements indented under their replacement."""
    out = Text()
    pending = [(node, 1) for node in reversed(shadowed[seq])]
    first = True
    while pending:
        node, depth = pending.pop()
        event = view.event_at(node)
        if not first:
            out.append("\n")
        first = False
        prefix = "  " * depth + ("└ " if depth > 1 else "")
        line = Text(f"{prefix}{node:>4}  {event.type:<18} ")
        if node in shadowed:
            line.append(f"replaced {len(shadowed[node])}: ", style="magenta")
            pending.extend((child, depth + 1) for child in reversed(shadowed[node]))
        line.append(event_summary(event))
        line.truncate(width, overflow="ellipsis")
        out.append_text(line)
    return out


def _wire_line(event: Event) -> str:
    return dumps(event.to_wire()).decode("utf-8", "surrogatepass")
