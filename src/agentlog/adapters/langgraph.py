"""LangGraph checkpoints in an agentlog store: threads as sessions, linear message storage.

``AgentlogCheckpointer(store=None)`` is a LangGraph ``BaseCheckpointSaver`` with the sync and
the async methods. Each thread is the agentlog session ``langgraph:<thread_id>``; each ``put``,
``put_writes``, ``prune`` or ``delete_for_runs`` appends one durable event to it (see
``_langgraph_index`` for their shapes). Values are serialized by LangGraph's own serde
(``JsonPlusSerializer`` by default: msgpack, never pickle) and stored as JSON. A list channel
that grows by appending — ``add_messages`` — is stored as its new items only, so a thread's
bytes grow linearly with its messages where ``SqliteSaver`` rewrites the whole list at every
step; reading a checkpoint rebuilds the full value.

Needs ``pip install 'agentlog[langgraph]'``.

Example:
    >>> import agentlog
    >>> from agentlog.adapters.langgraph import AgentlogCheckpointer
    >>> from langgraph.graph import START, StateGraph
    >>> builder = StateGraph(int)
    >>> _ = builder.add_node("double", lambda x: x * 2)
    >>> _ = builder.add_edge(START, "double")
    >>> with AgentlogCheckpointer(agentlog.open_store("memory:")) as checkpointer:
    ...     graph = builder.compile(checkpointer=checkpointer)
    ...     graph.invoke(21, {"configurable": {"thread_id": "t1"}})
    42
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Final

from agentlog.providers.base import require_extra

require_extra("langgraph.checkpoint.base", "langgraph")

from langchain_core.runnables import RunnableConfig  # noqa: E402
from langgraph.checkpoint.base import (  # noqa: E402
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
)
from langgraph.checkpoint.serde.base import SerializerProtocol  # noqa: E402

from agentlog.adapters._backing_store import StoreArgument, resolve_store  # noqa: E402
from agentlog.adapters._langgraph_thread import (  # noqa: E402
    PREFIX,
    Thread,
    session_id,
    thread_id,
)
from agentlog.errors import SessionForkError, SessionNotFound  # noqa: E402

__all__ = ["AgentlogCheckpointer"]

OPEN_THREADS: Final = 64
"""Threads kept open for writing at once; the least recently used one is closed beyond."""


class AgentlogCheckpointer(BaseCheckpointSaver[int]):
    """A LangGraph checkpointer that stores every thread as an agentlog session.

    Args:
        store: An agentlog ``Store``, a store URL or path, or ``None`` for the default embedded
            store (``agentlog.open_store()``). A store opened here is closed by ``close()``.
        serde: The serializer (default: LangGraph's ``JsonPlusSerializer``).

    Durability: ``put``, ``put_writes``, ``prune`` and ``delete_for_runs`` return once their
    event is durable in the store. A thread written here stays open for writing (agentlog's
    one writer per session) until it is one of the least recently used beyond
    ``OPEN_THREADS``, deleted, or the checkpointer is closed; another process that writes it
    meanwhile gets ``SessionLocked``. Reading never takes the writer lease.
    """

    def __init__(
        self, store: StoreArgument = None, *, serde: SerializerProtocol | None = None
    ) -> None:
        super().__init__(serde=serde)
        self.store, self._owns_store = resolve_store(store)
        self._threads: OrderedDict[str, Thread] = OrderedDict()
        self._lock = threading.RLock()

    # --- threads ------------------------------------------------------------------------

    def _readable(self, thread: object) -> Thread | None:
        """The thread for reading: the open one, or a fresh read-only view; ``None`` if absent."""
        key = session_id(thread)
        live = self._threads.get(key)
        if live is not None:
            self._threads.move_to_end(key)
            return live
        try:
            return Thread(self.store.inspect(key), self.serde)
        except SessionNotFound:
            return None

    def _writable(self, thread: object) -> Thread:
        """The thread open for writing (created when it does not exist yet)."""
        key = session_id(thread)
        live = self._threads.get(key)
        if live is None:
            try:
                session = self.store.open(key)
            except SessionNotFound:
                session = self.store.create(key)
            live = self._threads[key] = Thread(session, self.serde)
            while len(self._threads) > OPEN_THREADS:
                _, evicted = self._threads.popitem(last=False)
                evicted.session.close()
        self._threads.move_to_end(key)
        return live

    def _release(self, thread: object) -> None:
        live = self._threads.pop(session_id(thread), None)
        if live is not None:
            live.session.close()

    def _thread_ids(self) -> builtins.list[str]:
        """Every stored thread (a thread with nothing written yet has no checkpoint)."""
        return [thread_id(info.id) for info in self.store.list() if info.id.startswith(PREFIX)]

    # --- BaseCheckpointSaver -------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its ``checkpoint_id``, else the newest)."""
        configurable = config["configurable"]
        ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = get_checkpoint_id(config)
        with self._lock:
            thread = self._readable(configurable["thread_id"])
            found = None if thread is None else thread.get(ns, checkpoint_id)
            if thread is None or found is None:
                return None
            if checkpoint_id is None:
                checkpoint_id = found[0]
                config = {
                    "configurable": {
                        "thread_id": configurable["thread_id"],
                        "checkpoint_ns": ns,
                        "checkpoint_id": checkpoint_id,
                    }
                }
            return thread.checkpoint_tuple(ns, checkpoint_id, found[1], config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,  # LangGraph's parameter name
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first, of one thread (``config``) or all, filtered by metadata."""
        yield from self._locked_list(config, filter, before, limit)

    def _list(
        self,
        config: RunnableConfig | None,
        query: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> builtins.list[CheckpointTuple]:
        configurable = config["configurable"] if config else {}
        threads = [configurable["thread_id"]] if config else self._thread_ids()
        only_ns = configurable.get("checkpoint_ns")
        only_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        found: builtins.list[CheckpointTuple] = []
        for tid in threads:
            thread = self._readable(tid)
            if thread is None:
                continue
            for ns, records in thread.index.checkpoints.items():
                if only_ns is not None and ns != only_ns:
                    continue
                for checkpoint_id in sorted(records, reverse=True):
                    if only_id and checkpoint_id != only_id:
                        continue
                    if before_id and checkpoint_id >= before_id:
                        continue
                    record = records[checkpoint_id]
                    if query:
                        metadata = thread.metadata(record)
                        if not all(metadata.get(k) == v for k, v in query.items()):
                            continue
                    if limit is not None and len(found) >= limit:
                        return found
                    tuple_config: RunnableConfig = {
                        "configurable": {
                            "thread_id": tid,
                            "checkpoint_ns": ns,
                            "checkpoint_id": checkpoint_id,
                        }
                    }
                    found.append(thread.checkpoint_tuple(ns, checkpoint_id, record, tuple_config))
        return found

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint; durable when this returns."""
        configurable = config["configurable"]
        with self._lock:
            self._writable(configurable["thread_id"]).put(
                config, checkpoint, metadata, new_versions
            )
        return {
            "configurable": {
                "thread_id": configurable["thread_id"],
                "checkpoint_ns": configurable.get("checkpoint_ns", ""),
                "checkpoint_id": checkpoint["id"],
            }
        }

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes; durable when this returns."""
        with self._lock:
            thread = self._writable(config["configurable"]["thread_id"])
            thread.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """Remove a thread and every event of it from the store (``Store.delete``)."""
        with self._lock:
            self._release(thread_id)
            with contextlib.suppress(SessionNotFound):
                self.store.delete(session_id(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread with every checkpoint and write (an agentlog fork of its session).

        Raises:
            ValueError: when the target thread already exists.
        """
        with self._lock:
            try:
                child = self.store.fork(
                    session_id(source_thread_id), child_id=session_id(target_thread_id)
                )
            except SessionForkError as exc:
                if exc.code == "SESSION_ALREADY_EXISTS":
                    raise ValueError(f"thread {target_thread_id!r} already exists") from exc
                if exc.code == "SESSION_NOT_FOUND":
                    return
                raise
            self._threads[child.id] = Thread(child, self.serde)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Take every checkpoint of these runs out of its thread's view, in every thread.

        The events stay in the log (agentlog never deletes history outside ``delete_thread``);
        reads no longer see the checkpoints or their writes.
        """
        runs = set(run_ids)
        if not runs:
            return
        with self._lock:
            for tid in self._thread_ids():
                thread = self._readable(tid)
                if thread is None:
                    continue
                doomed = [
                    (ns, checkpoint_id)
                    for ns, records in thread.index.checkpoints.items()
                    for checkpoint_id, record in records.items()
                    if thread.metadata(record).get("run_id") in runs
                ]
                if doomed:
                    self._writable(tid).remove(doomed)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Prune threads, by ``strategy``.

        ``keep_latest`` hides all but each namespace's newest checkpoint (their events stay in
        the log); ``delete`` removes the threads (``delete_thread``).

        Raises:
            ValueError: for another strategy.
        """
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}; use keep_latest or delete")
        with self._lock:
            for tid in thread_ids:
                if strategy == "delete":
                    self.delete_thread(tid)
                    continue
                thread = self._readable(tid)
                if thread is None:
                    continue
                doomed = [
                    (ns, checkpoint_id)
                    for ns, records in thread.index.checkpoints.items()
                    for checkpoint_id in sorted(records)[:-1]
                ]
                if doomed:
                    self._writable(tid).remove(doomed)

    # --- async twins: the same work in a worker thread ----------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """``get_tuple``, awaited."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,  # LangGraph's parameter name
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """``list``, awaited."""
        found = await asyncio.to_thread(self._locked_list, config, filter, before, limit)
        for item in found:
            yield item

    def _locked_list(
        self,
        config: RunnableConfig | None,
        query: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> builtins.list[CheckpointTuple]:
        with self._lock:
            return self._list(config, query, before, limit)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """``put``, awaited."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """``put_writes``, awaited."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """``delete_thread``, awaited."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """``copy_thread``, awaited."""
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """``delete_for_runs``, awaited."""
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``prune``, awaited."""
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)

    # --- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        """Close every open thread, and the store if this checkpointer opened it."""
        with self._lock:
            while self._threads:
                _, live = self._threads.popitem()
                live.session.close()
            if self._owns_store:
                self.store.close()

    def __enter__(self) -> AgentlogCheckpointer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> AgentlogCheckpointer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.to_thread(self.close)
