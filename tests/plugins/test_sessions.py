"""The sessions plugins work on: a ``Session`` behind the async protocol, or an aio session.

``as_async`` runs a plain ``Session``'s calls inline — on the calling thread, with nothing
awaited in between — so one plugin body serves both kinds of session, and a group commit on it
is the session's own ``batch()``. A synchronous entry point refuses an aio session by name.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from agentlog import aio
from agentlog import messages as m
from agentlog.plugins.sessions import AsyncSessionLike, as_async, require_session
from tests.session.test_sink import attached


def test_a_session_runs_inline_and_a_batch_is_its_group_commit() -> None:
    session, sink = attached()
    threads: list[int] = []
    session.add_observer(lambda _s, _e: threads.append(threading.get_ident()))

    async def scenario() -> None:
        writer = as_async(session)
        assert writer.sync is session
        async with writer.batch():
            await writer.append("turn/start", {"turn": 1})
            await writer.append("user/message", m.user("hi", id="u1"), surface_op="append")
            assert sink.releases == []  # held until the block's end
        await writer.flush()

    asyncio.run(scenario())
    assert [event.type for event in sink.persisted] == ["turn/start", "user/message"]
    assert sink.releases == [True]
    assert threads == [threading.get_ident()] * 2


def test_an_aio_session_is_used_as_it_is(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with await aio.open_store(f"jsonl:///{tmp_path}") as store:
            session = await store.create("s")
            writer: AsyncSessionLike = session
            assert as_async(session) is writer

    asyncio.run(scenario())


def test_a_synchronous_entry_point_names_the_twin_of_an_aio_session() -> None:
    with pytest.raises(TypeError) as refused:
        require_session(object(), "prune_tool_results")
    assert str(refused.value) == (
        "prune_tool_results() needs a Session, got object; for an agentlog.aio session use: "
        "await agentlog.aio.prune_tool_results(session, ...)"
    )
    session, _ = attached()
    require_session(session, "prune_tool_results")
