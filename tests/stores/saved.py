"""Realistic sessions saved into real stores, for tests of reading, copying and the CLI."""

from __future__ import annotations

from pathlib import Path

from agentlog import Session, Store, open_store
from tests.agent_logs import grow_agent_session

__all__ = ["STORE_KINDS", "grown", "save", "store_url"]

STORE_KINDS = ("jsonl", "jsonl+zstd", "sqlite")


def store_url(kind: str, tmp_path: Path) -> str:
    """A store URL of ``kind`` under ``tmp_path`` (absolute: four slashes)."""
    return (
        f"sqlite:///{tmp_path / 'sessions.db'}" if kind == "sqlite" else f"{kind}:///{tmp_path}/s"
    )


def save(
    target: str | Store, session: Session, *, cwd: str | None = "/work", upto: int | None = None
) -> None:
    """Append ``session``'s events (the first ``upto``) to a new session of a store.

    Each event goes through ``Session.append`` again, so the saved log is what an agent writing
    to that store would have left (with the store's clock).
    """
    if isinstance(target, str):
        with open_store(target) as store:
            save(store, session, cwd=cwd, upto=upto)
        return
    with target.create(session.id, cwd=cwd) as saved, saved.batch():
        for event in session.events[:upto]:
            saved.append(
                event.type,
                event.data,
                surface_op=event.surface_op,
                source_event_seqs=event.source_event_seqs,
                ignorable=event.ignorable,
            )


def grown(session_id: str = "agent", events: int = 120, seed: int = 7) -> Session:
    """A well-behaved agent's session of at least ``events`` events (see tests.agent_logs)."""
    return grow_agent_session(seed, events, session_id)
