"""One LangGraph thread over its agentlog session: events written, checkpoints read back.

``Thread`` pairs a session with its ``ThreadIndex`` and the checkpointer's serde. Writing, it
turns ``put`` / ``put_writes`` arguments into the events of ``_langgraph_index`` — storing only
the new items of a list channel that extends the list it held before (linear storage of
``add_messages`` histories) and sharing long strings with earlier events. Reading, it rebuilds
``CheckpointTuple`` values with the serde's own ``loads_typed``.

A list counts as extending the previous one when each of the previous items is the very same
object at the same index, with the same ``id`` attribute (``add_messages`` assigns missing ids
in place); anything else — a replaced or removed message, a value from another branch — is
stored whole. An item changed in place (not replaced) without a new ``id`` is not detected:
LangGraph state is not meant to be mutated in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
    get_checkpoint_metadata,
    writes_sort_key,
)

from agentlog.adapters._langgraph_codec import decode_tree, encode_typed, share_strings
from agentlog.adapters._langgraph_index import (
    CHECKPOINT,
    REMOVED,
    WRITES,
    CheckpointRecord,
    ThreadIndex,
)
from agentlog.session import Session

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


class _Known:
    """The last list value a channel was written or read with, for delta detection."""

    __slots__ = ("ids", "items", "version")

    def __init__(self, version: Any, items: Sequence[Any]) -> None:
        self.version = version
        self.items = tuple(items)
        self.ids = tuple(getattr(item, "id", None) for item in self.items)

    def prefix_of(self, value: list[Any]) -> bool:
        items = self.items
        if len(value) < len(items):
            return False
        for index, item in enumerate(items):
            if value[index] is not item or getattr(item, "id", None) != self.ids[index]:
                return False
        return True


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
        self._known: dict[tuple[str, str], _Known] = {}
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
        rest = dict(checkpoint)
        values: dict[str, Any] = rest.pop("channel_values")  # type: ignore[assignment]
        blobs: dict[str, Any] = {}
        known: dict[tuple[str, str], _Known] = {}
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
                blob["items"] = [self._tree(item) for item in value[start:]]
                known[(ns, channel)] = _Known(version, value)
            else:
                blob["value"] = self._tree(value)
            blobs[channel] = blob
        data = {
            "ns": ns,
            "id": checkpoint["id"],
            "parent": configurable.get("checkpoint_id"),
            "checkpoint": self._tree(rest),
            "metadata": self._tree(get_checkpoint_metadata(config, metadata)),
            "blobs": blobs,
        }
        self._append(CHECKPOINT, data)
        self._known.update(known)

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
        entries = []
        for position, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, position)
            if idx >= 0 and (task_id, idx) in stored:
                continue  # a retried task writes the same values again
            entries.append([idx, channel, self._tree(value)])
        if entries:
            data = {
                "ns": ns,
                "checkpoint": checkpoint_id,
                "task": task_id,
                "path": task_path,
                "writes": entries,
            }
            self._append(WRITES, data)

    def remove(self, checkpoints: Sequence[tuple[str, str]]) -> None:
        """Take checkpoints out of the thread's view durably (one event)."""
        if checkpoints:
            self._append(REMOVED, {"checkpoints": [list(key) for key in checkpoints]})

    def _tree(self, value: Any) -> Any:
        return share_strings(encode_typed(self.serde.dumps_typed(value)), self.index.strings)

    def _append(self, event_type: str, data: dict[str, Any]) -> None:
        event = self.session.append(event_type, data, ignorable=True)
        self.index.apply(event)

    # --- reading ------------------------------------------------------------------------

    def get(self, ns: str, checkpoint_id: str | None) -> CheckpointRecord | None:
        """A checkpoint of namespace ``ns``: the one named, or the newest."""
        if checkpoint_id is None:
            return self.index.latest(ns)
        return self.index.checkpoints.get(ns, {}).get(checkpoint_id)

    def metadata(self, record: CheckpointRecord) -> Any:
        """The metadata of ``record`` for filtering (decoded once, never handed out)."""
        if record.metadata is None:
            record.metadata = self._decode(self._data(record)["metadata"])
        return record.metadata

    def checkpoint_tuple(
        self, ns: str, checkpoint_id: str, record: CheckpointRecord, config: RunnableConfig
    ) -> CheckpointTuple:
        """The full ``CheckpointTuple`` of a stored checkpoint, freshly decoded."""
        data = self._data(record)
        checkpoint = self._decode(data["checkpoint"])
        values = {}
        for channel, version in checkpoint["channel_versions"].items():
            value = self._value(ns, channel, version)
            if value is not _MISSING:
                values[channel] = value
        thread = thread_id(self.session.id)
        parent = None
        if record.parent is not None:
            parent = {
                "configurable": {
                    "thread_id": thread,
                    "checkpoint_ns": ns,
                    "checkpoint_id": record.parent,
                }
            }
        return CheckpointTuple(
            config=config,
            checkpoint={**checkpoint, "channel_values": values},
            metadata=self._decode(data["metadata"]),
            parent_config=parent,  # type: ignore[arg-type]  # a RunnableConfig literal
            pending_writes=self._pending_writes(ns, checkpoint_id),
        )

    def _pending_writes(self, ns: str, checkpoint_id: str) -> list[tuple[str, str, Any]]:
        stored = self.index.writes.get((ns, checkpoint_id), {})
        ordered = sorted(stored.items(), key=lambda kv: writes_sort_key(kv[1].path, *kv[0]))
        writes = []
        for _, write in ordered:
            tree = self.session.event_at(write.seq).data["writes"][write.position][2]
            writes.append((write.task, write.channel, self._decode(tree)))
        return writes

    def _value(self, ns: str, channel: str, version: Any) -> Any:
        chain = self.index.chain(self.session, ns, channel, version)
        if chain is None or chain[0].get("empty"):
            return _MISSING
        if "value" in chain[0]:
            return self._decode(chain[0]["value"])
        items = [self._decode(tree) for blob in chain for tree in blob["items"]]
        self._known[(ns, channel)] = _Known(version, items)
        return items

    def _data(self, record: CheckpointRecord) -> Any:
        return self.session.event_at(record.seq).data

    def _decode(self, tree: Any) -> Any:
        return self.serde.loads_typed(decode_tree(tree, self._string))

    def _string(self, seq: int, index: int) -> str:
        return self.index.string(self.session, seq, index)
