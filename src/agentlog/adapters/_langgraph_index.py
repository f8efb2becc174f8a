"""The events of a LangGraph thread's agentlog session, and the index folded from them.

A thread is the session ``langgraph:<thread_id>``; every call of the checkpointer appends one
log-only, ignorable event (an agentlog tool that does not know the type skips it):

* ``langgraph/checkpoint`` ``{ns, id, parent, checkpoint, metadata, blobs}`` — ``put``: the
  checkpoint without its channel values and the metadata (serde trees, see
  ``_langgraph_codec``), and one blob per channel of ``new_versions``:
  ``{"v": version, "value": tree}``, ``{"v": version, "empty": true}``, a list value item by
  item ``{"v": version, "items": [tree, ...]}``, or — when the list extends a list this thread
  already stores (the ``add_messages`` pattern) — only its new items
  ``{"v": version, "base": base_version, "items": [...]}``;
* ``langgraph/writes`` ``{ns, checkpoint, task, path, writes: [[idx, channel, tree], ...]}`` —
  ``put_writes``;
* ``langgraph/removed`` ``{checkpoints: [[ns, id], ...]}`` — ``prune`` / ``delete_for_runs``:
  the checkpoints leave the thread's view; their events stay in the log, as every agentlog
  history edit does (``delete_thread`` removes the whole session).

``ThreadIndex`` is the fold of those events (pure bookkeeping: where each checkpoint, blob and
write is stored); ``ThreadIndex.value`` rebuilds a channel value by following its base chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from agentlog.adapters._langgraph_codec import long_strings
from agentlog.events import Event
from agentlog.session import Session

__all__ = [
    "CHECKPOINT",
    "REMOVED",
    "WRITES",
    "CheckpointRecord",
    "ThreadIndex",
    "WriteRecord",
    "value_trees",
]

CHECKPOINT: Final = "langgraph/checkpoint"
WRITES: Final = "langgraph/writes"
REMOVED: Final = "langgraph/removed"


@dataclass(slots=True, kw_only=True)
class CheckpointRecord:
    """Where one checkpoint is stored."""

    seq: int
    """The ``langgraph/checkpoint`` event."""
    parent: str | None
    """The parent checkpoint id."""
    decoded: Any = None
    """The checkpoint (without channel values), once decoded."""
    metadata: Any = None
    """The metadata, once decoded."""


@dataclass(slots=True, kw_only=True)
class WriteRecord:
    """One pending write."""

    seq: int
    """The ``langgraph/writes`` event."""
    position: int
    """Its index in the event's ``writes``."""
    task: str
    channel: str
    path: str


@dataclass(slots=True, kw_only=True)
class ThreadIndex:
    """The fold of a thread's events: checkpoints by namespace and id, blobs, writes, strings."""

    checkpoints: dict[str, dict[str, CheckpointRecord]] = field(default_factory=dict)
    """Namespace → checkpoint id → record, in put order."""
    blobs: dict[tuple[str, str, Any], int] = field(default_factory=dict)
    """``(ns, channel, version)`` → seq of the checkpoint event holding the blob."""
    writes: dict[tuple[str, str], dict[tuple[str, int], WriteRecord]] = field(
        default_factory=dict
    )
    """``(ns, checkpoint id)`` → ``(task id, idx)`` → write."""
    strings: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Every long string stored in the thread → where it is first stored."""
    _string_lists: dict[int, list[str]] = field(default_factory=dict)

    def apply(self, event: Event) -> None:
        """Fold one event of the thread's log (other event types are ignored)."""
        data = event.data
        if event.type == CHECKPOINT:
            ns = data["ns"]
            self.checkpoints.setdefault(ns, {})[data["id"]] = CheckpointRecord(
                seq=event.seq, parent=data["parent"]
            )
            for channel, blob in data["blobs"].items():
                self.blobs[(ns, channel, blob["v"])] = event.seq
        elif event.type == WRITES:
            writes = self.writes.setdefault((data["ns"], data["checkpoint"]), {})
            for position, (idx, channel, _) in enumerate(data["writes"]):
                writes[(data["task"], idx)] = WriteRecord(
                    seq=event.seq,
                    position=position,
                    task=data["task"],
                    channel=channel,
                    path=data["path"],
                )
        elif event.type == REMOVED:
            for ns, checkpoint_id in data["checkpoints"]:
                self.checkpoints.get(ns, {}).pop(checkpoint_id, None)
                self.writes.pop((ns, checkpoint_id), None)
        else:
            return
        for index, text in enumerate(long_strings(value_trees(event.type, data))):
            self.strings.setdefault(text, (event.seq, index))

    def string(self, log: Session, seq: int, index: int) -> str:
        """The ``index``-th long string of event ``seq`` of ``log``."""
        found = self._string_lists.get(seq)
        if found is None:
            event = log.event_at(seq)
            found = self._string_lists[seq] = long_strings(value_trees(event.type, event.data))
        return found[index]

    def latest(self, ns: str) -> CheckpointRecord | None:
        """The newest checkpoint of namespace ``ns`` (checkpoint ids sort by time)."""
        records = self.checkpoints.get(ns)
        if not records:
            return None
        return records[max(records)]

    def chain(self, log: Session, ns: str, channel: str, version: Any) -> list[Any] | None:
        """The blobs a channel value is built from, oldest first, or ``None`` if it has none.

        A delta blob names its base version; the chain ends at a blob that is complete.
        """
        blobs: list[Any] = []
        while True:
            seq = self.blobs.get((ns, channel, version))
            if seq is None:
                return None
            blob = log.event_at(seq).data["blobs"][channel]
            blobs.append(blob)
            if "base" not in blob:
                blobs.reverse()
                return blobs
            version = blob["base"]


def value_trees(event_type: str, data: Any) -> Iterator[Any]:
    """The serde trees of one event, in the order shared strings are numbered."""
    if event_type == CHECKPOINT:
        yield data["checkpoint"]
        yield data["metadata"]
        for blob in data["blobs"].values():
            if "value" in blob:
                yield blob["value"]
            yield from blob.get("items", ())
    elif event_type == WRITES:
        for _, _, tree in data["writes"]:
            yield tree

