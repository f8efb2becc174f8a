"""``postgresql://`` store URLs: libpq's connection URI plus agentlog's own query parameters.

The URL is a libpq connection URI (``postgresql://user:password@host:port/database?...``; every
libpq parameter such as ``sslmode``, ``connect_timeout`` or ``application_name`` passes through
to the driver). agentlog takes out its own parameters first:

* ``schema`` — the PostgreSQL schema holding agentlog's tables (default ``agentlog``), so one
  database can hold several independent stores;
* ``lease_seconds`` — how long a writer's lease lasts without renewal (default 30): a crashed
  worker's session can be taken over that long after its last renewal;
* ``mode=ro`` — open read-only, as for every store URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from psycopg import sql

from agentlog.errors import StoreError

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "DEFAULT_SCHEMA",
    "PostgresURL",
    "configure_statements",
    "parse_postgres_url",
]

DEFAULT_SCHEMA: Final = "agentlog"
DEFAULT_LEASE_SECONDS: Final = 30.0
_SCHEMA_NAME: Final = re.compile(r"[a-z_][a-z0-9_]{0,62}")
"""Schema names agentlog accepts: unquoted lower-case identifiers (no quoting surprises)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PostgresURL:
    """A parsed ``postgresql://`` store URL."""

    conninfo: str
    """The libpq connection URI, without agentlog's own parameters."""
    schema: str
    """The schema that holds the store's tables."""
    lease_seconds: float
    """Lifetime of a writer lease between renewals."""
    read_only: bool
    """Open without creating or writing anything."""
    display: str
    """The URL for messages, with any password masked."""


def parse_postgres_url(url: str) -> PostgresURL:
    """Split a store URL into the libpq conninfo and agentlog's parameters.

    Raises:
        StoreError: for a malformed URL, a bad ``schema`` or ``lease_seconds``, or an unknown
            ``mode``. (libpq's own parameters are checked by the driver when connecting.)
    """
    display = _masked(url)
    try:
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError as exc:
        raise StoreError(f"malformed PostgreSQL store URL {display!r}: {exc}") from exc
    if parts.scheme not in ("postgresql", "postgres"):
        raise StoreError(f"not a PostgreSQL store URL: {display!r}")
    schema, lease_seconds, read_only = DEFAULT_SCHEMA, DEFAULT_LEASE_SECONDS, False
    passed: list[tuple[str, str]] = []
    for key, value in pairs:
        if key == "schema":
            if _SCHEMA_NAME.fullmatch(value) is None:
                raise StoreError(
                    f"schema {value!r} in store URL {display!r} is not a plain lower-case SQL "
                    "name (letters, digits and _, at most 63, not starting with a digit)"
                )
            schema = value
        elif key == "lease_seconds":
            lease_seconds = _seconds(value, display)
        elif key == "mode":
            if value != "ro":
                raise StoreError(f"unknown mode {value!r} in store URL {display!r}; only mode=ro")
            read_only = True
        else:
            passed.append((key, value))
    query = "&".join(f"{quote(key, safe='')}={quote(value, safe='')}" for key, value in passed)
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))
    return PostgresURL(
        conninfo=conninfo,
        schema=schema,
        lease_seconds=lease_seconds,
        read_only=read_only,
        display=display,
    )


def configure_statements(schema: str, lease_seconds: float) -> list[sql.Composed]:
    """What every pooled connection of the store runs first (sync and async alike).

    The store's schema as the search path, and the idle-transaction limit: a transaction left
    idle (a hung worker) is ended by the server after the lease time, so the row locks it holds
    go with it.
    """
    return [
        sql.SQL("SET search_path = {}").format(sql.Identifier(schema)),
        sql.SQL("SET idle_in_transaction_session_timeout = {}").format(
            sql.Literal(int(lease_seconds * 1000))
        ),
    ]


def _seconds(value: str, display: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0.5 <= seconds <= 86_400:
        raise StoreError(
            f"lease_seconds={value!r} in store URL {display!r} must be a number of seconds from "
            "0.5 to 86400"
        )
    return seconds


def _masked(url: str) -> str:
    """The URL with its password replaced by ``***`` (messages never show secrets)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url.split("@", 1)[-1] if "@" in url else url
    if not password:
        return url
    netloc = parts.netloc.replace(f":{password}@", ":***@", 1)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
