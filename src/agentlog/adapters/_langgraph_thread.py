"""One LangGraph thread over its agentlog session: events written, checkpoints read back.

``Thread`` pairs a session with its ``ThreadIndex`` and the checkpointer's serde. Writing, it
turns ``put`` / ``put_writes`` arguments into the events of ``_langgraph_index`` — storing only
the new items of a list channel that extends the list it held before (linear storage of
``add_messages`` histories) and sharing long strings with earlier events. Reading, it rebuilds
``CheckpointTuple`` values with the serde's own ``loads_typed``.

Three ways keep a thread's bytes near the raw size of its messages, each checked to rebuild
the value exactly and skipped otherwise: a list channel stores only the items it gained; an
object stored by a recent event — a message a task wrote, found again in the channel, or the
other way round when LangGraph stores the write after the checkpoint — is a reference to where
it is stored (plus the fields ``add_messages`` changed on it, such as a new ``id``); a
checkpoint is a patch of its parent's as the new channel versions predict it. Long strings are
shared between events by ``_langgraph_codec``. Each event is then stored in the compact form of
``_langgraph_compact`` (what earlier events already say left out) when that expands back to it
exactly; reading goes through ``ThreadIndex.data``, the full form.

A list counts as extending the previous one when each of the previous items is the very same
object at the same index, with the same ``id`` attribute (``add_messages`` assigns missing ids
in place); anything else — a replaced or removed message, a value from another branch — is
stored whole. An item changed in place (not replaced) without a new ``id`` is not detected:
LangGraph state is not meant to be mutated in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

import orjson
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from agentlog.adapters._langgraph_codec import (
    decode_tree,
    encode_typed,
    resolve_strings,
    share_strings,
)
from agentlog.adapters._langgraph_compact import compact
from agentlog.adapters._langgraph_delta import (
    MARK,
    KnownList,
    diff,
    is_patch,
    next_metadata,
    patched,
    predicted,
)
from agentlog.adapters._langgraph_index import (
    CHECKPOINT,
    MAX_DEPTH,
    REMOVED,
    WRITES,
    CheckpointRecord,
    ThreadIndex,
    checkpoint_id_of,
)
from agentlog.adapters._langgraph_refs import StoredObjects, resolved
from agentlog.session import Session
from agentlog.stores.restore import collector_paused

__all__ = ["PREFIX", "Thread", "session_id", "thread_id"]

PREFIX: Final = "langgraph:"
"""Session ids of LangGraph threads start with this."""

_MISSING: Final = object()


def session_id(thread: object) -> str:
    """The agentlog session id of a LangGraph thread id."""
    return PREFIX + str(thread)


def thread_id(session: str) -> str:
    """The LangGraph thread id of an agentlog session id made by ``session_id``."""
    return session.removeprefix(PREFIX)


def _array_header(length: int) -> bytes:
    """The msgpack header of an array of ``length`` items."""
    if length < 16:
        return bytes([0x90 | length])
    if length < 1 << 16:
        return b"\xdc" + length.to_bytes(2, "big")
    return b"\xdd" + length.to_bytes(4, "big")


class Thread:
    """A LangGraph thread stored as one agentlog session.

    Args:
        session: The thread's session (attached to write, or a read-only view).
        serde: The checkpointer's serializer.
    """

    def __init__(self, session: Session, serde: SerializerProtocol) -> None:
        self.session = session
        self.serde = serde
        self.index = ThreadIndex()
        self._known: dict[tuple[str, str], KnownList] = {}
        self._objects = StoredObjects(self._share)
        self._trees: dict[int, Any] = {}
        self._bytes: dict[int, tuple[Any, bytes | None]] = {}
        self._metadata: dict[int, Any] = {}
        self._metadata_trees: dict[int, Any] = {}
        for event in session.events:
            self.index.apply(event)

    # --- writing ------------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: Mapping[str, Any],
    ) -> None:
        """Store a checkpoint durably (one event)."""
        configurable = config["configurable"]
        ns = configurable.get("checkpoint_ns", "")
        parent_id = configurable.get("checkpoint_id")
        rest = dict(checkpoint)
        values: dict[str, Any] = rest.pop("channel_values")  # type: ignore[assignment]
        blobs: dict[str, Any] = {}
        known: dict[tuple[str, str], KnownList] = {}
        stored: list[tuple[Any, Any, Any, list[Any]]] = []
        for channel, version in new_versions.items():
            blob: dict[str, Any] = {"v": version}
            if channel not in values:
                blob["empty"] = True
            elif type(value := values[channel]) is list:
                previous = self._known.get((ns, channel))
                start = 0
                if (
                    previous is not None
                    and (ns, channel, previous.version) in self.index.blobs
                    and previous.prefix_of(value)
                ):
                    blob["base"] = previous.version
                    start = len(previous.items)
                items = []
                for index, item in enumerate(value[start:]):
                    tree = self._raw(item)
                    items.append(kept := self._objects.refer(item, tree))
                    stored.append((item, tree, kept, ["blobs", channel, "items", index]))
                blob["items"] = items
                known[(ns, channel)] = KnownList(version, value, previous if start else None)
            else:
                tree = self._raw(value)
                blob["value"] = kept = self._objects.refer(value, tree)
                stored.append((value, tree, kept, ["blobs", channel, "value"]))
            blobs[channel] = blob
        data: dict[str, Any] = {"ns": ns} if ns else {}
        if parent_id != self.index.last_id.get(ns):
            data["parent"] = parent_id
        data["checkpoint"] = self._share(
            self._checkpoint_field(ns, parent_id, self._raw(rest), blobs)
        )
        if checkpoint_id_of(data) != checkpoint["id"]:
            data = {"id": checkpoint["id"], **data}
        self._put_metadata(data, self._raw(get_checkpoint_metadata(config, metadata)))
        data["blobs"] = blobs
        seq = self._append(CHECKPOINT, data)
        self._known.update(known)
        self._objects.next_generation()
        for value, tree, kept, path in stored:
            self._objects.remember(value, tree, kept, [seq, *path])

    def _checkpoint_field(
        self, ns: str, parent_id: str | None, tree: Any, blobs: dict[str, Any]
    ) -> Any:
        """``tree``, or a patch that rebuilds it exactly from the parent checkpoint's tree.

        The patch is taken against the parent as the event's ``blobs`` predict the child
        (``predicted``), so the new channel versions are not stored twice.
        """
        parent = self.index.checkpoints.get(ns, {}).get(parent_id) if parent_id else None
        if parent is None or parent.depth >= MAX_DEPTH:
            return tree
        patch = diff(predicted(self._checkpoint_tree(parent), blobs, seen=True), tree)
        return tree if patch is None else {**patch, MARK: "step", "of": parent.seq}

    def _put_metadata(self, data: dict[str, Any], tree: Any) -> None:
        """Store the metadata ``tree`` in ``data``: left out, a patch, or whole.

        A patched checkpoint's metadata is usually its base's with the next step
        (``next_metadata``): then it is not stored at all, and otherwise as a patch of that
        guess when the patch is smaller.
        """
        stored = data["checkpoint"]
        if is_patch(stored):
            expected = next_metadata(self._metadata_tree(self.index.by_seq[stored["of"]]))
            patch = diff(expected, tree)
            if patch is not None:
                if not patch["set"] and "unset" not in patch:
                    return
                if len(orjson.dumps(patch)) < len(orjson.dumps(tree)):
                    data["metadata"] = self._share(patch)
                    return
        data["metadata"] = self._share(tree)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> None:
        """Store a task's writes durably (one event), skipping those already stored."""
        configurable = config["configurable"]
        ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = configurable["checkpoint_id"]
        stored = self.index.writes.get((ns, checkpoint_id), {})
        entries: list[list[Any]] = []
        kept: list[tuple[Any, Any, Any, list[Any]]] = []
        for position, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, position)
            if idx >= 0 and (task_id, idx) in stored:
                continue  # a retried task writes the same values again
            tree = self._raw(value)
            entry = self._objects.refer(value, tree)
            kept.append((value, tree, entry, ["writes", len(entries), 2]))
            entries.append([idx, channel, entry])
        if not entries:
            return
        data: dict[str, Any] = {"ns": ns} if ns else {}
        if checkpoint_id != self.index.last_id.get(ns):
            data["checkpoint"] = checkpoint_id
        data.update(task=task_id, path=task_path, writes=entries)
        seq = self._append(WRITES, data)
        for value, tree, entry, path in kept:
            self._objects.remember(value, tree, entry, [seq, *path])

    def remove(self, checkpoints: Sequence[tuple[str, str]]) -> None:
        """Take checkpoints out of the thread's view durably (one event)."""
        if checkpoints:
            self._append(REMOVED, {"checkpoints": [list(key) for key in checkpoints]})

    def _raw(self, value: Any) -> Any:
        return encode_typed(self.serde.dumps_typed(value))

    def _share(self, tree: Any) -> Any:
        return share_strings(tree, self.index.strings)

    def _append(self, event_type: str, data: dict[str, Any]) -> int:
        stored = compact(event_type, data, self.index.context(event_type, data))
        event = self.session.append(event_type, stored, ignorable=True)
        self.index.apply(event, data)  # ``compact`` checked that ``data`` is its full form
        return event.seq

    # --- reading ------------------------------------------------------------------------

    def get(self, ns: str, checkpoint_id: str | None) -> tuple[str, CheckpointRecord] | None:
        """A checkpoint of namespace ``ns`` with its id: the one named, or the newest."""
        if checkpoint_id is None:
            return self.index.latest(ns)
        record = self.index.checkpoints.get(ns, {}).get(checkpoint_id)
        return None if record is None else (checkpoint_id, record)

    def metadata(self, record: CheckpointRecord) -> Any:
        """The metadata of ``record`` for filtering (decoded once, never handed out)."""
        metadata = self._metadata.get(record.seq)
        if metadata is None:
            metadata = self._metadata[record.seq] = self._decode(self._metadata_tree(record))
        return metadata

    def _metadata_tree(self, record: CheckpointRecord) -> Any:
        """The whole metadata tree of a stored checkpoint (see ``_put_metadata``)."""
        tree = self._metadata_trees.get(record.seq)
        if tree is None:
            data = self._data(record)
            tree = resolve_strings(data.get("metadata"), self._string)
            omitted = "metadata" not in data
            if omitted or (isinstance(tree, dict) and tree.get("$lg") == "patch"):
                base = self.index.by_seq[data["checkpoint"]["of"]]
                expected = next_metadata(self._metadata_tree(base))
                tree = expected if omitted else patched(expected, tree)
            self._metadata_trees[record.seq] = tree
        return tree

    def checkpoint_tuple(
        self, ns: str, checkpoint_id: str, record: CheckpointRecord, config: RunnableConfig
    ) -> CheckpointTuple:
        """The full ``CheckpointTuple`` of a stored checkpoint, freshly decoded."""
        checkpoint = self._decode(self._checkpoint_tree(record))
        values = {}
        for channel, version in checkpoint["channel_versions"].items():
            value = self._value(ns, channel, version)
            if value is not _MISSING:
                values[channel] = value
        parent = None
        if record.parent is not None:
            parent = {
                "configurable": {
                    "thread_id": thread_id(self.session.id),
                    "checkpoint_ns": ns,
                    "checkpoint_id": record.parent,
                }
            }
        return CheckpointTuple(
            config=config,
            checkpoint=cast(Checkpoint, {**checkpoint, "channel_values": values}),
            metadata=self._decode(self._metadata_tree(record)),
            parent_config=parent,  # type: ignore[arg-type]  # a RunnableConfig literal
            pending_writes=self._pending_writes(ns, checkpoint_id),
        )

    def _checkpoint_tree(self, record: CheckpointRecord) -> Any:
        """The whole tree of a stored checkpoint (patches applied, strings resolved)."""
        tree = self._trees.get(record.seq)
        if tree is None:
            data = self._data(record)
            stored = resolve_strings(data["checkpoint"], self._string)
            if is_patch(stored):
                base = self._checkpoint_tree(self.index.by_seq[stored["of"]])
                seen = stored[MARK] == "step"
                stored = patched(predicted(base, data["blobs"], seen=seen), stored)
            tree = self._trees[record.seq] = stored
        return tree

    def _pending_writes(self, ns: str, checkpoint_id: str) -> list[tuple[str, str, Any]]:
        stored = self.index.writes.get((ns, checkpoint_id), {})
        ordered = sorted(stored.items(), key=lambda kv: writes_sort_key(kv[1].path, *kv[0]))
        writes = []
        for _, write in ordered:
            tree = self.index.data[write.seq]["writes"][write.position][2]
            writes.append((write.task, write.channel, self._decode(self._resolved(tree))))
        return writes

    def _value(self, ns: str, channel: str, version: Any) -> Any:
        chain = self.index.chain(ns, channel, version)
        if chain is None or chain[0].get("empty"):
            return _MISSING
        if "value" in chain[0]:
            return self._decode(self._resolved(chain[0]["value"]))
        trees = [tree for blob in chain for tree in blob["items"]]
        packed = [self._packed(tree) for tree in trees]
        with collector_paused():  # many small acyclic objects: nothing for the collector
            if all(data is not None for data in packed):
                # One msgpack array of the items' own bytes: the serde decodes it as it would
                # the whole list, in one call.
                whole = _array_header(len(packed)) + b"".join(packed)  # type: ignore[arg-type]
                items = self.serde.loads_typed(("msgpack", whole))
            else:
                items = [self._decode(self._resolved(tree)) for tree in trees]
        self._known[(ns, channel)] = KnownList(version, items)
        return items

    def _packed(self, tree: Any) -> bytes | None:
        """The msgpack bytes of a stored list item (``None``: the serde gave another type).

        Kept per stored tree (events are immutable), so reading a long history again packs
        only the items added since.
        """
        cached = self._bytes.get(id(tree))
        if cached is None or cached[0] is not tree:
            type_, data = decode_tree(self._resolved(tree), self._string)
            cached = self._bytes[id(tree)] = (tree, data if type_ == "msgpack" else None)
        return cached[1]

    def _resolved(self, tree: Any) -> Any:
        return resolved(tree, self._event_data, self._string)

    def _event_data(self, seq: int) -> Any:
        return self.index.data[seq]

    def _data(self, record: CheckpointRecord) -> Any:
        return self.index.data[record.seq]

    def _decode(self, tree: Any) -> Any:
        return self.serde.loads_typed(decode_tree(tree, self._string))

    def _string(self, seq: int, index: int) -> str:
        return self.index.string(seq, index)
