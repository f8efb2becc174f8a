"""Terminal renderings: the log beside its surface, the derived messages, event lists.

Tables are laid out here rather than by ``rich.table`` so that thousands of rows render in a
blink and the columns that matter (``seq``, ``type``, ``role``) keep their width at 80
columns while the content column takes what is left. The result is one ``rich.text.Text``:
styled on a terminal, plain text when printed to a file or with ``NO_COLOR``.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich.text import Text

from agentlog import Event, fold_surface
from agentlog.stores import Inspection

__all__ = [
    "Column",
    "event_summary",
    "grid",
    "message_text",
    "render_events",
    "render_log",
    "render_messages",
    "render_session",
    "render_surface",
    "shown_id",
]

_GAP = "  "
_MIN_FLEXIBLE = 16


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Column:
    """A column of a grid: its header, alignment and widest width (``None``: its content's).

    The last column takes the room the others leave.
    """

    header: str
    justify: Literal["left", "right"] = "left"
    max_width: int | None = None


def grid(
    columns: Sequence[Column], rows: Sequence[Sequence[Text]], width: int, *, styled: bool = True
) -> Text:
    """Lay ``rows`` out in ``columns`` within ``width`` characters; cells are cut with "…".

    ``styled=False`` drops the styles: much faster for long output to a file or a pipe.
    """
    widths = []
    for index, column in enumerate(columns):
        natural = max([len(column.header), *(len(row[index]) for row in rows)])
        widths.append(natural if column.max_width is None else min(natural, column.max_width))
    room = width - sum(widths[:-1]) - len(_GAP) * (len(columns) - 1)
    widths[-1] = min(widths[-1], max(_MIN_FLEXIBLE, room))
    header = [Text(c.header, style="bold") for c in columns]
    if not styled:
        return Text("\n".join(_plain_line(cells, columns, widths) for cells in [header, *rows]))
    out = Text()
    for line_number, cells in enumerate([header, *rows]):
        if line_number:
            out.append("\n")
        last = len(cells) - 1
        for index, (cell, column) in enumerate(zip(cells, columns, strict=True)):
            piece = cell.copy()
            piece.truncate(widths[index], overflow="ellipsis")
            pad = widths[index] - len(piece)
            if column.justify == "right":
                out.append(" " * pad)
                out.append_text(piece)
            else:
                out.append_text(piece)
                if index != last:
                    out.append(" " * pad)
            if index != last:
                out.append(_GAP)
    return out


def _plain_line(cells: Sequence[Text], columns: Sequence[Column], widths: list[int]) -> str:
    """One row without styles: the fast path for output that is not a terminal."""
    parts = []
    last = len(cells) - 1
    for index, (cell, column) in enumerate(zip(cells, columns, strict=True)):
        text, width = cell.plain, widths[index]
        if len(text) > width:
            text = text[: width - 1] + "…"
        if column.justify == "right":
            text = text.rjust(width)
        elif index != last:
            text = text.ljust(width)
        parts.append(text)
    return _GAP.join(parts)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def message_text(message: Mapping[str, Any]) -> str:
    """A message's content on one line: text, tool calls as ``→ name(args)``, other blocks."""
    parts = []
    for block in message.get("content") or ():
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind in ("text", "reasoning"):
            parts.append(block.get("text", ""))
        elif kind == "tool-call":
            parts.append(f"→ {block.get('name')}({block.get('arguments')})")
        elif kind == "tool-result":
            parts.append(message_text(block))
        elif kind in ("tool-addition", "tool-removal"):
            parts.append(f"{kind} {block.get('toolName')}")
        else:
            parts.append(f"[{kind}]")
    return _one_line(" ".join(parts))


def event_summary(event: Mapping[str, Any]) -> str:
    """What an event says, on one line."""
    data = event["data"]
    event_type = event["type"]
    if not isinstance(data, Mapping):
        return ""
    if event_type == "user/message":
        return message_text(data)
    if isinstance(data.get("message"), Mapping):
        text = message_text(data["message"])
        return f"error: {text}" if data["message"].get("isError") is True else text
    if event_type in ("turn/start", "turn/end", "step/start", "step/end"):
        label = f"turn {data.get('turn')}" + (f" step {data['step']}" if "step" in data else "")
        reason = data.get("reason")
        return label + (f" ({reason.get('kind')})" if isinstance(reason, Mapping) else "")
    if event_type == "tool/call":
        return (
            f"{data.get('name')}({_one_line(str(data.get('arguments', '')))}) {data.get('callId')}"
        )
    if event_type == "request/header" and isinstance(data.get("header"), Mapping):
        tools = [t.get("name") for t in data["header"].get("tools") or () if isinstance(t, Mapping)]
        return f"{data.get('reason')}: {', '.join(map(str, tools)) or 'no tools'}"
    if "compactionId" in data:
        return f"compaction {data['compactionId']}"
    if event_type == "session/end-seed":
        return "inherited prefix ends here" if data.get("inherited") else "resumed here"
    return ""


def _seq_cell(seq: int, stored: bool) -> Text:
    return Text(str(seq)) if stored else Text(f"{seq}*", style="italic")


def render_log(
    inspection: Inspection, events: Sequence[Event], width: int, *, styled: bool = True
) -> Text:
    """The log, one row per event: its surface op, whether it is visible, and what it says."""
    session = inspection.session
    fold = fold_surface(session.events, session.projections)
    shadowed_by = {seq: r.seq for r in fold.replacements for seq in r.shadowed_seqs}
    visible = set(session.surface.nodes)
    rows = []
    for event in events:
        stored = event.seq < inspection.stored_events
        op = event.surface_op
        if op is None:
            surface = Text("log-only", style="dim")
        elif op == "append":
            surface = Text("append")
        else:
            surface = Text(f"replace {op['startSeq']}-{op['endSeq']}", style="magenta")
        if event.seq in visible:
            surface.append(" ●", style="green")
        elif event.seq in shadowed_by:
            surface.append(f" ○{shadowed_by[event.seq]}", style="yellow")
        summary = Text(event_summary(event))
        if isinstance(op, Mapping):
            summary = Text(f"cites {_seqs(event.source_event_seqs or ())}: ", style="magenta")
            summary.append(event_summary(event), style="default")
        rows.append(
            [
                _seq_cell(event.seq, stored),
                Text(event.type, style="dim" if op is None else "bold"),
                surface,
                summary,
            ]
        )
    columns = [
        Column(header="seq", justify="right"),
        Column(header="type", max_width=20),
        Column(header="surface", max_width=16),
        Column(header="content"),
    ]
    return grid(columns, rows, width, styled=styled)


def _seqs(seqs: Sequence[int], limit: int = 6) -> str:
    shown = " ".join(map(str, seqs[:limit]))
    return shown + (f" … ({len(seqs)})" if len(seqs) > limit else "")


def render_surface(
    inspection: Inspection, session_ref: str, width: int, *, styled: bool = True
) -> Text:
    """The surface: the visible nodes in order, and what each replacement stands for."""
    session = inspection.session
    fold = fold_surface(session.events, session.projections)
    replaced = {r.seq: r for r in fold.replacements}
    rows = []
    for position, seq in enumerate(session.surface.nodes):
        record = replaced.get(seq)
        note = Text()
        if record is not None:
            note.append(f"replaced {len(record.shadowed_seqs)}: {_seqs(record.shadowed_seqs)}")
            note.append(f"  (agentlog expand {session_ref} {seq})", style="dim")
        rows.append([Text(str(position)), Text(str(seq)), Text(session.event_at(seq).type), note])
    columns = [
        Column(header="#", justify="right"),
        Column(header="node", justify="right"),
        Column(header="type", max_width=20),
        Column(header="replaces (nodes it shadowed)"),
    ]
    return grid(columns, rows, width, styled=styled)


def render_messages(messages: Sequence[Any], width: int, *, styled: bool = True) -> Text:
    """The history the model sees (``derive_messages()``), one row per message."""
    rows = [
        [
            Text(str(message.get("role")), style="bold"),
            Text(str(message.get("id"))),
            Text(message_text(message)),
        ]
        for message in messages
    ]
    columns = [
        Column(header="role", max_width=9),
        Column(header="id", max_width=14),
        Column(header="content"),
    ]
    return grid(columns, rows, width, styled=styled)


def render_events(events: Sequence[Event], width: int) -> Text:
    """Events of a log, one row each: seq, type and what they say."""
    rows = [[Text(str(e.seq)), Text(e.type), Text(event_summary(e))] for e in events]
    return grid(
        [
            Column(header="seq", justify="right"),
            Column(header="type", max_width=22),
            Column(header="content"),
        ],
        rows,
        width,
    )


def _time(ms: Any) -> str:
    if type(ms) is not int:
        return "?"
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def render_session(
    inspection: Inspection,
    events: Sequence[Event],
    session_ref: str,
    width: int,
    *,
    styled: bool = True,
) -> Text:
    """The session header, its log (``events`` of it), its surface and its messages."""
    session = inspection.session
    header = session.header
    virtual = len(inspection.virtual_seqs)
    out = Text()
    out.append(f"Session {shown_id(session.id)}", style="bold")
    out.append(f"\nformat v{inspection.stored_version} · created {_time(header.get('createdAt'))}")
    if header.get("parentSession"):
        out.append(f" · fork of {header['parentSession']}")
    if header.get("cwd"):
        out.append(f"\ncwd {header['cwd']}")
    out.append(f"\n{inspection.stored_events} events stored")
    if virtual:
        out.append(f" (+{virtual} in this view only)", style="italic")
    out.append(
        f" · {len(session.surface.nodes)} on the surface · "
        f"{len(session.derive_messages())} messages for the model"
    )
    if inspection.location:
        out.append(f"\nstored in {inspection.location}", style="dim")
    shown = "" if len(events) == session.seq else f" (events {_range(events)})"
    out.append(f"\n\nLog{shown}\n", style="bold")
    out.append_text(render_log(inspection, events, width, styled=styled))
    legend = "\n● on the surface   ○N shadowed by event N (still in the log)"
    if virtual:
        legend += (
            "\n* not stored: added by this read-only view (closers of a turn a crash left"
            "\n  open, and the session/end-seed marker that resuming appends)"
        )
    out.append(legend, style="dim")
    out.append(f"\n\nSurface ({len(session.surface.nodes)} nodes)\n", style="bold")
    out.append_text(render_surface(inspection, session_ref, width, styled=styled))
    messages = session.derive_messages()
    out.append(f"\n\nMessages the model sees ({len(messages)})\n", style="bold")
    out.append_text(render_messages(messages, width, styled=styled))
    return out


def _range(events: Sequence[Event]) -> str:
    if not events:
        return "none"
    return f"{events[0].seq}-{events[-1].seq}"
