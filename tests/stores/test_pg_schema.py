"""The PostgreSQL store's schema: created once, versioned, Citus-ready, bump-and-reject.

Against the real server, each test in a schema of its own (``postgres_url``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from agentlog.errors import StoreError
from agentlog.stores import open_store
from agentlog.stores._pg_schema import SCHEMA_VERSION, TABLES, ddl, migrate
from agentlog.stores._pg_steps import run
from tests.conftest import POSTGRES_SERVER
from tests.stores.contract import one_turn


def schema_of(url: str) -> str:
    return url.rsplit("schema=", 1)[1]


def admin() -> psycopg.Connection[Any]:
    return psycopg.connect(POSTGRES_SERVER, autocommit=True)


def tables(schema: str) -> set[str]:
    with admin() as connection:
        return {
            row[0]
            for row in connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (schema,),
            )
        }


def test_a_new_store_creates_its_tables_and_version(postgres_url: str) -> None:
    schema = schema_of(postgres_url)
    with open_store(postgres_url) as store, store.create("s1") as session:
        one_turn(session)
    assert tables(schema) == set(TABLES)
    with admin() as connection:
        version = connection.execute(
            f"SELECT value FROM {schema}.agentlog_meta WHERE key = 'schema_version'"
        ).fetchone()
    assert version == (str(SCHEMA_VERSION),)


def test_every_unique_key_holds_the_session_id_and_nothing_counts_across_sessions(
    postgres_url: str,
) -> None:
    """What ``create_distributed_table(<table>, <session id column>)`` needs on Citus."""
    schema = schema_of(postgres_url)
    open_store(postgres_url).close()
    with admin() as connection:
        keys = connection.execute(
            "SELECT c.relname, i.indexrelid::regclass::text, array_agg(a.attname::text) "
            "FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(i.indkey) "
            "WHERE n.nspname = %s AND i.indisunique GROUP BY 1, 2",
            (schema,),
        ).fetchall()
        sequences = connection.execute(
            "SELECT count(*) FROM information_schema.sequences WHERE sequence_schema = %s",
            (schema,),
        ).fetchone()
    assert {table for table, _, _ in keys} == set(TABLES)
    for table, index, columns in keys:
        if table != "agentlog_meta":  # one row, no session: a Citus reference table
            session_column = "id" if table == "sessions" else "session_id"
            assert session_column in columns, (index, columns)
    assert sequences == (0,)


def test_a_newer_schema_version_is_refused_untouched(postgres_url: str) -> None:
    schema = schema_of(postgres_url)
    open_store(postgres_url).close()
    with admin() as connection:
        connection.execute(f"UPDATE {schema}.agentlog_meta SET value = '99'")
    with pytest.raises(StoreError, match="has agentlog schema version 99, newer than this build"):
        open_store(postgres_url)
    with pytest.raises(StoreError, match="newer than this build"), admin() as connection:
        run(connection, migrate(schema, store="x"))


def test_an_older_schema_version_is_refused_until_migrated(postgres_url: str) -> None:
    schema = schema_of(postgres_url)
    open_store(postgres_url).close()
    with admin() as connection:
        connection.execute(f"UPDATE {schema}.agentlog_meta SET value = '0'")
    with pytest.raises(StoreError) as refused:
        open_store(postgres_url)
    assert "older than this build's" in str(refused.value)
    assert "agentlog migrate-store URL" in str(refused.value)


def test_migrate_creates_an_empty_schema_and_leaves_a_current_one(postgres_url: str) -> None:
    schema = schema_of(postgres_url)
    with admin() as connection:
        assert run(connection, migrate(schema, store="x")) == (0, SCHEMA_VERSION)
        assert run(connection, migrate(schema, store="x")) == (SCHEMA_VERSION, SCHEMA_VERSION)
    assert tables(schema) == set(TABLES)


def test_a_schema_of_foreign_tables_is_refused_untouched(postgres_url: str) -> None:
    schema = schema_of(postgres_url)
    with admin() as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
        connection.execute(f"CREATE TABLE {schema}.notes (x text)")
    with pytest.raises(StoreError, match=r"holds tables but is not an agentlog store \(notes\)"):
        open_store(postgres_url)
    assert tables(schema) == {"notes"}


def test_a_read_only_open_of_an_empty_schema_creates_nothing(postgres_url: str) -> None:
    schema = schema_of(postgres_url)
    with pytest.raises(StoreError, match="no agentlog store in schema"):
        open_store(postgres_url, read_only=True)
    with pytest.raises(StoreError, match="no agentlog store in schema"):
        open_store(f"{postgres_url}&mode=ro")
    assert tables(schema) == set()


def test_the_ddl_names_the_schema() -> None:
    text = ddl("fleet")
    assert 'CREATE TABLE "fleet".events (' in text
    assert "PRIMARY KEY (session_id, seq)" in text


def test_docs_show_the_schema_as_created() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "stores.md").read_text()
    assert ddl("agentlog") + ";\n" in docs
