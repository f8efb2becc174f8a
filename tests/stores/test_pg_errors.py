"""psycopg errors become agentlog errors that say the real cause (STYLE.md §16).

Every driver exception class the PostgreSQL store can meet is mapped, by SQLSTATE, to words;
the message names the store and the session, and the driver error is kept as ``__cause__``.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from agentlog.errors import StoreError
from agentlog.stores._pg_errors import connection_lost, pg_cause, pg_errors


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (errors.DiskFull, "disk full"),
        (errors.OutOfMemory, "the server is out of memory"),
        (errors.TooManyConnections, "too many connections to the server"),
        (errors.InsufficientPrivilege, "permission denied"),
        (errors.InvalidPassword, "authentication failed (wrong password)"),
        (errors.InvalidCatalogName, "no such database"),
        (errors.ReadOnlySqlTransaction, "the server is read-only"),
        (errors.IdleInTransactionSessionTimeout, "the transaction was idle too long"),
        (errors.QueryCanceled, "the statement was cancelled"),
        (errors.AdminShutdown, "the server terminated the connection"),
        (errors.CrashShutdown, "the server crashed"),
        (errors.SerializationFailure, "serialization failure"),
        (errors.DeadlockDetected, "deadlock detected"),
        (errors.ProgramLimitExceeded, "a value is too big for PostgreSQL"),
        (errors.CharacterNotInRepertoire, "a string PostgreSQL cannot store"),
        (errors.ConnectionFailure, "connection to the server lost"),
        (errors.DiskFull.__mro__[1], "cannot reach the server"),  # OperationalError, no SQLSTATE
        (errors.IoError, "the server had an I/O error"),
        (errors.InternalError_, "internal server error"),
    ],
)
def test_each_driver_error_is_named_by_its_cause(error: type[Exception], cause: str) -> None:
    message = "could not connect: no route" if cause == "cannot reach the server" else "boom"
    with pytest.raises(StoreError) as raised, pg_errors("postgresql://h/db", "s1"):
        raise error(message)
    text = str(raised.value)
    assert text.startswith("PostgreSQL store 'postgresql://h/db' (session \"s1\"): ")
    assert f": {cause}" in text
    assert raised.value.session_id == "s1"
    assert isinstance(raised.value.__cause__, error)


def test_an_error_without_a_known_cause_keeps_its_class_and_text() -> None:
    assert pg_cause(errors.UndefinedTable('relation "x" does not exist')) == (
        'UndefinedTable: relation "x" does not exist'
    )


def test_a_string_the_server_cannot_take_is_named() -> None:
    with pytest.raises(StoreError, match="a string PostgreSQL cannot store"), pg_errors("x"):
        "\ud800".encode()


def test_agentlog_errors_pass_through_unchanged() -> None:
    with pytest.raises(KeyError), pg_errors("x"):
        raise KeyError("not a driver error")


def test_connection_loss_is_told_from_a_refused_statement() -> None:
    assert connection_lost(errors.AdminShutdown("terminated"), None)
    assert connection_lost(psycopg.OperationalError("server closed the connection"), None)
    assert connection_lost(errors.ConnectionFailure("gone"), None)
    assert not connection_lost(errors.UniqueViolation("duplicate key"), None)
    assert not connection_lost(errors.DiskFull("full"), None)
