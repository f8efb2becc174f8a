"""The agent's durable inbox: user input waiting for the next turn or the next step.

Implements spec/plugins.md §4.1 (the inbox as a projection of ``agent/inbox/spliced``): two
ordered lists of user messages, ``next-turn`` (prompts, one claimed per turn) and
``next-step`` (steering and injected context, all claimed at the next step boundary). Every
change appends its splice event *first*, then changes memory, so a crash never loses input
that was acknowledged. Removals by the user carry ``outcome: "canceled"``; the loop's claims
are pure deletions. A new inbox replays the splices of the session's own events (a fork child
inherits no pending input).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from agentlog.errors import EventRejected
from agentlog.events import Event, messages, payloads
from agentlog.session import Session
from agentlog.values import JsonValue, snapshot

__all__ = ["Inbox", "Target", "user_message"]

Target = Literal["next-turn", "next-step"]
Append = Callable[[str, JsonValue], Event]


def user_message(message: str | Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> JsonValue:
    """A user message from text, a list of content blocks, or a whole message (frozen).

    Raises:
        ValueError: for a mapping that is not a user message with an id and content.
    """
    if isinstance(message, str) or (
        isinstance(message, Sequence) and not isinstance(message, Mapping)
    ):
        return snapshot(messages.user(message))  # type: ignore[arg-type]  # blocks are mappings
    if not isinstance(message, Mapping):
        raise ValueError(f"a message is text, content blocks or a user message, got {message!r}")
    frozen = snapshot(dict(message))
    if (
        frozen.get("role") != "user"
        or not isinstance(frozen.get("id"), str)
        or not frozen["id"]
        or not isinstance(frozen.get("content"), list)
        or not isinstance(frozen.get("source"), dict)
    ):
        raise ValueError(
            "a queued message must be a user message {id, role: 'user', content, source}"
        )
    return frozen


class Inbox:
    """The pending input of one agent, kept in step with its ``agent/inbox/spliced`` events.

    Args:
        session: The agent's session; its own events' splices are replayed.
        append: How splice events are appended (the agent's checkpointed append).

    Raises:
        EventRejected: ``invalid persisted inbox splice at session seq S`` for a splice that
            does not fit the inbox replayed so far.
    """

    def __init__(self, session: Session, append: Append) -> None:
        self._append = append
        self._lists: dict[str, list[JsonValue]] = {"next-turn": [], "next-step": []}
        for event in session.own_events():
            if event.type != "agent/inbox/spliced":
                continue
            if not self._apply(event.data):
                raise EventRejected(
                    f"invalid persisted inbox splice at session seq {event.seq}",
                    session_id=session.id,
                    event_type=event.type,
                    seq=event.seq,
                )

    def pending(self, target: Target) -> tuple[JsonValue, ...]:
        """The messages waiting in one list, oldest first."""
        return tuple(self._lists[target])

    @property
    def has_work(self) -> bool:
        """Whether any message is waiting."""
        return bool(self._lists["next-turn"] or self._lists["next-step"])

    def insert(self, target: Target, message: JsonValue) -> None:
        """Queue ``message`` (a frozen user message) at the end of ``target``.

        Raises:
            ValueError: ``message "<id>" is already pending`` for an id waiting in either list.
        """
        message_id = message["id"]
        for waiting in self._lists.values():
            if any(pending["id"] == message_id for pending in waiting):
                raise ValueError(f'message "{message_id}" is already pending')
        items = self._lists[target]
        self._append(
            "agent/inbox/spliced", payloads.inbox_spliced(target, len(items), inserted=[message])
        )
        items.append(message)

    def claim(self, target: Target) -> list[JsonValue]:
        """Take what the next step enters with: every ``next-step`` message, then one prompt.

        The prompt (the oldest ``next-turn`` message) is taken only for ``target`` ``next-turn``
        (a turn's first step). Each list emptied is one splice event, ``next-step`` first.
        """
        claimed = list(self._lists["next-step"])
        if claimed:
            self._append(
                "agent/inbox/spliced", payloads.inbox_spliced("next-step", 0, removed=len(claimed))
            )
            self._lists["next-step"].clear()
        turn = self._lists["next-turn"]
        if target == "next-turn" and turn:
            self._append("agent/inbox/spliced", payloads.inbox_spliced("next-turn", 0, removed=1))
            claimed.append(turn.pop(0))
        return claimed

    def clear(self) -> int:
        """Discard everything waiting (``outcome: "canceled"``), ``next-step`` first; how many."""
        dropped = 0
        targets: tuple[Target, ...] = ("next-step", "next-turn")
        for target in targets:
            items = self._lists[target]
            if items:
                self._append(
                    "agent/inbox/spliced",
                    payloads.inbox_spliced(target, 0, removed=len(items), canceled=True),
                )
                dropped += len(items)
                items.clear()
        return dropped

    def _apply(self, data: Any) -> bool:
        """Replay one persisted splice; whether it fit."""
        if not isinstance(data, dict):
            return False
        target = data.get("target")
        items = self._lists.get(target) if isinstance(target, str) else None
        start, removed, inserted = (
            data.get("start"),
            data.get("removedCount", 0),
            data.get("inserted", []),
        )
        if (
            items is None
            or type(start) is not int
            or type(removed) is not int
            or not isinstance(inserted, list)
            or not 0 <= start <= len(items)
            or not 0 <= removed <= len(items) - start
        ):
            return False
        for message in inserted:
            if not isinstance(message, dict) or not isinstance(message.get("id"), str):
                return False
        items[start : start + removed] = inserted
        return True
