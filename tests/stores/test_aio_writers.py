"""The sink of a session of an async-native store: awaited durable appends, group commits,
write-behind on an asyncio timer, and the synchronous ``Sink`` calls it refuses.

Driven against a recording ``AsyncBackend`` (as ``test_writer.py`` drives ``Writer``), so each
test sees exactly which batches reached storage, and can make a write fail.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Self

import pytest

from agentlog import Session
from agentlog.errors import StoreError
from agentlog.stores import SessionInfo, StoredLog
from agentlog.stores.aio_base import AsyncBackend, AsyncLease
from agentlog.stores.aio_writer import AsyncWriter
from agentlog.stores.url import StoreURL
from agentlog.values import JsonValue
from tests.stores.contract import clock


class RecordingLease(AsyncLease):
    def __init__(self) -> None:
        self.released = 0

    async def release(self) -> None:
        self.released += 1


class RecordingBackend(AsyncBackend):
    """Stores nothing; records each batch (its seqs) and fails on demand."""

    url = location = "recording:"

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.failures: list[Exception] = []

    @classmethod
    async def connect(cls, url: StoreURL, *, read_only: bool = False) -> Self:
        return cls()

    async def exists(self, session_id: str) -> bool:
        return False

    async def read(self, session_id: str, from_seq: int = 0) -> StoredLog:
        raise AssertionError("not read")

    async def lease(self, session_id: str) -> AsyncLease:
        return RecordingLease()

    async def append(
        self,
        lease: AsyncLease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        await asyncio.sleep(0)  # a real await: other tasks run meanwhile
        if self.failures:
            raise self.failures.pop(0)
        assert [event["seq"] for event in events] == list(range(next_seq, next_seq + len(events)))
        self.batches.append([event["seq"] for event in events])

    async def delete(self, lease: AsyncLease, session_id: str) -> None:
        raise AssertionError("not deleted")

    async def list(self) -> list[SessionInfo]:
        return []

    async def list_page(
        self,
        *,
        cwd: str | None,
        updated_since: int | None,
        after: tuple[int, str] | None,
        limit: int,
    ) -> Sequence[SessionInfo]:
        return []

    async def close(self) -> None:
        pass


def attached(backend: RecordingBackend, delay: float | None = None) -> tuple[Session, AsyncWriter]:
    session = Session.create("s", clock=clock)
    writer = AsyncWriter(backend, "s", session.header, RecordingLease(), 0, batch_delay=delay)
    session.attach(writer)
    return session, writer


def test_a_failed_durable_write_leaves_the_session_unchanged() -> None:
    async def scenario() -> None:
        backend = RecordingBackend()
        session, writer = attached(backend)
        await writer.append(session, "turn/start", {"turn": 1}, None, None, False)
        backend.failures.append(StoreError("disk full"))
        with pytest.raises(StoreError, match="disk full"):
            await writer.append(session, "step/start", {"turn": 1, "step": 1}, None, None, False)
        assert session.seq == 1
        await writer.append(session, "step/start", {"turn": 1, "step": 1}, None, None, False)
        assert backend.batches == [[0], [1]]
        assert writer.stored == 2

    asyncio.run(scenario())


def test_a_group_commit_is_one_write_and_a_failed_one_goes_first_next_time() -> None:
    async def scenario() -> None:
        backend = RecordingBackend()
        session, writer = attached(backend)
        session._open_batch()
        session.append("turn/start", {"turn": 1})
        session.append("step/start", {"turn": 1, "step": 1})
        backend.failures.append(StoreError("server away"))
        with pytest.raises(StoreError):
            await writer.aflush()
        session._close_batch(write=False)
        assert session.seq == 2  # a group commit's events stay, queued
        await writer.append(session, "step/end", {"turn": 1, "step": 1}, None, None, False)
        assert backend.batches == [[0, 1, 2]]

    asyncio.run(scenario())


def test_write_behind_writes_on_a_timer_and_a_failure_is_kept_and_warned_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        backend = RecordingBackend()
        session, writer = attached(backend, delay=0.01)
        backend.failures += [StoreError("one"), StoreError("two")]
        session.append("turn/start", {"turn": 1})  # queued: no I/O, no await
        assert backend.batches == []
        await asyncio.sleep(0.2)  # the timer's write failed
        session.append("step/start", {"turn": 1, "step": 1})
        await asyncio.sleep(0.2)  # failed again: kept, not warned twice
        await writer.aflush()
        assert backend.batches == [[0, 1]]
        await writer.aclose()

    with caplog.at_level(logging.WARNING, logger="agentlog.stores"):
        asyncio.run(scenario())
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        'background write for session "s" failed (buffered events retained)'
    ]


def test_synchronous_sink_calls_name_the_awaited_ones() -> None:
    async def scenario() -> None:
        session, writer = attached(RecordingBackend())
        with pytest.raises(StoreError, match=r"await session\.append"):
            session.append("turn/start", {"turn": 1})
        with pytest.raises(StoreError, match=r"async with session\.batch"), session.batch():
            session.append("turn/start", {"turn": 1})
        with pytest.raises(StoreError, match=r"await session\.flush"):
            session.flush()
        with pytest.raises(StoreError, match=r"await session\.close"):
            session.close()
        await writer.aclose()
        session.close()  # after the awaited close: nothing left to do
        assert session.closed

    asyncio.run(scenario())


def test_a_cancelled_append_still_applies_a_write_that_landed() -> None:
    """Cancelling the appending task does not cut the write short: the session learns the
    outcome, applies a landed event, and only then the task is cancelled."""

    async def scenario() -> None:
        backend = RecordingBackend()
        session, writer = attached(backend)
        task = asyncio.create_task(
            writer.append(session, "turn/start", {"turn": 1}, None, None, False)
        )
        await asyncio.sleep(0)  # the write is under way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert backend.batches == [[0]]
        assert session.seq == 1

    asyncio.run(scenario())
