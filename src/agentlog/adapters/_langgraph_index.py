"""The events of a LangGraph thread's agentlog session, and the index folded from them.

A thread is the session ``langgraph:<thread_id>``; every call of the checkpointer appends one
log-only, ignorable event (an agentlog tool that does not know the type skips it). Keys that
would repeat what the log already says are left out: ``ns`` when it is ``""``, ``parent`` (of
a checkpoint) and ``checkpoint`` (of writes) when they name the namespace's previous
checkpoint in log order, and a checkpoint's ``id`` when its tree holds it.

* ``langgraph/checkpoint`` ``{ns, parent, checkpoint, metadata, blobs}`` — ``put``: the
  checkpoint without its channel values (a serde tree, see ``_langgraph_codec``, or a patch of
  its parent's: ``{"$lg": "step", "of": seq, "set": ..., "unset": ...}``, or ``"patch"`` in
  threads written before versions seen were predicted), the metadata, and
  one blob per channel of ``new_versions``: ``{"v": version, "value": tree}``,
  ``{"v": version, "empty": true}``, a list value item by item ``{"v": version, "items":
  [...]}``, or — when the list extends a list this thread stores (the ``add_messages``
  pattern) — only its new items ``{"v": version, "base": base_version, "items": [...]}``. A
  patch is taken against the parent as the blobs predict it (``_langgraph_delta.predicted``);
* in any value tree, an object (a message) stored by a recent event of the thread may be a
  reference to it, ``{"$lg": "at", "r": [seq, key, ...], "set": {...}}``: the path of its tree
  in that event's data, plus constructor fields changed since;
* ``langgraph/writes`` ``{ns, checkpoint, task, path, writes: [[idx, channel, tree], ...]}`` —
  ``put_writes``;
* ``langgraph/removed`` ``{checkpoints: [[ns, id], ...]}`` — ``prune`` / ``delete_for_runs``:
  the checkpoints leave the thread's view; their events stay in the log, as every agentlog
  history edit does (``delete_thread`` removes the whole session).

Those are the events' full form. Each is stored in the compact form of ``_langgraph_compact``
when that rebuilds it exactly (ids and times as offsets, shared blob versions, derived task
ids); ``ThreadIndex`` expands every event it folds and keeps the full form by seq
(``ThreadIndex.data``), which is all the rest of the adapter reads.

``ThreadIndex`` is the fold of those events: where each checkpoint, blob, write and long string
is stored. ``MAX_DEPTH`` bounds a chain of checkpoint patches, so reading any checkpoint
applies at most that many.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from agentlog.adapters._langgraph_codec import long_strings
from agentlog.adapters._langgraph_compact import RECENT, Context, expand
from agentlog.adapters._langgraph_delta import is_patch
from agentlog.events import Event

__all__ = [
    "CHECKPOINT",
    "MAX_DEPTH",
    "REMOVED",
    "WRITES",
    "CheckpointRecord",
    "ThreadIndex",
    "WriteRecord",
    "checkpoint_id_of",
    "value_trees",
]

CHECKPOINT: Final = "langgraph/checkpoint"
WRITES: Final = "langgraph/writes"
REMOVED: Final = "langgraph/removed"
MAX_DEPTH: Final = 32
"""The longest chain of checkpoint patches; the next checkpoint is stored whole."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointRecord:
    """Where one checkpoint is stored."""

    seq: int
    """The ``langgraph/checkpoint`` event."""
    id: str
    """The checkpoint id."""
    parent: str | None
    """The parent checkpoint id."""
    depth: int
    """How many patches lie between the stored checkpoint and a whole tree."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteRecord:
    """One pending write."""

    seq: int
    """The ``langgraph/writes`` event."""
    position: int
    """Its index in the event's ``writes``."""
    task: str
    channel: str
    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadIndex:
    """The fold of a thread's events: checkpoints by namespace and id, blobs, writes, strings."""

    checkpoints: dict[str, dict[str, CheckpointRecord]] = field(default_factory=dict)
    """Namespace → checkpoint id → record, in put order (removed ones left out)."""
    by_seq: dict[int, CheckpointRecord] = field(default_factory=dict)
    """Checkpoint event seq → record (removed ones included: patches may build on them)."""
    last_id: dict[str, str] = field(default_factory=dict)
    """Namespace → the id of its last checkpoint event in log order."""
    blobs: dict[tuple[str, str, Any], int] = field(default_factory=dict)
    """``(ns, channel, version)`` → seq of the checkpoint event holding the blob."""
    writes: dict[tuple[str, str], dict[tuple[str, int], WriteRecord]] = field(default_factory=dict)
    """``(ns, checkpoint id)`` → ``(task id, idx)`` → write."""
    strings: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Every long string stored in the thread → where it is first stored."""
    data: dict[int, Any] = field(default_factory=dict)
    """Event seq → the full form of its data (``_langgraph_compact.expand``)."""
    seq_of: dict[tuple[str, str], int] = field(default_factory=dict)
    """``(ns, checkpoint id)`` → seq of its last checkpoint event (removed ones included)."""
    recent: dict[str, list[str]] = field(default_factory=dict)
    """Namespace → its last checkpoint ids in log order (``RECENT`` to ``2 * RECENT``)."""
    versions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Namespace → channel → the version of its last blob in log order."""
    top: dict[str, int] = field(default_factory=dict)
    """Namespace → the highest int version of its blobs."""
    order: dict[str, dict[str, int]] = field(default_factory=dict)
    """Namespace → channel → its rank by first blob."""
    _string_lists: dict[int, list[str]] = field(default_factory=dict)

    def context(self, event_type: str, data: Any) -> Context:
        """What the compact form of an event appended next is relative to."""
        ns = data.get("ns", "")
        if event_type != CHECKPOINT:
            return Context(recent=self.recent.get(ns, ()))
        parent = data["parent"] if "parent" in data else self.last_id.get(ns)
        return Context(
            parent=parent,
            of=None if parent is None else self.seq_of.get((ns, parent)),
            versions=self.versions.get(ns),
            top=self.top.get(ns),
            pending=self._pending(ns, parent),
            order=self.order.get(ns),
        )

    def _pending(self, ns: str, parent: str | None) -> list[tuple[str, int, int, str, Any]]:
        writes = self.writes.get((ns, parent), {}) if parent is not None else {}
        found = [
            (
                write.path,
                write.seq,
                write.position,
                write.channel,
                self.data[write.seq]["writes"][write.position][2],
            )
            for write in writes.values()
        ]
        found.sort(key=lambda write: write[:3])
        return found

    def apply(self, event: Event, full: Any = None) -> None:
        """Fold one event of the thread's log (other event types are ignored).

        ``full``: the full form of its data when the caller has it (the writer does).
        """
        data = event.data
        if event.type in (CHECKPOINT, WRITES):
            if full is None:
                full = expand(event.type, data, self.context(event.type, data))
            data = self.data[event.seq] = full
        if event.type == CHECKPOINT:
            ns = data.get("ns", "")
            checkpoint_id = checkpoint_id_of(data)
            base = data["checkpoint"].get("of")
            record = CheckpointRecord(
                seq=event.seq,
                id=checkpoint_id if checkpoint_id is not None else self.by_seq[base].id,
                parent=data["parent"] if "parent" in data else self.last_id.get(ns),
                depth=0 if base is None else self.by_seq[base].depth + 1,
            )
            self.checkpoints.setdefault(ns, {})[record.id] = record
            self.by_seq[event.seq] = record
            self.seq_of[(ns, record.id)] = event.seq
            self.last_id[ns] = record.id
            recent = self.recent.setdefault(ns, [])
            recent.append(record.id)
            if len(recent) >= 2 * RECENT:
                del recent[:RECENT]
            versions = self.versions.setdefault(ns, {})
            order = self.order.setdefault(ns, {})
            for channel, blob in data["blobs"].items():
                order.setdefault(channel, len(order))
                self.blobs[(ns, channel, blob["v"])] = event.seq
                versions[channel] = version = blob["v"]
                if type(version) is int and version > self.top.get(ns, version - 1):
                    self.top[ns] = version
        elif event.type == WRITES:
            ns = data.get("ns", "")
            target = data["checkpoint"] if "checkpoint" in data else self.last_id[ns]
            writes = self.writes.setdefault((ns, target), {})
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

    def string(self, seq: int, index: int) -> str:
        """The ``index``-th long string of event ``seq``."""
        found = self._string_lists.get(seq)
        if found is None:
            data = self.data[seq]
            event_type = CHECKPOINT if seq in self.by_seq else WRITES
            found = self._string_lists[seq] = long_strings(value_trees(event_type, data))
        return found[index]

    def latest(self, ns: str) -> tuple[str, CheckpointRecord] | None:
        """The newest checkpoint of namespace ``ns`` (checkpoint ids sort by time)."""
        records = self.checkpoints.get(ns)
        if not records:
            return None
        newest = max(records)
        return newest, records[newest]

    def chain(self, ns: str, channel: str, version: Any) -> list[Any] | None:
        """The blobs a channel value is built from, oldest first, or ``None`` if it has none.

        A delta blob names its base version; the chain ends at a blob that is complete.
        """
        blobs: list[Any] = []
        while True:
            seq = self.blobs.get((ns, channel, version))
            if seq is None:
                return None
            blob = self.data[seq]["blobs"][channel]
            blobs.append(blob)
            if "base" not in blob:
                blobs.reverse()
                return blobs
            version = blob["base"]


