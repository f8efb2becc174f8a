"""The agent's system prompt on the surface: node 0, replaced in place or updated in history.

Implements the loop's system-prompt policy of spec/plugins.md §4.11 and spec/core.md §5.6: the
first prompt (even empty) is appended as node 0 before the step's first user message. A changed
prompt then either

* **replaces** node 0 (the default): a single-node ``system/message`` replacement citing it,
  after emptying the prompts appended in history earlier (each by an empty ``system/message``
  over exactly that node); or
* with ``in_history`` (``Agent(system_prompt_update="in-history")``, for routes that read
  system messages anywhere in the history, logged as ``request/context.systemPromptUpdate``)
  is **appended** as a new ``system/message``, so the history before it — and a provider's
  prompt cache over it — stays as it was. An empty prompt, or a prompt change at the start of
  a new request series (after a compaction, say), takes the replacing path even then.

Node 0 is looked up again only after a surface replacement (appends never move it), so keeping
the prompt costs O(1) per step; the surface is searched for prompts appended in history once,
when the agent first settles its prompt (a resumed session keeps them).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

from agentlog.events import Event, messages
from agentlog.loop.runtime import Runtime
from agentlog.session import Session

__all__ = ["SystemPrompt", "message_text"]


class SystemPrompt:
    """The agent's system prompt and the surface nodes that hold it (see the module docstring).

    Args:
        text: The prompt; ``None`` keeps whatever the session has (none for a new session).
        in_history: Append a changed prompt instead of replacing node 0.
    """

    def __init__(self, text: str | None, *, in_history: bool = False) -> None:
        self.text = text
        self.in_history = in_history
        self._node: Event | None = None
        self._later: list[Event] = []
        """Prompts appended in history after the head, oldest first (active ones only)."""
        self._generation: int | None = None
        self._searched = False

    def settle(self, rt: Runtime, turn: int, step: int, *, new_series: bool = False) -> None:
        """Append or update the prompt if the surface does not hold it.

        Args:
            rt: The agent's runtime.
            turn: The open turn.
            step: The open step.
            new_series: Whether the step's request begins a new series (then a changed prompt
                is rewritten in place even in history mode).
        """
        session = rt.session
        if not self._searched:
            self._searched = True
            self._later = _later_prompts(session)
        if self._generation != session.surface.replace_generation:
            self._node = self._find(session)
            self._later = [event for event in self._later if _on_surface(session, event.seq)]
        current = self._later[-1] if self._later else self._node
        text = self.text
        if current is None:
            if self._generation is not None and not text:
                return  # a history without a system head, and no prompt to add
            self._node = rt.append(
                "system/message",
                messages.system(text or "", turn=turn, step=step),
                surface_op="append",
            )
        elif text is not None and message_text(current.data["message"]) != text:
            if self.in_history and text and not new_series:
                appended = rt.append(
                    "system/message", messages.system(text, turn=turn, step=step),
                    surface_op="append",
                )  # fmt: skip
                self._later.append(appended)
            else:
                for later in self._later:
                    _rewrite(rt, later, "", turn, step)
                self._later = []
                head = self._node
                if head is None:  # a history without a system head: the prompt goes last
                    if text:
                        self._node = rt.append(
                            "system/message", messages.system(text, turn=turn, step=step),
                            surface_op="append",
                        )  # fmt: skip
                elif message_text(head.data["message"]) != text:
                    self._node = _rewrite(rt, head, text, turn, step)
        self._generation = session.surface.replace_generation

    def _find(self, session: Session) -> Event | None:
        """The system node on the surface: node 0, else an in-history prompt of ours.

        Leaves ``_generation`` ``None`` for an empty surface (the prompt becomes node 0).
        """
        nodes = session.surface.nodes
        self._generation = session.surface.replace_generation if nodes else None
        head = session.event_at(nodes[0]) if nodes else None
        if head is not None and head.type == "system/message":
            return head
        ours = self._node
        return ours if ours is not None and _on_surface(session, ours.seq) else None


def _rewrite(rt: Runtime, node: Event, text: str, turn: int, step: int) -> Event:
    """Replace exactly ``node`` by a system message holding ``text`` (citing the node)."""
    return rt.append(
        "system/message",
        messages.system(text, turn=turn, step=step),
        surface_op={"op": "replace", "startSeq": node.seq, "endSeq": node.seq},
        source_event_seqs=[node.seq],
    )


def _later_prompts(session: Session) -> list[Event]:
    """The non-empty prompts on the surface after node 0 (a session updated in history)."""
    found = []
    for seq in session.surface.nodes[1:]:
        event = session.event_at(seq)
        if event.type == "system/message" and message_text(event.data["message"]):
            source = event.data["message"].get("source")
            if isinstance(source, Mapping) and source.get("kind") == "system-prompt":
                found.append(event)
    return found


def _on_surface(session: Session, seq: int) -> bool:
    nodes = session.surface.nodes
    at = bisect.bisect_left(nodes, seq)
    return at < len(nodes) and nodes[at] == seq


def message_text(message: Mapping[str, Any]) -> str:
    """The text blocks of a message, joined."""
    return "".join(
        block["text"]
        for block in message.get("content") or ()
        if isinstance(block, Mapping) and block.get("type") == "text"
    )
