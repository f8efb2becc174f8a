"""``Worker``: calls run on its one thread, in order, with their results, errors and context."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from agentlog.adapters._adk_worker import Worker

_NAME: contextvars.ContextVar[str] = contextvars.ContextVar("name", default="unset")


def test_calls_run_in_order_on_one_thread_and_return_their_results() -> None:
    worker = Worker("test-worker")
    ran: list[tuple[int, str]] = []

    def job(index: int) -> int:
        ran.append((index, threading.current_thread().name))
        return index * 2

    async def main() -> list[int]:
        return list(await asyncio.gather(*(worker.call(job, index) for index in range(20))))

    assert asyncio.run(main()) == [index * 2 for index in range(20)]
    assert ran == [(index, "test-worker") for index in range(20)]
    worker.close()


def test_an_exception_reaches_the_caller_and_the_worker_goes_on() -> None:
    worker = Worker("test-worker")

    def fail() -> None:
        raise KeyError("missing")

    async def main() -> int:
        with pytest.raises(KeyError, match="missing"):
            await worker.call(fail)
        return await worker.call(lambda: 7)

    assert asyncio.run(main()) == 7
    worker.close()


def test_a_call_runs_in_the_callers_context() -> None:
    worker = Worker("test-worker")

    async def main() -> str:
        _NAME.set("caller")
        return await worker.call(_NAME.get)

    assert asyncio.run(main()) == "caller"
    worker.close()


def test_a_cancelled_caller_does_not_stop_the_call_nor_the_worker() -> None:
    worker = Worker("test-worker")
    started, release = threading.Event(), threading.Event()
    done: list[str] = []

    def slow() -> None:
        started.set()
        release.wait(5)
        done.append("slow")

    async def main() -> str:
        task = asyncio.ensure_future(worker.call(slow))
        await asyncio.to_thread(started.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        return await worker.call(lambda: "next")

    assert asyncio.run(main()) == "next"
    assert done == ["slow"]  # the call ran to its end: what it wrote is written
    worker.close()


def test_close_stops_the_thread_after_the_queued_calls_and_a_call_restarts_it() -> None:
    worker = Worker("test-worker-restart")

    def running() -> int:
        return sum(thread.name == "test-worker-restart" for thread in threading.enumerate())

    async def main() -> int:
        return await worker.call(running)

    assert asyncio.run(main()) == 1
    worker.close()
    assert running() == 0
    worker.close()  # closing twice is harmless
    assert asyncio.run(main()) == 1  # another loop, a new thread
    worker.close()
