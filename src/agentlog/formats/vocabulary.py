"""Which event types a log of each format version may hold.

Format 0's vocabulary is the 48 types of spec/core.md §8.2 [F0]; format 4's is
``KNOWN_EVENT_TYPES``. In between, the steps of the chain retire and introduce types
(spec/persistence.md §5.4): ``assistant/chunk`` ends with v1→v2, which introduces
``assistant/attempt``; v2→v3 renames the code-mode dispatch events to PTC ones and introduces
``system/message``; ``developer/message`` and ``image/offload`` are format-4 features. The other
plugin types of the format-4 catalog are accepted at every version: dsh declared them as the
plugins shipped, not with a format bump.

Each step checks its input against ``known_at(version)`` (``refuse_unknown_types``): an unknown
type must be marked ``ignorable`` (spec/core.md §8.1), with the text of §8.1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentlog.events import KNOWN_EVENT_TYPES
from agentlog.formats.artifact import Refusal

__all__ = ["F0_EVENT_TYPES", "known_at", "refuse_unknown_types"]

F0_EVENT_TYPES: Final = frozenset(
    {
        "agent-preset/selected", "agent/inbox/spliced", "approval/asked", "approval/decided",
        "approval/policy", "assistant/chunk", "assistant/message", "command/done", "command/run",
        "compaction/end", "compaction/prune", "compaction/start", "compaction/summary",
        "feedback/record", "goal/change", "hook/invoked", "hook/result", "llm/retry",
        "llm/retry-started", "permission/preset", "plan/mode", "request/context",
        "request/header", "sandbox/mode", "schedule/change", "session/end-seed", "session/title",
        "session/title-llm-request", "step/end", "step/start", "subagent/descriptor",
        "team/member", "team/message/delivered", "team/message/queued", "team/task", "todo/write",
        "tool-workflow/agent-end", "tool-workflow/agent-start", "tool-workflow/run-end",
        "tool-workflow/run-start", "tool/call", "tool/code-dispatch", "tool/code-dispatch-start",
        "tool/result", "turn/end", "turn/start", "user/message", "web/deepseek-search-llm-request",
    }
)  # fmt: skip
"""The format-0 catalog (spec/core.md §8.2 [F0], 48 types)."""

_INTRODUCED: Final = {
    "assistant/attempt": 2,
    "system/message": 3,
    "tool/ptc-dispatch": 3,
    "tool/ptc-dispatch-start": 3,
    "developer/message": 4,
    "image/offload": 4,
}
"""Types that first appear in the given version."""

_RETIRED: Final = {
    "assistant/chunk": 2,
    "tool/code-dispatch": 3,
    "tool/code-dispatch-start": 3,
}
"""Types that may no longer appear from the given version on."""


def known_at(version: int) -> frozenset[str]:
    """The event types a log of ``version`` may hold without an ``ignorable`` mark."""
    every = F0_EVENT_TYPES | KNOWN_EVENT_TYPES
    return frozenset(
        name
        for name in every
        if _INTRODUCED.get(name, 0) <= version and _RETIRED.get(name, version + 1) > version
    )


def refuse_unknown_types(
    events: Sequence[Mapping[str, Any]], version: int, session_id: str
) -> None:
    """Refuse a log holding a type unknown at ``version`` and not marked ``ignorable``.

    Raises:
        Refusal: with the text of spec/core.md §8.1.
    """
    known = known_at(version)
    for event in events:
        event_type = event.get("type")
        if event_type not in known and event.get("ignorable") is not True:
            raise Refusal(
                f'session "{session_id}" contains event type "{event_type}" '
                f"(seq {event.get('seq')}) unknown to this harness and not marked ignorable; "
                "refusing to interpret the log — it was likely written by a newer harness"
            )
