"""``postgresql://…`` for ``agentlog.aio``: the PostgreSQL store on psycopg's async connections.

Implements DESIGN.md decision 9 ("sync core, async edges") for PostgreSQL: the twin of
``PostgresBackend`` (``agentlog.stores.postgres``) as an ``AsyncBackend``. Every statement,
every decision between statements and every error is the sync store's, written once in the
``_pg_*`` modules (``_pg_steps``): the fenced one-statement append, its refusal and its
read-back after a lost connection, the lease take, reads, lists, deletes, the schema check.
This module only runs them, awaited, on an ``AsyncConnectionPool`` — no worker thread is
involved — and renews leases with an asyncio task (``AsyncLeaseKeeper``).

Durability is the sync store's: an append returns after the server has committed it, and an
append whose COMMIT outcome was lost is read back (landed: success, never written twice; not
landed: sent again). The schema, the lease rows and the ``NOTIFY`` per committed append are the
same, so sync and async workers share one store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Self, TypeVar

try:
    import psycopg
    from psycopg_pool import AsyncConnectionPool
except ImportError as exc:  # pragma: no cover - exercised by a test without the extra
    raise ImportError(
        f"PostgreSQL stores need the postgres extra: pip install 'agentlog[postgres]' ({exc})"
    ) from exc
import zstandard

from agentlog.stores import _pg_queries as queries
from agentlog.stores._pg_append import AppendPlan, Refused, pack_data, unpack_data
from agentlog.stores._pg_errors import connection_lost, pg_errors
from agentlog.stores._pg_lease import AsyncLeaseKeeper, AsyncPostgresLease
from agentlog.stores._pg_schema import ensure_schema
from agentlog.stores._pg_steps import Run, run_async
from agentlog.stores._pg_url import configure_statements, parse_postgres_url
from agentlog.stores.aio_base import AsyncBackend, AsyncLease
from agentlog.stores.base import SessionInfo, StoredLog
from agentlog.stores.postgres import ATTEMPTS
from agentlog.stores.read_only import read_only_error
from agentlog.stores.url import StoreURL
from agentlog.values import JsonValue

__all__ = ["AsyncPostgresBackend"]

_T = TypeVar("_T")


class AsyncPostgresBackend(AsyncBackend):
    """Sessions in one PostgreSQL schema, for asyncio code (``PostgresBackend``'s twin)."""

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        """Not connected yet: ``connect`` (awaited) opens the store."""
        parsed = parse_postgres_url(url)
        self.url = url
        self.location = parsed.display
        self.schema = parsed.schema
        self._conninfo = parsed.conninfo
        self._read_only = read_only or parsed.read_only
        self._lease_seconds = parsed.lease_seconds
        # One compressor: the backend runs on one event loop thread.
        self._compressor = zstandard.ZstdCompressor(level=3)
        self._pool = AsyncConnectionPool(
            parsed.conninfo,
            min_size=1,
            max_size=8,
            kwargs={"autocommit": True},
            configure=self._configure,
            name=f"agentlog-aio:{self.schema}",
            open=False,
        )
        self._leases = AsyncLeaseKeeper(self._pool.connection, seconds=parsed.lease_seconds)

    @classmethod
    async def connect(cls, url: StoreURL, *, read_only: bool = False) -> Self:
        """The store a ``postgresql://`` URL names (its schema created unless read-only)."""
        backend = cls(url.url, read_only=read_only or url.read_only)
        where = backend.location
        with pg_errors(where):
            # One plain connection first, as the sync store: a refused or unreachable server is
            # reported with its real cause at once, and the schema is checked.
            async with await psycopg.AsyncConnection.connect(
                backend._conninfo, autocommit=True
            ) as first:
                await run_async(
                    first, ensure_schema(backend.schema, create=not backend._read_only, store=where)
                )
            await backend._pool.open()
        return backend

    async def _configure(self, connection: psycopg.AsyncConnection[Any]) -> None:
        """Set up a pooled connection as ``PostgresBackend`` does (``configure_statements``)."""
        for statement in configure_statements(self.schema, self._lease_seconds):
            await connection.execute(statement)

    async def _run(self, operation: Run[_T], session_id: str | None = None) -> _T:
        """Run a shared operation on a pooled connection, its errors translated."""
        with pg_errors(self.location, session_id):
            async with self._pool.connection() as connection:
                return await run_async(connection, operation)

    def _writable(self, session_id: str) -> None:
        if self._read_only:  # the refusal of the sync store's ReadOnlyBackend
            raise read_only_error(self.url, session_id)

    # --- the contract -----------------------------------------------------------------------

    async def exists(self, session_id: str) -> bool:
        """Whether the session has a row."""
        return await self._run(queries.exists(session_id), session_id)

    async def read(self, session_id: str, from_seq: int = 0) -> StoredLog:
        """The header and the event rows from ``from_seq`` on, from one snapshot."""
        return await self._run(
            queries.read_log(session_id, from_seq, location=self.location, unpack=unpack_data),
            session_id,
        )

    async def lease(self, session_id: str) -> AsyncLease:
        """Take the session's lease row (``SessionLocked`` while a live writer holds it)."""
        self._writable(session_id)
        with pg_errors(self.location, session_id):
            return await self._leases.take(session_id)

    async def append(
        self,
        lease: AsyncLease,
        header: Mapping[str, JsonValue],
        events: Sequence[Mapping[str, Any]],
        *,
        next_seq: int,
    ) -> None:
        """``PostgresBackend.append``, awaited: the same fenced statements and read-back."""
        session_id = str(header["id"])
        self._writable(session_id)
        plan = AppendPlan.of(
            schema=self.schema,
            header=header,
            events=events,
            next_seq=next_seq,
            lease=lease if isinstance(lease, AsyncPostgresLease) else None,
            lease_seconds=self._lease_seconds,
            pack=lambda data: pack_data(data, self._compressor),
        )
        with pg_errors(self.location, session_id):
            for tries in range(1, ATTEMPTS + 1):
                connection = None
                try:
                    async with self._pool.connection() as connection:
                        await run_async(connection, plan.attempt())
                    return
                except (Refused, psycopg.IntegrityError):
                    async with self._pool.connection() as connection:
                        raise await run_async(connection, plan.refusal()) from None
                except psycopg.Error as exc:
                    if tries == ATTEMPTS or not connection_lost(exc, connection):
                        raise
                    # The outcome of this attempt is unknown (the connection went, perhaps at
                    # COMMIT): what is stored at those seqs says whether it landed.
                    async with self._pool.connection() as connection:
                        if await run_async(connection, plan.landed()):
                            return

    async def delete(self, lease: AsyncLease, session_id: str) -> None:
        """One transaction removes the session's events and its row; then the lease goes."""
        self._writable(session_id)
        await self._run(queries.delete_session(session_id), session_id)
        await lease.release()

    async def list(self) -> list[SessionInfo]:
        """Every session row."""
        return await self._run(queries.list_sessions())

    async def list_page(
        self,
        *,
        cwd: str | None,
        updated_since: int | None,
        after: tuple[int, str] | None,
        limit: int,
    ) -> Sequence[SessionInfo]:
        """One page by keyset on ``(created_at, id)``, served by the sessions' indexes."""
        return await self._run(
            queries.list_page(cwd=cwd, updated_since=updated_since, after=after, limit=limit)
        )

    async def close(self) -> None:
        """Release every lease, stop renewing them and close the connections."""
        await self._leases.close()
        await self._pool.close()
