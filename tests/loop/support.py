"""Shared helpers of the loop tests: fast retries, event types, a deterministic clock."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentlog import Event, Session, thaw
from agentlog.loop import RetryPolicy

FAST_RETRIES = RetryPolicy(initial_delay_ms=1, max_delay_ms=20, jitter_ratio=0.0)
"""The default policy's shape, with millisecond waits (tests must not sleep for seconds)."""


class Clock:
    """One millisecond per call, from a fixed epoch."""

    def __init__(self) -> None:
        self.now = 1_700_000_000_000

    def __call__(self) -> int:
        self.now += 1
        return self.now


def new_session(session_id: str = "s", **options: Any) -> Session:
    return Session.create(session_id, clock=Clock(), **options)


def types(events: Iterable[Event]) -> list[str]:
    return [event.type for event in events]


def of_type(events: Iterable[Event], event_type: str) -> list[Event]:
    return [event for event in events if event.type == event_type]


def plain(value: Any) -> Any:
    """A frozen value as plain dicts and lists (for == against literals)."""
    return thaw(value)


def text_of(message: Mapping[str, Any]) -> str:
    return "".join(b["text"] for b in message["content"] if b["type"] == "text")
