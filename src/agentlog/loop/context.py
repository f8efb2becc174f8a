"""Runtime-context snapshots: the agent's dynamic context, logged only when it changes.

Implements the runtime-context projection of spec/plugins.md §4.10 and its place in a step
(§4.3: appended after the step's other user messages). Before each step the agent renders its
runtime context (``Agent(runtime_context=...)``: the date, the working directory, open files —
whatever the application tracks); a ``user/message`` snapshot (source ``{kind:
"runtime-context", form: "snapshot"}``, spec/core.md §2.3 [F4]) is appended only when the
text differs from the last retained snapshot. A snapshot a surface replacement shadowed (a
compaction) is forgotten, so the next change — or the next render — emits it again. An empty
context after a snapshot emits ``NO_CONTEXT_TEXT`` once, so the model knows the earlier
snapshot no longer holds.

Cost per step: the render and one comparison; after a surface replacement, one binary search
of the surface for the retained snapshot. An agent with a runtime context looks for the last
snapshot on the surface once, when it is created (a resumed session keeps its snapshot).
"""

from __future__ import annotations

import bisect
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeAlias

from agentlog.events import Event, messages
from agentlog.session import Session
from agentlog.values import JsonValue, snapshot

__all__ = ["NO_CONTEXT_TEXT", "SOURCE", "ContextSnapshots", "RuntimeContext"]

NO_CONTEXT_TEXT = (
    "Current runtime context: none. Earlier runtime-context snapshots no longer apply."
)
"""The snapshot an empty context emits after a non-empty one (spec/plugins.md §4.10)."""

SOURCE: dict[str, JsonValue] = {"kind": "runtime-context", "form": "snapshot"}
"""The source of a snapshot message."""

RuntimeContext: TypeAlias = Callable[[], "str | Awaitable[str | None] | None"]
"""Renders the runtime context (plain or ``async``); ``None`` or ``""`` for none."""


class ContextSnapshots:
    """Decides when a step carries a runtime-context snapshot, and remembers the last one.

    Args:
        render: The application's renderer.
        session: The session the agent drives (its retained snapshot is looked up once).
    """

    def __init__(self, render: RuntimeContext, session: Session) -> None:
        self.render = render
        self._seq: int | None = None
        self._text = ""
        self._generation = session.surface.replace_generation
        nodes = session.surface.nodes
        for seq in reversed(nodes):  # once, at start: the retained snapshot, if any
            event = session.event_at(seq)
            if _is_snapshot(event):
                self._seq, self._text = seq, _text(event)
                break

    async def message(self, session: Session) -> JsonValue | None:
        """The snapshot the next step appends, or ``None`` when the context did not change.

        Raises:
            Exception: whatever the renderer raised.
        """
        rendered = self.render()
        if inspect.isawaitable(rendered):
            rendered = await rendered
        text = rendered or ""
        if not isinstance(text, str):
            raise TypeError(f"a runtime context renders to text, got {type(text).__name__}")
        self._forget_shadowed(session)
        if self._seq is None and not text:
            return None
        if not text:
            text = NO_CONTEXT_TEXT
        if self._seq is not None and text == self._text:
            return None
        return snapshot(messages.user(text, source=SOURCE))

    def committed(self, event: Event) -> None:
        """Retain ``event`` (the snapshot just appended) as the last snapshot."""
        self._seq, self._text = event.seq, _text(event)

    def _forget_shadowed(self, session: Session) -> None:
        surface = session.surface
        if self._seq is None or surface.replace_generation == self._generation:
            return
        self._generation = surface.replace_generation
        nodes = surface.nodes
        at = bisect.bisect_left(nodes, self._seq)
        if at == len(nodes) or nodes[at] != self._seq:
            self._seq, self._text = None, ""


def _is_snapshot(event: Event) -> bool:
    if event.type != "user/message":
        return False
    source = event.data.get("source")
    return isinstance(source, dict) and source.get("kind") == "runtime-context"


def _text(event: Event) -> str:
    return "".join(
        block.get("text", "")
        for block in event.data.get("content") or ()
        if isinstance(block, dict) and block.get("type") == "text"
    )
