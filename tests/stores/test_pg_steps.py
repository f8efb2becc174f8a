"""One operation, two drivers: ``run`` (sync) and ``run_async`` give the same outcome.

Against the real server (``postgres_url``): a two-flight operation inside a transaction, sent
statement by statement or pipelined, returns the same through both drivers; an operation that
raises between its flights rolls its transaction back through both.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from agentlog.stores._pg_steps import Run, Statement, Steps, run, run_async
from tests.conftest import POSTGRES_SERVER
from tests.stores.pg import admin, schema_of


def counting(table: str, *, refuse: bool) -> Steps[tuple[int, list[Any], Any]]:
    (inserted,) = yield [Statement(f"INSERT INTO {table} VALUES (1), (2), (3)")]
    if refuse:
        raise LookupError("refused between flights")
    rows, biggest = yield [
        Statement(f"SELECT x FROM {table} ORDER BY x", None, "all"),
        Statement(f"SELECT max(x) FROM {table}", None, "one"),
    ]
    return inserted, rows, biggest


def drive(driver: str, operation: Run[Any]) -> Any:
    if driver == "sync":
        with psycopg.connect(POSTGRES_SERVER, autocommit=True) as connection:
            return run(connection, operation)

    async def on_async() -> Any:
        connection = await psycopg.AsyncConnection.connect(POSTGRES_SERVER, autocommit=True)
        async with connection:
            return await run_async(connection, operation)

    return asyncio.run(on_async())


@pytest.mark.parametrize("pipeline", [False, True], ids=["sent", "pipelined"])
@pytest.mark.parametrize("driver", ["sync", "async"])
def test_both_drivers_run_an_operation_alike(
    postgres_url: str, driver: str, pipeline: bool
) -> None:
    table = f"{schema_of(postgres_url)}.t"
    with admin() as connection:
        connection.execute(f"CREATE SCHEMA {schema_of(postgres_url)}")
        connection.execute(f"CREATE TABLE {table} (x int)")
    operation = Run(counting(table, refuse=False), transaction=True, pipeline=pipeline)
    assert drive(driver, operation) == (3, [(1,), (2,), (3,)], (3,))
    with pytest.raises(LookupError):
        drive(driver, Run(counting(table, refuse=True), transaction=True, pipeline=pipeline))
    with admin() as connection:  # the refused operation's insert was rolled back
        assert connection.execute(f"SELECT count(*) FROM {table}").fetchone() == (3,)
