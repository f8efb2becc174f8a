"""The PostgreSQL store's operations written once, run on a sync or an async connection.

Implements the sync/async twin rule of DESIGN.md decision 9 for PostgreSQL ("sync core, async
edges"): every multi-statement operation of the store — the fenced append, its refusal and its
read-back after a lost connection, taking a lease, reading a log, creating the schema — is a
generator (``Steps``). It yields a *flight* of ``Statement`` objects and is sent back their
results, in order (a row count, one row or ``None``, or every row), and returns the outcome or
raises the agentlog error. It does no I/O, so the SQL text, the decisions between statements and
the errors (and their texts) are the same for both stores; only ``run`` (``psycopg.Connection``)
and ``run_async`` (``psycopg.AsyncConnection``) execute, each in the ``Run`` settings the
operation asks for: inside one transaction, and in pipeline mode (a flight sent in one round
trip, its results read at the pipeline's sync).

A statement of a flight runs after the ones before it (pipeline mode only batches the round
trips), and an exception — the generator's own (a refusal) or the driver's — leaves the
transaction, which then rolls back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Mapping, Sequence
from typing import Any, Generic, Literal, NamedTuple, TypeVar

import psycopg

__all__ = ["Run", "Statement", "Steps", "run", "run_async"]

_T = TypeVar("_T")

Fetch = Literal["rowcount", "one", "all"]


class Statement(NamedTuple):
    """One statement of a flight, and what of its result the operation needs back."""

    sql: Any
    """The statement: text with ``%s`` / ``%b`` / ``%(name)s`` markers, or ``psycopg.sql``."""
    params: Sequence[Any] | Mapping[str, Any] | None = None
    fetch: Fetch = "rowcount"
    """``rowcount`` (an int), ``one`` (a row tuple or ``None``) or ``all`` (a list of rows)."""
    binary: bool = False
    """Results in binary: ``bytea`` as raw bytes, not hex text to decode."""


Steps = Generator[list[Statement], list[Any], _T]
"""An operation: yields flights of statements, is sent their results, returns its outcome."""


class Run(NamedTuple, Generic[_T]):
    """An operation and how to run it."""

    steps: Steps[_T]
    transaction: bool = False
    """Inside one transaction (``BEGIN`` … ``COMMIT``; rolled back when anything raises)."""
    pipeline: bool = False
    """In pipeline mode: each flight goes in one round trip."""


def run(connection: psycopg.Connection[Any], operation: Run[_T]) -> _T:
    """Run ``operation`` on a sync connection (in autocommit mode, as the store's are)."""
    steps = operation.steps
    with contextlib.ExitStack() as stack:
        pipeline = stack.enter_context(connection.pipeline()) if operation.pipeline else None
        if operation.transaction:
            stack.enter_context(connection.transaction())
        results: list[Any] | None = None
        while True:
            try:
                flight = steps.send(results) if results is not None else next(steps)
            except StopIteration as stop:
                outcome: _T = stop.value
                return outcome
            cursors = [
                connection.cursor(binary=statement.binary).execute(statement.sql, statement.params)
                for statement in flight
            ]
            if pipeline is not None:
                pipeline.sync()
            results = [
                _result(statement, cursor)
                for statement, cursor in zip(flight, cursors, strict=True)
            ]


async def run_async(connection: psycopg.AsyncConnection[Any], operation: Run[_T]) -> _T:
    """Run ``operation`` on an async connection: ``run``, awaited on the event loop."""
    steps = operation.steps
    if not (operation.pipeline or operation.transaction):
        # The common durable append (one statement in autocommit): no exit stack, no pipeline
        # and no transaction to enter, so none of their per-call machinery.
        return await _drive_async(connection, steps, None)
    async with contextlib.AsyncExitStack() as stack:
        pipeline = (
            await stack.enter_async_context(connection.pipeline()) if operation.pipeline else None
        )
        if operation.transaction:
            await stack.enter_async_context(connection.transaction())
        return await _drive_async(connection, steps, pipeline)


async def _drive_async(
    connection: psycopg.AsyncConnection[Any],
    steps: Steps[_T],
    pipeline: psycopg.AsyncPipeline | None,
) -> _T:
    """Send ``steps`` its flights' results until it returns (``run_async``'s loop)."""
    results: list[Any] | None = None
    while True:
        try:
            flight = steps.send(results) if results is not None else next(steps)
        except StopIteration as stop:
            outcome: _T = stop.value
            return outcome
        cursors = [
            await connection.cursor(binary=statement.binary).execute(
                statement.sql, statement.params
            )
            for statement in flight
        ]
        if pipeline is not None:
            await pipeline.sync()
        results = [
            await _result_async(statement, cursor)
            for statement, cursor in zip(flight, cursors, strict=True)
        ]


def _result(statement: Statement, cursor: psycopg.Cursor[Any]) -> Any:
    if statement.fetch == "one":
        return cursor.fetchone()
    if statement.fetch == "all":
        return cursor.fetchall()
    return cursor.rowcount


async def _result_async(statement: Statement, cursor: psycopg.AsyncCursor[Any]) -> Any:
    if statement.fetch == "one":
        return await cursor.fetchone()
    if statement.fetch == "all":
        return await cursor.fetchall()
    return cursor.rowcount