def checkpoint_id_of(data: Any) -> str | None:
    """The id of a ``langgraph/checkpoint`` event: ``data["id"]``, else the one in its tree.

    ``None`` for a patch that keeps its base's id. The writer stores ``data["id"]`` only when
    the tree does not hold the id as a plain string.
    """
    if "id" in data:
        return str(data["id"])
    tree = data["checkpoint"]
    found = tree["set"].get("id") if is_patch(tree) else tree.get("id")
    return found if isinstance(found, str) else None


def value_trees(event_type: str, data: Any) -> Iterator[Any]:
    """The serde trees of one event, in the order shared strings are numbered.

    The same in the full and the compact form (``_langgraph_compact``): what the compact form
    leaves out is never a long string (a predicted blob is a reference, or a value equal to a
    write's, whose long strings a checkpoint would store as shared strings instead).
    """
    if event_type == CHECKPOINT:
        if "checkpoint" in data:
            yield data["checkpoint"]
        if "metadata" in data:
            yield data["metadata"]
        blobs = data["blobs"] if "blobs" in data else data.get("b", {})
        for blob in blobs.values():
            if blob is None:  # compact: a predicted blob that is not there
                continue
            if isinstance(blob, list):  # compact: [] or [value]
                yield from blob
                continue
            if "value" in blob:
                yield blob["value"]
            yield from blob.get("items", ())
    elif event_type == WRITES:
        for entry in data["writes"]:
            yield entry[-1]
