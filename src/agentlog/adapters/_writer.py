"""Framework messages appended as structurally valid events: turns, steps, paired tool calls.

Implements, for the framework adapters, the event shapes of spec/core.md §2.4 under the
invariant companion's rules (§11), so that whatever a framework writes derives a
provider-valid history (§6, §10.3):

* ``user`` messages are ``user/message`` events (turn-free); every other message opens a turn
  (and a step), closed when the write finishes, so each write is one closed turn;
* an ``assistant`` message starts a new step once the open one holds a reply, and each of its
  tool calls is dispatched as a ``tool/call``;
* a ``tool`` message becomes a ``tool/result`` citing its ``tool/call`` when the call is
  pending in the step; when an earlier write left the call open on the surface (a run paused
  for approval), the call is dispatched again in this step and the result cites both; when no
  call on the surface is open, the output is kept as a ``user/message`` (kind
  ``orphan-tool-output``), so no tool message ever answers nothing;
* ``remove`` replaces a surface span with an empty ``system/message`` citing every node it
  shadows (spec/core.md §5.3; §5.6 keeps a system head to a replace of its own).

``LogState`` is what a writer must know of the log so far: the next turn number, the latest
``tool/call`` seq of each call id, and the calls open on the surface.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from agentlog.events.messages import new_id
from agentlog.session import Session

__all__ = ["REMOVED_KEY", "Batch", "LogState"]

REMOVED_KEY: Final = "removedBy"
"""On an empty replacing ``system/message``: what removed the nodes it shadows."""


class LogState:
    """What writing to ``session`` needs to know of its log (one scan, then kept up to date)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.next_turn = 1
        self.call_seqs: dict[str, int] = {}
        """The latest ``tool/call`` seq of each call id."""
        for event in session.events:
            if event.type in ("turn/start", "turn/end"):
                self.next_turn = event.data["turn"] + 1
            elif event.type == "tool/call":
                self.call_seqs[event.data["callId"]] = event.seq
        self.open_calls: dict[str, tuple[str, str]] = {}
        """Tool calls on the surface no result on the surface answers: id → (name, arguments)."""
        self.resync()

    def resync(self) -> None:
        """Recompute the open calls (after a replace rewrote the surface)."""
        open_calls: dict[str, tuple[str, str]] = {}
        for seq in self.session.surface.nodes:
            event = self.session.event_at(seq)
            if event.type == "assistant/message":
                for block in event.data["message"]["content"]:
                    if block.get("type") == "tool-call":
                        open_calls[block["id"]] = (block["name"], block["arguments"])
            elif event.type == "tool/result":
                open_calls.pop(event.data["message"].get("toolCallId"), None)
        self.open_calls = open_calls


