"""``session_stats``: what a session holds and what its surface costs, in one pass.

Counts events by type, turns, steps and tool calls; prices the history the model sees with the
heuristic token estimator of spec/plugins.md §7 (``agentlog.plugins.tokens``), beside what it
would cost had nothing been replaced — the difference is what compaction and pruning save;
sums the token usage the provider reported; and measures the log's JSON bytes.

Example:
    >>> from agentlog import Session, messages as m
    >>> s = Session.create("s")
    >>> _ = s.append("user/message", m.user("hello there", id="u1"), surface_op="append")
    >>> session_stats(s).estimated_tokens
    11
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentlog.plugins.tokens import estimate_header, estimate_message
from agentlog.session import Session
from agentlog.surface import derive_event_message, fold_surface
from agentlog.values import dumps

__all__ = ["SessionStats", "session_stats"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStats:
    """Figures of one session (see ``session_stats``)."""

    events: int
    """Events counted: the stored ones."""
    by_type: Mapping[str, int]
    """Events per type, most frequent first."""
    turns: int
    """``turn/start`` events."""
    steps: int
    """``step/start`` events."""
    tool_calls: int
    """``tool/call`` events."""
    tool_errors: int
    """Tool results marked ``isError``."""
    surface_nodes: int
    """Nodes on the surface now."""
    messages: int
    """Messages the model sees now (``derive_messages()``)."""
    replacements: int
    """Replace events (compaction summaries, pruned results, ...)."""
    shadowed: int
    """Events a replacement removed from the surface (still in the log)."""
    estimated_tokens: int
    """Estimated tokens of what the model sees now: messages and tool schemas."""
    estimated_tokens_unreplaced: int
    """Estimated tokens of the same history had nothing been replaced."""
    json_bytes: int
    """Bytes of the counted events as compact JSON (the wire form)."""
    usage: Mapping[str, int] = field(default_factory=dict)
    """Token usage the provider reported on assistant messages, summed per key."""

    @property
    def estimated_savings(self) -> int:
        """Estimated tokens that replacements keep out of every request."""
        return self.estimated_tokens_unreplaced - self.estimated_tokens

    def to_json(self) -> dict[str, Any]:
        """The figures as a JSON object (camelCase keys, as the wire form)."""
        return {
            "events": self.events,
            "byType": dict(self.by_type),
            "turns": self.turns,
            "steps": self.steps,
            "toolCalls": self.tool_calls,
            "toolErrors": self.tool_errors,
            "surfaceNodes": self.surface_nodes,
            "messages": self.messages,
            "replacements": self.replacements,
            "shadowed": self.shadowed,
            "estimatedTokens": self.estimated_tokens,
            "estimatedTokensUnreplaced": self.estimated_tokens_unreplaced,
            "estimatedSavings": self.estimated_savings,
            "jsonBytes": self.json_bytes,
            "usage": dict(self.usage),
        }


def session_stats(session: Session, *, stored_events: int | None = None) -> SessionStats:
    """Count and price ``session``.

    Args:
        session: Any session (a read-only view from ``Store.inspect`` is typical).
        stored_events: Count only the first N events as the log's (a read-only view ends with
            events that exist in the view only); the surface figures are the view's.
    """
    events = session.events[: session.seq if stored_events is None else stored_events]
    by_type = Counter(event.type for event in events)
    tool_errors = 0
    usage: Counter[str] = Counter()
    unreplaced = 0
    size = 0
    for event in events:
        size += len(dumps(event.to_wire()))
        if event.type == "tool/result" and event.data["message"].get("isError") is True:
            tool_errors += 1
        if event.type == "assistant/message":
            for key, value in (event.data.get("usage") or {}).items():
                if type(value) is int:
                    usage[key] += value
        if event.surface_op == "append":
            message = derive_event_message(event)
            if message is not None:
                unreplaced += estimate_message(message)
    messages = session.derive_messages()
    header_tokens = estimate_header(session.request_header())
    fold = fold_surface(session.events, session.projections)
    return SessionStats(
        events=len(events),
        by_type=dict(by_type.most_common()),
        turns=by_type["turn/start"],
        steps=by_type["step/start"],
        tool_calls=by_type["tool/call"],
        tool_errors=tool_errors,
        surface_nodes=len(session.surface.nodes),
        messages=len(messages),
        replacements=len(fold.replacements),
        shadowed=sum(len(record.shadowed_seqs) for record in fold.replacements),
        estimated_tokens=sum(estimate_message(m) for m in messages) + header_tokens,
        estimated_tokens_unreplaced=unreplaced + header_tokens,
        json_bytes=size,
        usage=dict(usage),
    )
