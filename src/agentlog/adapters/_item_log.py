"""A session log read and written as the OpenAI Agents SDK's list of input items.

Implements, for the ``openai_agents`` adapter, how Responses input items become events that
derive a provider-valid history (spec/core.md §2.4, §5, §10.3, §11), on top of ``_writer``:

* each write is one ``Session.batch()``: one durable write, all of it or (after a crash, once
  the repair closers of the reopened session have run) a closed prefix of it;
* consecutive model output (assistant text, reasoning, tool calls, hosted or unknown items) is
  one ``assistant/message``, as the model produced it, so parallel calls and their outputs pair
  up; outputs, user, system and developer messages are one event each;
* every event that stands for items keeps them exactly, under ``responseItems`` (for a
  ``user/message`` in the message itself, which is its data); a long string an item shares
  with the message (a prompt, an output, a reply) is kept once, in the message: the item holds
  ``null`` there and ``elidedText`` lists ``[item, block, *path]`` to put it back from;
* removing items (``pop``, ``clear``, a compaction's replacement) shadows nodes with cited
  replaces; the originals stay in the log.

Reading walks the surface: a node's ``responseItems``, or for a node agentlog wrote itself (a
compaction checkpoint, a repair closer's result) its derived message as canonical items.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
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
from agentlog.session import Session
from agentlog.values import snapshot, thaw

__all__ = [
    "ELIDED_KEY",
    "ITEMS_KEY",
    "MIN_ELIDED",
    "ItemLog",
    "freeze_items",
    "node_items",
    "restore_elided",
]

ITEMS_KEY: Final = "responseItems"
"""Where an event keeps the items it stands for, exactly as the SDK gave them."""
ELIDED_KEY: Final = "elidedText"
"""Strings of the items kept only in the message: ``[[item, block, *path], ...]``."""
MIN_ELIDED: Final = 64
"""Shorter strings are kept in both places (eliding them saves less than it costs)."""
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
            event = self.session.event_at(seq)
            items = node_items(event, self.session.derive_event_message, self._call_types)
            if items:
                self._spans.append((seq, len(items)))
                self._items.extend(items)
        self._done = len(nodes)

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
        if kind == "output":
            content = output_text(item, where=_WHERE, strict=False)
            message = tool_message(output_call_id(item), content)
        else:
            content = text_blocks(item.get("content"), where=_WHERE, strict=False)
            message = role_message(kind, content)
        self.add(message, _kept([item], [content]))

    def flush(self, *, dispatch: bool = True) -> None:
        """Append the gathered model output as one assistant message."""
        if not self.group:
            return
        items, self.group = self.group, []
        per_item = [
            model_blocks(item, where=_WHERE, strict=False) if classify(item) == "model" else []
            for item in items
        ]
        blocks = [block for item_blocks in per_item for block in item_blocks]
        self.add(assistant_message(blocks), _kept(items, per_item), dispatch=dispatch)

    def remove(self, start: int, end: int, reason: str, *, cited: Iterable[int] = ()) -> None:
        self.flush()
        super().remove(start, end, reason, cited=cited)


def node_items(
    event: Mapping[str, Any],
    message_of: Callable[[Mapping[str, Any]], Any],
    call_types: dict[Any, str],
    *,
    owned: bool = False,
) -> Sequence[Any]:
    """The items one surface node stands for.

    A node's ``responseItems`` with its elided strings put back from ``message_of(event)`` (its
    derived message), or for a node agentlog wrote itself (a compaction checkpoint, a repair
    closer's result) that message's canonical items, each output typed as its call was.

    Args:
        event: The node's event.
        message_of: The message an event derives (with the session's projections).
        call_types: Call id → call item type, of the items read so far; filled as it goes.
        owned: The event's data is the caller's own (a raw read): elided strings are put back
            in place instead of into copies.
    """
    data = event["data"]
    items = data.get(ITEMS_KEY)
    if items is not None:
        elided = data.get(ELIDED_KEY)
        if elided:
            message = message_of(event)
            content = message["content"] if message else ()
            items = _restored(items, elided, content, owned=owned)
        for item in items:
            if (type(item) is dict or isinstance(item, Mapping)) and item.get(
                "type"
            ) in CALL_OUTPUT_TYPES:
                call_types[item.get("call_id")] = item["type"]
        return items  # type: ignore[no-any-return]
    message = message_of(event)
    if message is None:
        return ()
    converted = message_items(message, strict=False)
    for item in converted:
        if item["type"] == "function_call_output":
            call_type = call_types.get(item["call_id"], "function_call")
            item["type"] = CALL_OUTPUT_TYPES[call_type]
    return converted


def _kept(items: Sequence[Any], blocks: Sequence[Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """The event keys that keep ``items`` (whose message blocks are ``blocks``, item by item).

    A long string at ``content``, ``output`` or ``content[i].text`` / ``summary[i].text`` that
    equals the text of one of the item's blocks is replaced by ``None`` and listed in
    ``elidedText``; everything else is kept as is.
    """
    kept: list[Any] = []
    elided: list[list[Any]] = []
    offset = 0
    for index, (item, own) in enumerate(zip(items, blocks, strict=True)):
        texts: dict[str, int] = {}
        for k, block in enumerate(own, offset):
            text = block.get("text")
            if isinstance(text, str) and len(text) >= MIN_ELIDED:
                texts.setdefault(text, k)
        offset += len(own)
        skeleton = item
        for path in _text_paths(item) if texts else ():
            found = texts.get(_at(item, path))
            if found is not None:
                skeleton = _put(skeleton, path, None)
                elided.append([index, found, *path])
        kept.append(skeleton)
    return {ITEMS_KEY: kept, ELIDED_KEY: elided} if elided else {ITEMS_KEY: kept}


def _text_paths(item: Any) -> list[tuple[Any, ...]]:
    """Where an item may hold text its message shows."""
    if not isinstance(item, Mapping):
        return []
    paths: list[tuple[Any, ...]] = []
    for key in ("content", "output", "summary"):
        value = item.get(key)
        if isinstance(value, str):
            paths.append((key,))
        elif isinstance(value, list):
            paths += [
                (key, i, "text")
                for i, part in enumerate(value)
                if isinstance(part, Mapping) and isinstance(part.get("text"), str)
            ]
    return paths


def _at(value: Any, path: Sequence[Any]) -> Any:
    for step in path:
        value = value[step]
    return value


def _put(value: Any, path: Sequence[Any], new: Any) -> Any:
    """``value`` with ``new`` at ``path``: copies along the path, shares everything else."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, Mapping):
        return {**value, head: _put(value[head], rest, new)}
    copy = list(value)
    copy[head] = _put(copy[head], rest, new)
    return copy


def _restored(
    items: Sequence[Any],
    elided: Sequence[Sequence[Any]],
    content: Sequence[Mapping[str, Any]],
    *,
    owned: bool = False,
) -> Sequence[Any]:
    """``items`` with their elided strings put back from the message's ``content``.

    ``owned`` items (a plain list, the caller's) are changed in place (``restore_elided``);
    others are copied along each path.
    """
    if owned:
        restore_elided(items, elided, content)  # type: ignore[arg-type]  # owned: a plain list
        return items
    restored = list(items)
    for index, block, *path in elided:
        restored[index] = _put(restored[index], path, _elided_text(content, block))
    return restored


def restore_elided(
    items: list[Any], elided: Sequence[Sequence[Any]], content: Sequence[Mapping[str, Any]]
) -> None:
    """Put the elided strings of plain ``items`` (the caller's own) back in place.

    Each ``[item, block, *path]`` of ``elided`` gets the text of block ``block`` of the
    message's ``content`` (``_elided_text``).
    """
    for index, block, *path in elided:
        text = _elided_text(content, block)
        if not path:
            items[index] = text
            continue
        target = items[index]
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = text


def _elided_text(content: Sequence[Mapping[str, Any]], block: int) -> str:
    """The text an elided string had: block ``block``'s, as the message shows it now.

    A block rewritten since (a pruned tool output) gives its new text; one no longer there
    gives the message's text blocks joined.
    """
    text = content[block].get("text") if block < len(content) else None
    if isinstance(text, str):
        return text
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")
