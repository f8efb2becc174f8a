"""A session log read and written as the OpenAI Agents SDK's list of input items.

Implements, for the ``openai_agents`` adapter, how Responses input items become events that
derive a provider-valid history (spec/core.md §2.4, §5, §10.3, §11), on top of ``_writer``:

* each write is one ``Session.batch()``: one durable write, all of it or (after a crash, once
  the repair closers of the reopened session have run) a closed prefix of it;
* consecutive model output (assistant text, reasoning, tool calls, hosted or unknown items) is
  one ``assistant/message``, as the model produced it, so parallel calls and their outputs pair
  up; outputs, user, system and developer messages are one event each;
* every event that stands for items keeps them exactly, under ``responseItems`` (for a
  ``user/message`` in the message itself, which is its data);
* removing items (``pop``, ``clear``, a compaction's replacement) shadows nodes with cited
  replaces; the originals stay in the log.

Reading walks the surface: a node's ``responseItems``, or for a node agentlog wrote itself (a
compaction checkpoint, a repair closer's result) its derived message as canonical items.
"""

from __future__ import annotations

import threading
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
from agentlog.adapters._writer import Batch, LogState
from agentlog.errors import EventRejected, NotLosslessJson
from agentlog.events import Event
from agentlog.session import Session
from agentlog.values import snapshot, thaw

__all__ = ["ITEMS_KEY", "ItemLog", "freeze_items"]

ITEMS_KEY: Final = "responseItems"
"""Where an event keeps the items it stands for, exactly as the SDK gave them."""
_WHERE: Final = "session item"


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
        self.state = LogState(session)
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
        items = event.data.get(ITEMS_KEY)
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

    # --- writing ------------------------------------------------------------------------

    def add(self, items: Sequence[Any]) -> None:
        """Append ``items`` (already frozen) as one batch."""
        with self.lock, self.session.batch():
            batch = _ItemBatch(self.state)
            for item in items:
                batch.add_item(item)
            batch.flush()
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
                batch = _ItemBatch(self.state)
                batch.remove(seq, seq, "pop_item")
                if count > 1:  # the rest of the response comes back, as a new node
                    batch.group.extend(items[:-1])
                    batch.flush(dispatch=False)
                batch.finish()
            self.state.resync()
        return thaw(items[-1])

    def replace_all(self, items: Sequence[Any], reason: str) -> None:
        """Shadow every node (cited replaces) and append ``items``, as one batch."""
        with self.lock, self.session.batch():
            batch = _ItemBatch(self.state)
            batch.remove_all(reason)
            for item in items:
                batch.add_item(item)
            batch.flush()
            batch.finish()
            self.state.resync()


class _ItemBatch(Batch):
    """A batch that takes items, gathering consecutive model output into one message."""

    def __init__(self, state: LogState) -> None:
        super().__init__(state)
        self.group: list[Any] = []

    def add_item(self, item: Any) -> None:
        kind = classify(item)
        if kind in ("model", "opaque"):
            self.group.append(item)
            return
        self.flush()
        extra = {ITEMS_KEY: [item]}
        if kind == "output":
            content = output_text(item, where=_WHERE, strict=False)
            self.add(tool_message(output_call_id(item), content), extra)
        else:
            content = text_blocks(item.get("content"), where=_WHERE, strict=False)
            self.add(role_message(kind, content), extra)

    def flush(self, *, dispatch: bool = True) -> None:
        """Append the gathered model output as one assistant message."""
        if not self.group:
            return
        items, self.group = self.group, []
        blocks = [
            block
            for item in items
            if classify(item) == "model"
            for block in model_blocks(item, where=_WHERE, strict=False)
        ]
        self.add(assistant_message(blocks), {ITEMS_KEY: items}, dispatch=dispatch)

    def remove(self, start: int, end: int, reason: str, *, cited: Iterable[int] = ()) -> None:
        self.flush()
        super().remove(start, end, reason, cited=cited)
