"""The peers suite's eventsourcing part: an aggregate that records the loop-shaped turn.

A ``Conversation`` aggregate records each of the turn's 8 events as one domain event (its
type, data and surface op) and keeps the messages, as a history derived from its events;
each turn is saved with one ``Application.save`` (one transaction of eventsourcing's SQLite
recorder, WAL mode). Its cold load is ``repository.get`` (a replay of every event) in a fresh
process. Importing this module needs ``eventsourcing`` (``pip install 'agentlog[bench]'``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from benchmarks._loop import Turn

__all__ = ["Conversation", "Conversations", "cold_work", "open_application"]


class Conversation(Aggregate):
    """An agent conversation: the events of its turns and the messages they show."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    @event("Appended")
    def append(self, kind: str, data: dict[str, Any], surface_op: str | None) -> None:
        if surface_op is not None:
            self.messages.append(data if kind == "user/message" else data["message"])


class Conversations(Application):  # type: ignore[type-arg]  # generic only in its stubs
    """The eventsourcing application holding the conversations."""


def open_application(path: Path | str) -> Conversations:
    return Conversations(
        env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)}
    )


def record(conversation: Conversation, turn: Turn) -> None:
    for event_type, data, surface_op in turn:
        conversation.append(event_type, data, surface_op)


def cold_work(target: str) -> tuple[int, object]:
    """A fresh process's load of the conversation: ``repository.get`` of its id."""
    path, _, ident = target.rpartition("#")
    app = open_application(path)
    conversation: Conversation = app.repository.get(UUID(ident))
    return len(conversation.messages), (app, conversation)
