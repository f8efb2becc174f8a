"""Writer leases of the PostgreSQL store: one writer per session across hosts.

Implements DESIGN.md, Reliability ("PostgreSQL: a lease that expires, plus the expected-seq
fence"). A lease is a row of ``leases`` naming its owner (host, pid and a random token) and an
expiry. Taking it is ``INSERT … ON CONFLICT DO NOTHING``; a row already there belongs to a
live writer — ``SessionLocked`` — unless it has expired, or its owner is a process of this very
host that no longer exists (a ``kill -9``'d worker on the same machine need not wait out the
expiry). Then the row is taken over, under its row lock, and the taker's ``open`` writes the
repair closers of the turn the dead writer left open.

A ``LeaseKeeper`` thread renews every lease its backend holds (every third of the lease time),
so an idle but live writer keeps its session; each append also renews its lease inside the
append's transaction and fails with ``SessionLocked`` if the row is no longer its own, so a
writer that stalled past its expiry (and was taken over) can never write again.

``AsyncLeaseKeeper`` is its twin for ``agentlog.aio``: the same take (``take``, a
``_pg_steps.Run``), renewed by an asyncio task instead of a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import threading
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, Final, Protocol

import psycopg

from agentlog.errors import SessionLocked
from agentlog.stores._pg_steps import Run, Statement, Steps, run, run_async
from agentlog.stores.aio_base import AsyncLease
from agentlog.stores.base import Lease

__all__ = [
    "OURS",
    "RENEW",
    "AsyncLeaseKeeper",
    "AsyncPostgresLease",
    "LeaseKeeper",
    "LeaseRow",
    "PostgresLease",
    "take",
]

RENEW: Final = (
    "UPDATE leases SET expires_at = now() + make_interval(secs => %s) "
    "WHERE session_id = %s AND token = %s"
)
"""Extend a lease that is still this owner's (0 rows: it was taken over)."""
_TAKE: Final = (
    "INSERT INTO leases VALUES (%s, %s, %s, %s, now() + make_interval(secs => %s)) "
    "ON CONFLICT (session_id) DO NOTHING"
)
_HOLDER: Final = (
    "SELECT host, pid, expires_at <= now(), extract(epoch FROM expires_at - now()) "
    "FROM leases WHERE session_id = %s FOR UPDATE"
)
_TAKE_OVER: Final = (
    "UPDATE leases SET host = %s, pid = %s, token = %s, "
    "expires_at = now() + make_interval(secs => %s) WHERE session_id = %s"
)
OURS: Final = "SELECT 1 FROM leases WHERE session_id = %s AND token = %s"
"""Whether the lease row is still this owner's (a take whose outcome was lost is read back)."""
_DROP: Final = "DELETE FROM leases WHERE session_id = %s AND token = %s"

Connect = Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
AsyncConnect = Callable[[], AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]]
Owner = tuple[str, int, str, float]
"""``(host, pid, token, seconds)``: who takes a lease, and for how long."""


class LeaseRow(Protocol):
    """A held lease as the append fences on it: its session and its owner's token."""

    @property
    def session_id(self) -> str:
        """The session leased."""
        ...

    @property
    def token(self) -> str:
        """The owner's random token."""
        ...


def new_owner(seconds: float) -> Owner:
    """This process as the owner of a new lease (a fresh token per take)."""
    return (socket.gethostname(), os.getpid(), secrets.token_hex(16), seconds)


def take(session_id: str, owner: Owner) -> Run[None]:
    """One transaction that takes the lease for ``owner``.

    Raises (when run):
        SessionLocked: naming the holder, when a live writer holds it.
    """
    return Run(_take(session_id, owner), transaction=True)


def _take(session_id: str, owner: Owner) -> Steps[None]:
    (taken,) = yield [Statement(_TAKE, (session_id, *owner))]
    if taken == 1:
        return
    (holder,) = yield [Statement(_HOLDER, (session_id,), "one")]
    if holder is not None and not may_take_over(owner[0], *holder[:3]):
        host, pid, _, remaining = holder
        raise SessionLocked(
            f'session "{session_id}" is open for writing by another writer (lease '
            f"of {host} pid {pid}, expires in {max(float(remaining), 0):.1f} s)",
            session_id=session_id,
        )
    if holder is None:
        yield [Statement(_TAKE, (session_id, *owner))]
    else:
        yield [Statement(_TAKE_OVER, (*owner, session_id))]


def may_take_over(this_host: str, host: str, pid: int, expired: bool) -> bool:
    """An expired lease, or one of a process of this host that is gone."""
    if expired:
        return True
    if host != this_host:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


class PostgresLease(Lease):
    """A held lease row; ``release`` deletes it (idempotent)."""

    def __init__(self, keeper: LeaseKeeper, session_id: str, token: str) -> None:
        self.session_id = session_id
        self.token = token
        self._keeper = keeper

    def release(self) -> None:
        """Delete the lease row, so another writer may take the session at once."""
        self._keeper.release(self)


