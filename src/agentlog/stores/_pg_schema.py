"""The PostgreSQL store's tables, and its schema version: created once, bumped and rejected.

Implements the PostgreSQL half of DESIGN.md decision 10 (and spec/persistence.md §4 in
agentlog's own schema). Every table and every unique key holds the session id (``sessions.id``,
``session_id`` elsewhere), and nothing counts across sessions (no sequence, no serial), so each
table can be distributed by it on Citus (``create_distributed_table('events', 'session_id')``)
and a session's rows stay on one shard. ``agentlog_meta`` holds the schema version: a build
opens only the version it was written for; an older version is upgraded only by ``agentlog
migrate-store`` (``migrate``), and a newer one is refused.

Event data is ``bytea``: the JSON bytes as agentlog wrote them (orjson's, lossless — ``jsonb``
would reorder keys, fold duplicates and refuse NUL characters and lone surrogates),
zstd-compressed when the payload is 4 KiB or more and that is smaller (a zstd frame cannot be
mistaken for JSON text: its first byte is 0x28).

``ensure_schema`` and ``migrate`` are ``_pg_steps`` operations, run by the sync and the async
store alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from psycopg import sql

from agentlog.errors import StoreError
from agentlog.stores._pg_steps import Run, Statement, Steps

__all__ = ["SCHEMA_VERSION", "TABLES", "ddl", "ensure_schema", "migrate"]

SCHEMA_VERSION: Final = 1
"""The table layout this build reads and writes."""
TABLES: Final = ("agentlog_meta", "sessions", "events", "leases", "cuts")

_DDL: Final = """
CREATE TABLE {schema}.agentlog_meta (
    key text PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE {schema}.sessions (
    id text PRIMARY KEY,
    header bytea NOT NULL,
    version integer NOT NULL,
    parent_session text,
    cwd text,
    created_at bigint NOT NULL,
    updated_at bigint,
    next_seq bigint NOT NULL
);
CREATE INDEX sessions_by_creation ON {schema}.sessions (created_at, id);
CREATE INDEX sessions_by_cwd ON {schema}.sessions (cwd, created_at, id);
CREATE TABLE {schema}.events (
    session_id text NOT NULL REFERENCES {schema}.sessions (id),
    seq bigint NOT NULL,
    type text NOT NULL,
    time bigint NOT NULL,
    data bytea NOT NULL,
    source_event_seqs text,
    surface_op text,
    ignorable smallint CHECK (ignorable = 1),
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE {schema}.leases (
    session_id text PRIMARY KEY,
    host text NOT NULL,
    pid integer NOT NULL,
    token text NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE TABLE {schema}.cuts (
    session_id text NOT NULL,
    cut_time bigint NOT NULL,
    seq bigint NOT NULL,
    type text,
    time bigint,
    data bytea,
    source_event_seqs text,
    surface_op text,
    ignorable smallint,
    PRIMARY KEY (session_id, cut_time, seq)
);
"""
_UPGRADES: Final[Mapping[int, Sequence[str]]] = {}
"""Statements that take the layout from version N to N + 1 (``migrate`` runs them in order)."""


def ddl(schema: str) -> str:
    """The statements that create the store's tables in ``schema`` (for docs and tests)."""
    return _DDL.format(schema=f'"{schema}"').strip()


def ensure_schema(schema: str, *, create: bool, store: str) -> Run[None]:
    """Create the tables in an empty schema, or check an existing one is this build's version.

    Creation runs in one transaction under an advisory lock, so workers starting together
    create it once.

    Raises (when run):
        StoreError: when the schema holds another version, or tables that are not agentlog's,
            or (``create=False``) no store at all.
    """
    return Run(_ensure(schema, create, store), transaction=True)


def _ensure(schema: str, create: bool, store: str) -> Steps[None]:
    yield from _lock(schema)
    version = yield from _stored_version(schema, store)
    if version is None:
        if not create:
            raise StoreError(f"no agentlog store in schema {schema!r} of {store!r}")
        yield from _create(schema)
    elif version < SCHEMA_VERSION:
        raise StoreError(
            f"PostgreSQL store {store!r} (schema {schema!r}) has agentlog schema version "
            f"{version}, older than this build's ({SCHEMA_VERSION}); upgrade it with: "
            f"agentlog migrate-store URL"
        )
    elif version > SCHEMA_VERSION:
        raise StoreError(
            f"PostgreSQL store {store!r} (schema {schema!r}) has agentlog schema version "
            f"{version}, newer than this build's ({SCHEMA_VERSION}); upgrade agentlog"
        )


def migrate(schema: str, *, store: str) -> Run[tuple[int, int]]:
    """Bring the schema to this build's version (creating it when empty): ``(from, to)``.

    The upgrade steps run in one transaction: a failure leaves the old version in place.
    ``from`` is 0 for a schema that held no store.

    Raises (when run):
        StoreError: for a newer version than this build's, or foreign tables.
    """
    return Run(_migrate(schema, store), transaction=True)


def _migrate(schema: str, store: str) -> Steps[tuple[int, int]]:
    yield from _lock(schema)
    version = yield from _stored_version(schema, store)
    if version is None:
        yield from _create(schema)
        return 0, SCHEMA_VERSION
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"PostgreSQL store {store!r} (schema {schema!r}) has agentlog schema version "
            f"{version}, newer than this build's ({SCHEMA_VERSION}); upgrade agentlog"
        )
    yield [
        Statement(sql.SQL(statement).format(schema=sql.Identifier(schema)))
        for step in range(version, SCHEMA_VERSION)
        for statement in _UPGRADES[step]
    ]
    yield from _set_version(schema)
    return version, SCHEMA_VERSION


def _lock(schema: str) -> Steps[None]:
    yield [Statement("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"agentlog:{schema}",))]


def _stored_version(schema: str, store: str) -> Steps[int | None]:
    """The stored version; ``None`` for a schema that is missing or holds no table at all."""
    (rows,) = yield [
        Statement(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,),
            "all",
        )
    ]
    tables = {row[0] for row in rows}
    if not tables:
        return None
    if "agentlog_meta" not in tables:
        raise StoreError(
            f"schema {schema!r} of {store!r} holds tables but is not an agentlog store "
            f"({', '.join(sorted(tables))}); pick another with ?schema=NAME"
        )
    (row,) = yield [
        Statement(
            sql.SQL("SELECT value FROM {}.agentlog_meta WHERE key = 'schema_version'").format(
                sql.Identifier(schema)
            ),
            None,
            "one",
        )
    ]
    if row is None or not str(row[0]).isdigit():
        raise StoreError(f"schema {schema!r} of {store!r} has no valid agentlog schema version")
    missing = set(TABLES) - tables
    if missing and int(row[0]) == SCHEMA_VERSION:
        raise StoreError(
            f"schema {schema!r} of {store!r} lacks agentlog tables: {', '.join(sorted(missing))}"
        )
    return int(row[0])


def _create(schema: str) -> Steps[None]:
    yield [
        Statement(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))),
        *(
            Statement(statement.encode())
            for statement in ddl(schema).split(";")
            if statement.strip()
        ),
    ]
    yield from _set_version(schema)


def _set_version(schema: str) -> Steps[None]:
    yield [
        Statement(
            sql.SQL(
                "INSERT INTO {}.agentlog_meta VALUES ('schema_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
            ).format(sql.Identifier(schema)),
            (str(SCHEMA_VERSION),),
        )
    ]
