"""Rich renderings of a session for the terminal: the log beside the surface, and messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentlog import Event, Session, fold_surface

__all__ = [
    "render_events",
    "render_log",
    "render_messages",
    "render_session",
    "render_surface",
    "shown_id",
]


def shown_id(session_id: str) -> str:
    """A session id for terminal output: as it is when that is safe, else ``!r``-escaped.

    An id with a control character, a space or a quote, or one that looks empty, is shown
    quoted and escaped, so no id can break a line or a column, or pass for another one.
    """
    plain = (
        session_id.isprintable()
        and not any(character.isspace() or character in "'\"\\" for character in session_id)
        and session_id != ""
    )
    return session_id if plain else repr(session_id)


def _snippet(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _message_text(message: Mapping[str, Any]) -> str:
    parts = []
    for block in message.get("content") or ():
        kind = block.get("type")
        if kind in ("text", "reasoning"):
            parts.append(block.get("text", ""))
        elif kind == "tool-call":
            parts.append(f"→ {block.get('name')}({block.get('arguments')})")
        elif kind in ("tool-addition", "tool-removal"):
            parts.append(f"{kind} {block.get('toolName')}")
        else:
            parts.append(f"[{kind}]")
    return " ".join(parts)


def _event_summary(event: Mapping[str, Any]) -> str:
    data = event["data"]
    event_type = event["type"]
    if event_type == "user/message":
        return _message_text(data)
    if isinstance(data, Mapping) and isinstance(data.get("message"), Mapping):
        return _message_text(data["message"])
    if event_type in ("turn/start", "turn/end", "step/start", "step/end") and isinstance(
        data, Mapping
    ):
        reason = data.get("reason", {}).get("kind") if event_type == "turn/end" else None
        label = f"turn {data.get('turn')}" + (f" step {data.get('step')}" if "step" in data else "")
        return label + (f" ({reason})" if reason else "")
    if event_type == "tool/call":
        return f"{data.get('name')} {data.get('callId')}"
    if event_type == "request/header":
        tools = [t.get("name") for t in data["header"].get("tools", ())]
        return f"{data.get('reason')}: {', '.join(tools) or 'no tools'}"
    if isinstance(data, Mapping) and "compactionId" in data:
        return f"compaction {data['compactionId']}"
    return ""


def render_log(session: Session, width: int = 120) -> Table:
    """The log, one row per event: its surface op, what it cites, and whether it is visible.

    ``width`` is the room the table may take; the content column is cut to fit it.
    """
    fold = fold_surface(session.events, session.projections)
    shadowed_by = {seq: r.seq for r in fold.replacements for seq in r.shadowed_seqs}
    visible = set(session.surface.nodes)
    table = Table(
        title=f"Log of {session.id!r} ({session.seq} events)",
        caption="● on the surface   ○N shadowed by event N (still in the log)",
        expand=False,
    )
    table.add_column("seq", justify="right", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("surface", no_wrap=True)
    table.add_column("cites", no_wrap=True, overflow="ellipsis", max_width=14)
    table.add_column("content", no_wrap=True, overflow="ellipsis", max_width=max(12, width - 62))
    for event in session.events:
        op = event.surface_op
        if op is None:
            surface = Text("log-only", style="dim")
        elif op == "append":
            surface = Text("append")
        else:
            surface = Text(f"replace {op['startSeq']}-{op['endSeq']}", style="bold magenta")
        if event.seq in visible:
            surface.append(" ●", style="green")
        elif event.seq in shadowed_by:
            surface.append(f" ○{shadowed_by[event.seq]}", style="yellow")
        cites = event.source_event_seqs
        table.add_row(
            str(event.seq),
            Text(event.type),
            surface,
            ", ".join(map(str, cites)) if cites else "",
            Text(_snippet(_event_summary(event))),
            style=None if event.seq in visible else "dim",
        )
    return table


def render_events(events: Sequence[Event], title: str, width: int = 120) -> Table:
    """Some events of a log, one row each: seq, type and what they say."""
    table = Table(title=title, expand=False)
    table.add_column("seq", justify="right", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("content", no_wrap=True, overflow="ellipsis", max_width=max(12, width - 30))
    for event in events:
        table.add_row(str(event.seq), Text(event.type), Text(_snippet(_event_summary(event), 90)))
    return table


def render_surface(session: Session) -> Table:
    """The surface: the visible nodes in order, and what each one replaced."""
    fold = fold_surface(session.events, session.projections)
    replaced = {r.seq: r for r in fold.replacements}
    table = Table(title=f"Surface ({len(session.surface.nodes)} nodes)", expand=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("node", no_wrap=True)
    table.add_column("replaces (cited)", no_wrap=True)
    for position, seq in enumerate(session.surface.nodes):
        record = replaced.get(seq)
        table.add_row(
            str(position),
            Text(f"{seq} {session.event_at(seq).type}"),
            ", ".join(map(str, record.shadowed_seqs)) if record else "",
        )
    return table


def render_messages(session: Session, width: int = 120) -> Table:
    """The history the model sees: ``derive_messages()``."""
    table = Table(title="Derived messages (what the model sees)", expand=False)
    table.add_column("role", no_wrap=True)
    table.add_column("id", no_wrap=True)
    table.add_column("content", no_wrap=True, overflow="ellipsis", max_width=max(12, width - 30))
    for message in session.derive_messages():
        table.add_row(
            message["role"], Text(message["id"]), Text(_snippet(_message_text(message), 90))
        )
    return table


def render_session(session: Session, width: int) -> RenderableType:
    """The log beside the surface (stacked on narrow terminals), then the derived messages."""
    surface = render_surface(session)
    messages = render_messages(session, width)
    if width >= 160:
        side_by_side = Table.grid(padding=(0, 2))
        side_by_side.add_row(render_log(session, width - 60), surface)
        return Group(side_by_side, Text(), messages)
    return Group(render_log(session, width), Text(), surface, Text(), messages)
