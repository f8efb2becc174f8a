"""A session log read and written as the OpenAI Agents SDK's list of input items.

Implements, for the ``openai_agents`` adapter, how Responses input items become events that
derive a provider-valid history (spec/core.md §2.4, §5, §10.3, §11):

* each write is one ``Session.batch()``: one durable write, all of it or (after a crash, once
  the repair closers of the reopened session have run) a closed prefix of it;
* consecutive model output (assistant text, reasoning, tool calls, hosted or opaque items) is
  one ``assistant/message`` in a step of its own, each tool call followed by its ``tool/call``;
  an output answering a call becomes a ``tool/result`` citing that ``tool/call``, in the call's
  step, or, when the call was left open by an earlier write (a run paused for approval), in a
  new step after a fresh ``tool/call`` of the same id; an output answering no call on the surface
  becomes a ``user/message`` (the history stays provider-valid);
* user messages are ``user/message`` events; system and developer messages ``system/message``
  and ``developer/message`` events; model output and these open a turn, closed at the batch's
  end, so every write is structurally valid under ``agentlog.install_invariants``;
* every event that holds items keeps them exactly, under ``responseItems`` (for a
  ``user/message`` in the message itself, which is its data);
* removing items (``pop``, ``clear``, a compaction's replacement) appends an empty
  ``system/message`` that replaces the nodes and cites them (``removedBy`` says why): the
  originals stay in the log, shadowed.

Reading walks the surface: a node's ``responseItems``, or for a node agentlog wrote itself (a
compaction checkpoint, a repair closer's result) its derived message as canonical items.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from agentlog.adapters._responses import (
    CALL_OUTPUT_TYPES,
    assistant_message,
    classify,
    message_items,
    model_blocks,
    output_call_id,
    output_text,
    role_message,
    text_blocks,
    tool_message,
)
from agentlog.errors import EventRejected, NotLosslessJson
from agentlog.events import Event
from agentlog.session import Session
from agentlog.values import snapshot, thaw

__all__ = ["ITEMS_KEY", "REMOVED_KEY", "ItemLog", "freeze_items"]

ITEMS_KEY: Final = "responseItems"
"""Where an event keeps the items it stands for, exactly as the SDK gave them."""
REMOVED_KEY: Final = "removedBy"
"""On an empty replacing ``system/message``: what removed the nodes it shadows."""


def freeze_items(session_id: str, items: Iterable[Any]) -> list[Any]:
    """Snapshot every item before anything is written, so a bad one changes nothing.

    Raises:
        EventRejected: naming the item and the JSON path of the value outside lossless JSON.
    """
    frozen = []
    for index, item in enumerate(items):
        try:
            frozen.append(snapshot(item))
        except NotLosslessJson as exc:
            raise EventRejected(
                f"session item {index} is not lossless JSON at {exc.path}: {exc.reason}",
                session_id=session_id,
            ) from exc
    return frozen


class ItemLog:
    """One attached session, read and written as a list of input items; safe across threads.

    Args:
        session: The session (usually attached to a store); only this object writes to it.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.lock = threading.RLock()
        self.next_turn = 1
        self.call_seqs: dict[str, int] = {}
        """The latest ``tool/call`` seq of each call id."""
        for event in session.events:
            if event.type in ("turn/start", "turn/end"):
                self.next_turn = event.data["turn"] + 1
            elif event.type == "tool/call":
                self.call_seqs[event.data["callId"]] = event.seq
        self.open_calls = self._surface_calls()
        self._generation = -1
        self._done = 0
        self._items: list[Any] = []
        self._spans: list[tuple[int, int]] = []
        self._call_types: dict[str, str] = {}

    # --- reading ------------------------------------------------------------------------

    def items(self, limit: int | None) -> list[Any]:
        """The latest ``limit`` items in order (all for ``None`` or a negative limit), thawed."""
        if limit == 0:
            return []
        with self.lock:
            self._refresh()
            window = self._items[-limit:] if limit is not None and limit > 0 else self._items[:]
        return thaw(window)  # type: ignore[no-any-return]  # a list in, a list out

    def item_count(self) -> int:
        """How many items the session holds."""
        with self.lock:
            self._refresh()
            return len(self._items)

    def _refresh(self) -> None:
        """Bring the flat item list up to the surface (only new nodes unless it was rewritten)."""
        surface = self.session.surface
        if surface.content_generation != self._generation:
            self._generation = surface.content_generation
            self._done, self._items, self._spans = 0, [], []
        nodes = surface.nodes
        for seq in nodes[self._done :]:
            items = self._node_items(self.session.event_at(seq))
            if items:
                self._spans.append((seq, len(items)))
                self._items.extend(items)
        self._done = len(nodes)

    def _node_items(self, event: Event) -> Sequence[Any]:
        data = event.data
        items = data.get(ITEMS_KEY)
        if items is not None:
            for item in items:
                if isinstance(item, Mapping) and item.get("type") in CALL_OUTPUT_TYPES:
                    self._call_types[item.get("call_id")] = item["type"]  # type: ignore[index]
            return items  # type: ignore[no-any-return]
        message = self.session.derive_event_message(event)
        if message is None:
            return ()
        converted = message_items(message, strict=False)
        for item in converted:
            if item["type"] == "function_call_output":
                call_type = self._call_types.get(item["call_id"], "function_call")
                item["type"] = CALL_OUTPUT_TYPES[call_type]
        return converted

    def resync(self) -> None:
        """Recompute the open calls after the surface was rewritten (a replace)."""
        self.open_calls = self._surface_calls()

    def _surface_calls(self) -> dict[str, tuple[str, str]]:
        """Tool calls on the surface that no result on the surface answers (id → name, args)."""
        open_calls: dict[str, tuple[str, str]] = {}
        for seq in self.session.surface.nodes:
            event = self.session.event_at(seq)
            if event.type == "assistant/message":
                for block in event.data["message"]["content"]:
                    if block.get("type") == "tool-call":
                        open_calls[block["id"]] = (block["name"], block["arguments"])
            elif event.type == "tool/result":
                open_calls.pop(event.data["message"].get("toolCallId"), None)
        return open_calls

    # --- writing ------------------------------------------------------------------------

    def add(self, items: Sequence[Any]) -> None:
        """Append ``items`` (already frozen) as one batch."""
        with self.lock, self.session.batch():
            batch = _Batch(self)
            for item in items:
                batch.add(item)
            batch.finish()

    def pop(self) -> Any:
        """Shadow the newest item and return it (thawed), or ``None`` when there is none."""
        with self.lock:
            self._refresh()
            if not self._spans:
                return None
            seq, count = self._spans[-1]
            items = self._items[-count:]
            with self.session.batch():
                batch = _Batch(self)
                batch.remove(seq, seq, "pop_item")
                if count > 1:  # the rest of the response comes back, as a new node
                    batch.group.extend(items[:-1])
                    batch.flush(dispatch=False)
                batch.finish()
            self.resync()
        return thaw(items[-1])

    def replace_all(self, items: Sequence[Any], reason: str) -> None:
        """Shadow every node (one cited replace) and append ``items``, as one batch."""
        with self.lock, self.session.batch():
            batch = _Batch(self)
            nodes = self.session.surface.nodes
            if nodes:
                head = 1 if self.session.event_at(nodes[0]).type == "system/message" else 0
                # Node 0 holding a system/message may only be replaced alone (spec/core.md §5.6).
                if head:
                    batch.remove(nodes[0], nodes[0], reason)
                if nodes[head:]:
                    batch.remove(nodes[head], nodes[-1], reason, cited=nodes[head:])
            for item in items:
                batch.add(item)
            batch.finish()
            self.resync()


