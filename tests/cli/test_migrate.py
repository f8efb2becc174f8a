"""``agentlog migrate``: a dry run by default, migrate-on-continue with ``--write``."""

from __future__ import annotations

from pathlib import Path

from agentlog import open_store
from tests.cli.support import run
from tests.stores.legacy import format_0_log, write_log


def test_migrate_is_a_dry_run_until_asked_to_write(tmp_path: Path) -> None:
    original = write_log(tmp_path, *format_0_log())
    before = original.read_bytes()
    url = f"jsonl:///{tmp_path}"
    ran = run("migrate", "--store", url)
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 0, output
    assert f"old  v0 → v4  {original}" in output
    assert (
        "12 stored events read as 10 (repairs included): 1 assistant message(s) with their "
        in output
    )
    migrated = original.with_name("session.v4.jsonl")
    assert f"would write {migrated} (dry run; --write to publish)" in output
    assert not migrated.exists()
    ran = run("migrate", "old", "--store", url, "--write")
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 0, output
    assert f"wrote {migrated}" in output
    assert original.read_bytes() == before
    with open_store(url) as store:
        assert [info.version for info in store.list()] == [4]
    ran = run("migrate", "--store", url)
    code, output = ran.code, ran.stdout + ran.stderr
    assert f"{url}: every session is in format 4" in output
    ran = run("migrate", str(original))
    code, output = ran.code, ran.stdout + ran.stderr  # the old file itself, read directly
    assert f"already continued in {migrated}" in output


def test_migrate_reports_a_refusal_and_writes_nothing(tmp_path: Path) -> None:
    header, events = format_0_log()
    events[0]["type"] = "mode/set"
    write_log(tmp_path, header, events)
    ran = run("migrate", "--store", f"jsonl:///{tmp_path}", "--write")
    code, output = ran.code, ran.stdout + ran.stderr
    assert code == 1
    assert "session-format-v0-to-v1 refuses this format v0 Session" in output
    assert not list(tmp_path.rglob("session.v4.jsonl"))


def test_migrate_store_creates_then_reports_a_current_postgresql_schema(postgres_url: str) -> None:
    ran = run("migrate-store", postgres_url)
    assert (ran.code, ran.stdout) == (0, f"{postgres_url}: created the schema, version 1\n")
    ran = run("migrate-store", postgres_url)
    assert (ran.code, ran.stdout) == (0, f"{postgres_url}: schema version 1, current\n")
    with open_store(postgres_url) as store:
        assert store.list() == []


def test_migrate_store_refuses_a_schema_that_is_not_agentlogs(postgres_url: str) -> None:
    import psycopg

    from tests.conftest import POSTGRES_SERVER

    schema = postgres_url.rsplit("schema=", 1)[1]
    with psycopg.connect(POSTGRES_SERVER, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
        connection.execute(f"CREATE TABLE {schema}.notes (x text)")
    ran = run("migrate-store", postgres_url)
    assert ran.code == 1
    assert "is not an agentlog store (notes)" in ran.stderr


def test_migrate_store_on_a_file_store_has_nothing_to_upgrade(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    ran = run("migrate-store", url)
    assert (ran.code, ran.stdout) == (0, f"{url}: this store has no schema to upgrade\n")
