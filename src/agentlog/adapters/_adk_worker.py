"""The thread ``AgentlogSessionService`` runs its synchronous work on, one call at a time.

Every call of the service's engine (``AdkSessions``) runs under one lock, so a pool of threads
buys no parallelism; what it costs is the hand-off. ``asyncio.to_thread`` goes through the
loop's default executor (a work item, a ``concurrent.futures.Future`` chained to an asyncio one,
an idle-thread semaphore, possibly another thread woken): ~100 µs a call, three times per ADK
turn. ``Worker`` hands a call to its own thread through a ``SimpleQueue`` and the result back
with one ``call_soon_threadsafe``, for about a third of that. A call still returns only when
the function has returned on the worker thread (an ``append_event`` acknowledged is durable),
in the caller's ``contextvars`` context, as ``asyncio.to_thread`` runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Worker"]

T = TypeVar("T")

_Job = tuple[
    contextvars.Context, Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, Any
]


class Worker:
    """A daemon thread, started at the first call, running calls in the order they came."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` on the worker thread; its result or its exception."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._start()
        self._jobs.put((contextvars.copy_context(), function, args, loop, future))
        return await future

    def close(self) -> None:
        """Stop the thread once the calls queued so far have run (it restarts if called)."""
        with self._guard:
            thread, self._thread = self._thread, None
            if thread is None:
                return
            self._jobs.put(None)
        if thread is not threading.current_thread():
            thread.join()

    def _start(self) -> None:
        if self._thread is None:
            with self._guard:
                if self._thread is None:
                    thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                    thread.start()
                    self._thread = thread

    def _run(self) -> None:
        jobs = self._jobs
        while True:
            job = jobs.get()
            if job is None:
                return
            _run_one(*job)  # a call of its own: nothing of the job outlives it


def _run_one(
    context: contextvars.Context,
    function: Callable[..., Any],
    args: tuple[Any, ...],
    loop: asyncio.AbstractEventLoop,
    future: Any,
) -> None:
    try:
        result = context.run(function, *args)
    except BaseException as exc:  # every outcome goes to the caller, as to_thread's does
        _deliver(loop, future.set_exception, future, exc)
    else:
        _deliver(loop, future.set_result, future, result)


def _deliver(loop: asyncio.AbstractEventLoop, settle: Any, future: Any, value: Any) -> None:
    def settled() -> None:
        if not future.done():  # the caller was cancelled meanwhile
            settle(value)

    # A closed loop refuses the callback: nobody waits for the outcome any more.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settled)