class LeaseKeeper:
    """Takes, renews (on a thread) and releases the leases of one backend."""

    def __init__(self, connect: Connect, *, seconds: float, store: str) -> None:
        self.seconds = seconds
        self._connect = connect
        self._store = store
        self._held: dict[str, PostgresLease] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def take(self, session_id: str) -> PostgresLease:
        """Take the lease of ``session_id`` (whether or not it exists yet).

        Raises:
            SessionLocked: naming the holder, when a live writer holds it.
        """
        owner = new_owner(self.seconds)
        try:
            with self._connect() as connection:
                run(connection, take(session_id, owner))
        except psycopg.OperationalError:
            # The connection went, perhaps at COMMIT: the lease row says whether the take
            # landed (an orphaned lease of this live process would lock it out until expiry).
            with self._connect() as connection:
                ours = connection.execute(OURS, (session_id, owner[2])).fetchone() is not None
            if not ours:
                with self._connect() as connection:
                    run(connection, take(session_id, owner))
        lease = PostgresLease(self, session_id, owner[2])
        with self._lock:
            self._held[lease.token] = lease
            self._start()
        return lease

    def release(self, lease: PostgresLease) -> None:
        """Delete ``lease``'s row; a failure leaves it to expire."""
        with self._lock:
            if self._held.pop(lease.token, None) is None:
                return
        with contextlib.suppress(psycopg.Error), self._connect() as connection:
            connection.execute(_DROP, (lease.session_id, lease.token))

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._renew_forever, name="agentlog-pg-leases", daemon=True
            )
            self._thread.start()

    def _renew_forever(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            with self._lock:
                held = list(self._held.values())
            if not held:
                continue
            # A failed renewal (server away) is tried again next time; the append's own
            # in-transaction renewal is what fences a writer whose lease was taken over.
            with contextlib.suppress(psycopg.Error), self._connect() as connection:
                for lease in held:
                    connection.execute(RENEW, (self.seconds, lease.session_id, lease.token))

    def close(self) -> None:
        """Stop renewing and release every held lease."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            held = list(self._held.values())
        for lease in held:
            lease.release()


class AsyncPostgresLease(AsyncLease):
    """A held lease row of an ``agentlog.aio`` store; ``release`` deletes it (idempotent)."""

    def __init__(self, keeper: AsyncLeaseKeeper, session_id: str, token: str) -> None:
        self.session_id = session_id
        self.token = token
        self._keeper = keeper

    async def release(self) -> None:
        """Delete the lease row, so another writer may take the session at once."""
        await self._keeper.release(self)


class AsyncLeaseKeeper:
    """``LeaseKeeper`` for an async connection pool: renewed by an asyncio task, not a thread."""

    def __init__(self, connect: AsyncConnect, *, seconds: float) -> None:
        self.seconds = seconds
        self._connect = connect
        self._held: dict[str, AsyncPostgresLease] = {}
        self._task: asyncio.Task[None] | None = None

    async def take(self, session_id: str) -> AsyncPostgresLease:
        """Take the lease of ``session_id`` (``LeaseKeeper.take``, awaited).

        Raises:
            SessionLocked: naming the holder, when a live writer holds it.
        """
        owner = new_owner(self.seconds)
        try:
            async with self._connect() as connection:
                await run_async(connection, take(session_id, owner))
        except psycopg.OperationalError:
            # As in LeaseKeeper.take: a take whose COMMIT outcome was lost is read back.
            async with self._connect() as connection:
                cursor = await connection.execute(OURS, (session_id, owner[2]))
                ours = await cursor.fetchone() is not None
            if not ours:
                async with self._connect() as connection:
                    await run_async(connection, take(session_id, owner))
        lease = AsyncPostgresLease(self, session_id, owner[2])
        self._held[lease.token] = lease
        if self._task is None:
            self._task = asyncio.create_task(self._renew_forever(), name="agentlog-pg-leases")
        return lease

    async def release(self, lease: AsyncPostgresLease) -> None:
        """Delete ``lease``'s row; a failure leaves it to expire."""
        if self._held.pop(lease.token, None) is None:
            return
        with contextlib.suppress(psycopg.Error):
            async with self._connect() as connection:
                await connection.execute(_DROP, (lease.session_id, lease.token))

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self.seconds / 3)
            held = list(self._held.values())
            if not held:
                continue
            # As in LeaseKeeper: a failed renewal is tried again next time; the append's own
            # renewal fences a writer whose lease was taken over.
            with contextlib.suppress(psycopg.Error):
                async with self._connect() as connection:
                    for lease in held:
                        await connection.execute(
                            RENEW, (self.seconds, lease.session_id, lease.token)
                        )

    async def close(self) -> None:
        """Stop renewing and release every held lease."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for lease in list(self._held.values()):
            await lease.release()