class _Batch:
    """The events of one write, under the log's lock and inside ``Session.batch()``."""

    def __init__(self, log: ItemLog) -> None:
        self.log = log
        self.session = log.session
        self.turn: int | None = None
        self.step: int | None = None
        self.steps = 0
        self.replied = False
        self.pending: dict[str, int] = {}
        self.group: list[Any] = []

    def _in_step(self, *, fresh: bool = False) -> tuple[int, int]:
        """The open turn and step, opening them; ``fresh`` starts a new step after a reply."""
        session = self.session
        if self.turn is None:
            self.turn = self.log.next_turn
            self.log.next_turn += 1
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

    def add(self, item: Any) -> None:
        kind = classify(item)
        if kind in ("model", "opaque"):
            self.group.append(item)
            return
        self.flush()
        where = "session item"
        if kind == "output":
            self._output(item)
        elif kind == "user":
            message: Any = role_message(
                "user", text_blocks(item.get("content"), where=where, strict=False)
            )
            message[ITEMS_KEY] = [item]
            self.session.append("user/message", message, surface_op="append")
        else:
            turn, step = self._in_step()
            blocks = text_blocks(item.get("content"), where=where, strict=False)
            data = {"turn": turn, "step": step, "message": role_message(kind, blocks)}
            self.session.append(f"{kind}/message", {**data, ITEMS_KEY: [item]}, surface_op="append")

    def flush(self, *, dispatch: bool = True) -> None:
        """Append the pending model output as one assistant message (and its ``tool/call``s)."""
        if not self.group:
            return
        items, self.group = self.group, []
        turn, step = self._in_step(fresh=True)
        blocks = [
            block
            for item in items
            if classify(item) == "model"
            for block in model_blocks(item, where="session item", strict=False)
        ]
        data = {"turn": turn, "step": step, "message": assistant_message(blocks), "stream": []}
        self.session.append("assistant/message", {**data, ITEMS_KEY: items}, surface_op="append")
        self.replied = True
        for block in blocks:
            if block["type"] == "tool-call":
                call_id = block["id"]
                self.log.open_calls[call_id] = (block["name"], block["arguments"])
                if dispatch:
                    self.pending[call_id] = self._dispatch(
                        call_id, block["name"], block["arguments"]
                    )

    def _dispatch(self, call_id: str, name: str, arguments: str) -> int:
        assert self.turn is not None
        assert self.step is not None
        data = {"turn": self.turn, "step": self.step, "callId": call_id}
        event = self.session.append("tool/call", {**data, "name": name, "arguments": arguments})
        self.log.call_seqs[call_id] = event.seq
        return event.seq

    def _output(self, item: Mapping[str, Any]) -> None:
        call_id = output_call_id(item)
        content = output_text(item, where="session item", strict=False)
        if call_id not in self.pending and call_id not in self.log.open_calls:
            # Nothing on the surface to answer: as a tool message it would break the history.
            message: Any = role_message("user", content)
            message["source"] = {"kind": "orphan-tool-output", "callId": call_id}
            message[ITEMS_KEY] = [item]
            self.session.append("user/message", message, surface_op="append")
            return
        turn, step = self._in_step()
        cited = []
        if call_id in self.pending:
            cited.append(self.pending.pop(call_id))
        else:  # left open by an earlier write: dispatched again in this step
            earlier = self.log.call_seqs.get(call_id)
            name, arguments = self.log.open_calls[call_id]
            cited.extend(
                [
                    *([earlier] if earlier is not None else []),
                    self._dispatch(call_id, name, arguments),
                ]
            )
        data = {"turn": turn, "step": step, "message": tool_message(call_id, content)}
        self.session.append(
            "tool/result", {**data, ITEMS_KEY: [item]}, surface_op="append", source_event_seqs=cited
        )
        self.log.open_calls.pop(call_id, None)

    def remove(self, start: int, end: int, reason: str, *, cited: Iterable[int] = ()) -> None:
        """Replace the surface span ``start..end`` with an empty system message citing it."""
        self.flush()
        turn, step = self._in_step()
        message = {
            "id": str(uuid.uuid4()),
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

    def finish(self) -> None:
        """Close what the batch opened."""
        self.flush()
        if self.step is not None:
            self.session.append("step/end", {"turn": self.turn, "step": self.step})
        if self.turn is not None:
            self.session.append("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})