class Batch:
    """The events of one write (the caller holds ``Session.batch()`` around it)."""

    def __init__(self, state: LogState) -> None:
        self.state = state
        self.session = state.session
        self.turn: int | None = None
        self.step: int | None = None
        self.steps = 0
        self.replied = False
        self.pending: dict[str, int] = {}

    def in_step(self, *, fresh: bool = False) -> tuple[int, int]:
        """The open turn and step, opening them; ``fresh`` starts a new step after a reply."""
        session = self.session
        if self.turn is None:
            self.turn = self.state.next_turn
            self.state.next_turn += 1
            session.append("turn/start", {"turn": self.turn})
        if self.step is not None and fresh and self.replied:
            session.append("step/end", {"turn": self.turn, "step": self.step})
            self.step = None
        if self.step is None:
            self.steps += 1
            self.step = self.steps
            self.replied = False
            self.pending = {}
            session.append("step/start", {"turn": self.turn, "step": self.step})
        return self.turn, self.step

    def add(
        self, message: dict[str, Any], extra: Mapping[str, Any], *, dispatch: bool = True
    ) -> None:
        """Append ``message`` (a fresh dict) with ``extra`` data keys, as its role asks.

        Args:
            message: An agentlog message of role user, system, developer, assistant or tool.
            extra: Keys added to the event data (for ``user/message``, to the message).
            dispatch: For an assistant message, log a ``tool/call`` for each tool call.
        """
        role = message["role"]
        if role == "user":
            self.session.append("user/message", {**message, **extra}, surface_op="append")
        elif role == "tool":
            self._result(message, extra)
        elif role == "assistant":
            turn, step = self.in_step(fresh=True)
            data = {"turn": turn, "step": step, "message": message, "stream": [], **extra}
            self.session.append("assistant/message", data, surface_op="append")
            self.replied = True
            for block in message["content"]:
                if block.get("type") == "tool-call":
                    call_id, name, arguments = block["id"], block["name"], block["arguments"]
                    self.state.open_calls[call_id] = (name, arguments)
                    if dispatch:
                        self.pending[call_id] = self._dispatch(call_id, name, arguments)
        else:
            turn, step = self.in_step()
            data = {"turn": turn, "step": step, "message": message, **extra}
            self.session.append(f"{role}/message", data, surface_op="append")

    def _dispatch(self, call_id: str, name: str, arguments: str) -> int:
        data = {"turn": self.turn, "step": self.step, "callId": call_id}
        event = self.session.append("tool/call", {**data, "name": name, "arguments": arguments})
        self.state.call_seqs[call_id] = event.seq
        return event.seq

    def _result(self, message: dict[str, Any], extra: Mapping[str, Any]) -> None:
        call_id = message["toolCallId"]
        if call_id not in self.pending and call_id not in self.state.open_calls:
            # Nothing on the surface to answer: as a tool message it would break the history.
            user = {key: value for key, value in message.items() if key != "toolCallId"}
            user["role"] = "user"
            user["source"] = {"kind": "orphan-tool-output", "callId": call_id}
            self.session.append("user/message", {**user, **extra}, surface_op="append")
            return
        turn, step = self.in_step()
        if call_id in self.pending:
            cited = [self.pending.pop(call_id)]
        else:  # left open by an earlier write: dispatched again in this step
            earlier = self.state.call_seqs.get(call_id)
            name, arguments = self.state.open_calls[call_id]
            again = self._dispatch(call_id, name, arguments)
            cited = [again] if earlier is None else [earlier, again]
        data = {"turn": turn, "step": step, "message": message, **extra}
        self.session.append("tool/result", data, surface_op="append", source_event_seqs=cited)
        self.state.open_calls.pop(call_id, None)

    def remove(self, start: int, end: int, reason: str, *, cited: Iterable[int] = ()) -> None:
        """Replace the surface span ``start..end`` with an empty system message citing it."""
        turn, step = self.in_step()
        message = {
            "id": new_id(),
            "role": "system",
            "content": [],
            "source": {"kind": "system-prompt"},
        }
        self.session.append(
            "system/message",
            {"turn": turn, "step": step, "message": message, REMOVED_KEY: reason},
            surface_op={"op": "replace", "startSeq": start, "endSeq": end},
            source_event_seqs=list(cited) or [start],
        )

    def remove_all(self, reason: str, nodes: tuple[int, ...] | None = None) -> None:
        """Shadow the whole surface (or its tail ``nodes``) with cited replaces."""
        surface = self.session.surface.nodes
        nodes = surface if nodes is None else nodes
        if not nodes:
            return
        if nodes[0] == surface[0] and self.session.event_at(nodes[0]).type == "system/message":
            # Node 0 holding a system/message may only be replaced alone (spec/core.md §5.6).
            self.remove(nodes[0], nodes[0], reason)
            nodes = nodes[1:]
        if nodes:
            self.remove(nodes[0], nodes[-1], reason, cited=nodes)

    def finish(self) -> None:
        """Close what the write opened."""
        if self.step is not None:
            self.session.append("step/end", {"turn": self.turn, "step": self.step})
        if self.turn is not None:
            self.session.append("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})
