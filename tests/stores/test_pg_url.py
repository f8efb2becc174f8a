"""``postgresql://`` URLs: libpq's URI passes through; ``schema``, ``lease_seconds`` and
``mode`` are agentlog's, taken out before connecting; a password never shows in messages."""

from __future__ import annotations

import pytest

from agentlog.errors import StoreError
from agentlog.stores._pg_url import DEFAULT_LEASE_SECONDS, DEFAULT_SCHEMA, parse_postgres_url


def test_defaults() -> None:
    parsed = parse_postgres_url("postgresql://u@h:5433/db")
    assert parsed.conninfo == "postgresql://u@h:5433/db"
    assert (parsed.schema, parsed.lease_seconds, parsed.read_only) == (
        DEFAULT_SCHEMA,
        DEFAULT_LEASE_SECONDS,
        False,
    )


def test_agentlog_parameters_are_taken_out_and_libpq_ones_kept() -> None:
    parsed = parse_postgres_url(
        "postgres://u:pw@h/db?sslmode=disable&schema=fleet_1&lease_seconds=2.5&mode=ro"
        "&application_name=worker%201"
    )
    assert parsed.conninfo == "postgres://u:pw@h/db?sslmode=disable&application_name=worker%201"
    assert (parsed.schema, parsed.lease_seconds, parsed.read_only) == ("fleet_1", 2.5, True)
    assert "pw" not in parsed.display
    assert parsed.display.startswith("postgres://u:***@h/db?")


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://h/db?schema=1abc",
        "postgresql://h/db?schema=a.b",
        "postgresql://h/db?schema=" + "a" * 64,
        "postgresql://h/db?lease_seconds=nan",
        "postgresql://h/db?lease_seconds=100000",
        "postgresql://h/db?mode=",
        "mysql://h/db",
    ],
)
def test_bad_parameters_are_refused(url: str) -> None:
    with pytest.raises(StoreError):
        parse_postgres_url(url)
