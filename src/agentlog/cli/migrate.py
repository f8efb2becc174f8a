"""``agentlog migrate``: what continuing older logs converts, and publishing it on request.

A dry run by default: each session stored in an older format is read through the migration
chain in memory (``Store.plan_migration``) and summarised. With ``--write`` each is opened and
closed (``Store.open``), which publishes its format-4 artifact beside the untouched original
(spec/persistence.md §5.5).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentlog.formats import FORMAT_VERSION
from agentlog.stores import MigrationPlan, Store
from agentlog.stores._jsonl_layout import log_name
from agentlog.stores.files import TranscriptFile

__all__ = ["describe", "file_store", "migrated_location"]


@contextmanager
def file_store(path: Path) -> Iterator[tuple[Store, str]]:
    """A store over one transcript file, and the id of its session."""
    transcript = TranscriptFile(path)
    with Store(transcript) as store:
        yield store, transcript.session_id


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
