"""``agentlog migrate``: what continuing older logs converts, and publishing it on request.

``agentlog migrate-store`` is the other migration: a store's own table layout (PostgreSQL's
schema version), upgraded only when asked.

A dry run by default: each session stored in an older format is read through the migration
chain in memory (``Store.plan_migration``) and summarised. With ``--write`` each is opened and
closed (``Store.open``), which publishes its format-4 artifact beside the untouched original
(spec/persistence.md §5.5).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentlog.cli.common import StoreOption, opened, reported, session_store
from agentlog.formats import FORMAT_VERSION
from agentlog.stores import MigrationPlan, Store
from agentlog.stores import migrate_store as upgrade_schema
from agentlog.stores.jsonl.layout import log_name

__all__ = ["describe", "migrate", "migrate_store", "migrated_location"]


def migrate(
    targets: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="SESSION",
            help="Session ids in the store, or session files. Default: every session of the "
            "store stored in an older format.",
            show_default=False,
        ),
    ] = None,
    store: StoreOption = None,
    write: Annotated[
        bool,
        typer.Option("--write", help="Publish the format-4 artifacts; without it, a dry run."),
    ] = False,
) -> None:
    """Convert sessions stored in older dsh formats (v0-v3) to format 4.

    A dry run unless --write: each session is read through the migration chain in memory and
    summarised. --write continues each one, which writes its format-4 transcript beside the
    original; the original is never changed.

    Example: agentlog migrate --store ~/.dsh/sessions --write
    """
    files = [target for target in targets or () if Path(target).is_file()]
    ids = [target for target in targets or () if not Path(target).is_file()]
    for file in files:
        with session_store(file, store, read_only=not write) as (opened_store, session_id):
            _migrate_one(opened_store, session_id, write, store)
    if ids or not files:
        with opened(store, read_only=not write) as opened_store:
            if not ids:
                older = [i for i in opened_store.list() if i.version < FORMAT_VERSION]
                ids = [info.id for info in older]
                if not ids:
                    typer.echo(f"{opened_store.url}: every session is in format {FORMAT_VERSION}")
            for session_id in ids:
                _migrate_one(opened_store, session_id, write, store)


def migrate_store(
    url: Annotated[
        str,
        typer.Argument(metavar="URL", help="The store, e.g. postgresql://host/db?schema=agentlog."),
    ],
) -> None:
    """Upgrade a store's table layout to this build's schema version (PostgreSQL).

    Opening a store never changes its schema: a store of an older version is refused until this
    command upgrades it, in one transaction (an empty schema is created). A newer version is
    refused. SQLite and JSONL stores have no schema to upgrade.

    Example: agentlog migrate-store 'postgresql://db.internal/agents?schema=agentlog'
    """
    with reported(url):
        versions = upgrade_schema(url)
    if versions is None:
        typer.echo(f"{url}: this store has no schema to upgrade")
    elif versions[0] == versions[1]:
        typer.echo(f"{url}: schema version {versions[1]}, current")
    elif versions[0] == 0:
        typer.echo(f"{url}: created the schema, version {versions[1]}")
    else:
        typer.echo(f"{url}: upgraded the schema from version {versions[0]} to {versions[1]}")


def _migrate_one(opened_store: Store, session_id: str, write: bool, url: str | None) -> None:
    with reported(url):
        plan = opened_store.plan_migration(session_id)
    for line in describe(plan):
        typer.echo(line)
    if not plan.needed:
        return
    target = migrated_location(plan) or "the store"
    if Path(target).exists():
        typer.echo(f"  already continued in {target}")
        return
    if write:
        with reported(url):
            opened_store.open(session_id).close()
        typer.echo(f"  wrote {target}")
    else:
        typer.echo(f"  would write {target} (dry run; --write to publish)")


def migrated_location(plan: MigrationPlan) -> str | None:
    """Where continuing a file-stored session writes its format-4 transcript."""
    if plan.location is None:
        return None
    stored = Path(plan.location)
    return str(stored.with_name(log_name(FORMAT_VERSION, stored.name.endswith(".zstd"))))


def describe(plan: MigrationPlan) -> list[str]:
    """A few lines saying what the migration of one session converts."""
    where = f"  {plan.location}" if plan.location else ""
    head = f"{plan.session_id}  v{plan.stored_version} → v{FORMAT_VERSION}{where}"
    if not plan.needed:
        return [f"{plan.session_id}  v{plan.stored_version}: current, nothing to migrate"]
    events = plan.session.events
    streams = sum(1 for e in events if e.type == "assistant/message" and e.data.get("stream"))
    attempts = sum(1 for e in events if e.type == "assistant/attempt")
    prompts = sum(1 for e in events if e.type == "system/message")
    legacy = sum(1 for e in events if "legacy-message:" in _message_id(e.data))
    return [
        head,
        f"  {plan.stored_events} stored events read as {len(events)} (repairs included): "
        f"{streams} assistant message(s) with their stream, {attempts} unsettled attempt(s), "
        f"{prompts} system-prompt node(s), {legacy} legacy message id(s)",
    ]


def _message_id(data: object) -> str:
    if not isinstance(data, dict):
        return ""
    message = data.get("message", data)
    return str(message.get("id", "")) if isinstance(message, dict) else ""
