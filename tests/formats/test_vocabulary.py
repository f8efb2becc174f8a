"""Which event types each format version may hold (spec/core.md §8.2, persistence §5.4)."""

from __future__ import annotations

import pytest

from agentlog import KNOWN_EVENT_TYPES
from agentlog.formats import Refusal
from agentlog.formats.vocabulary import F0_EVENT_TYPES, known_at, refuse_unknown_types


def test_format_0_knows_the_48_types_of_its_catalog() -> None:
    assert len(F0_EVENT_TYPES) == 48
    assert known_at(0) >= F0_EVENT_TYPES
    assert "assistant/attempt" not in known_at(0)


def test_steps_retire_and_introduce_types() -> None:
    assert "assistant/chunk" in known_at(1)
    assert "assistant/chunk" not in known_at(2)
    assert "assistant/attempt" in known_at(2)
    assert "tool/code-dispatch" in known_at(2)
    assert {"tool/ptc-dispatch", "system/message"} <= known_at(3) - known_at(2)
    assert "developer/message" not in known_at(3)
    assert known_at(4) == KNOWN_EVENT_TYPES


def test_an_unknown_type_must_be_marked_ignorable() -> None:
    events = [
        {"type": "turn/start", "seq": 0},
        {"type": "x/future", "seq": 1, "ignorable": True},
    ]
    refuse_unknown_types(events, 0, "s1")
    with pytest.raises(Refusal) as refused:
        refuse_unknown_types([*events, {"type": "x/future", "seq": 2}], 0, "s1")
    assert str(refused.value) == (
        'session "s1" contains event type "x/future" (seq 2) unknown to this harness and not '
        "marked ignorable; refusing to interpret the log — it was likely written by a newer "
        "harness"
    )
    with pytest.raises(Refusal, match='event type "assistant/attempt"'):
        refuse_unknown_types([{"type": "assistant/attempt", "seq": 0}], 1, "s1")
