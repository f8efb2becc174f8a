"""A compacted coding session for the CLI and viewer tests (independent of ``agentlog demo``).

Three turns of a coding agent — a system prompt, user turns, assistant tool calls and results —
then the real plugins: ``prune_tool_results`` rewrites a bulky tool result (seq 21 replaces 8)
and, between turns 2 and 3, ``compact`` with the offline ``ExtractiveSummarizer`` replaces nine
nodes with a summary (seq 34), one of which is that pruned result: a nested replacement.
42 events; deterministic but for the compaction's ids.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from agentlog import ExtractiveSummarizer, PruneConfig, Session, compact, prune_tool_results
from agentlog import messages as m

__all__ = ["checkpoint", "clock", "coding_session"]

_PROVIDER, _MODEL = "scripted", "demo-model"
_TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file of the workspace.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
    {
        "name": "run_tests",
        "description": "Run the test suite.",
        "parameters": {"type": "object", "properties": {"target": {"type": "string"}}},
    },
]
_PARSER_SOURCE = "\n".join(
    [
        "def parse(text):",
        "    tokens = text.split()",
        "    return tokens[:-1]  # drops the last token",
    ]
    + [f"# ... line {n} of the parser module" for n in range(4, 60)]
)


_PRUNE = PruneConfig(threshold_chars=1000, head_chars=420, tail_chars=120)
"""Budgets small enough for the demo's one bulky result (dsh's default threshold is 8,192)."""


class _Clock:
    """A deterministic clock: one second per call."""

    def __init__(self) -> None:
        self.now = 1_767_225_600_000  # 2026-01-01T00:00:00Z

    def __call__(self) -> int:
        self.now += 1000
        return self.now


def clock() -> _Clock:
    """A deterministic clock (2026-01-01T00:00:00Z, one second per event)."""
    return _Clock()


def _assistant(
    text: str, turn: int, step: int, ident: str, *calls: tuple[str, str, str]
) -> dict[str, Any]:
    content = [m.text(text), *(m.tool_call(cid, name, args) for cid, name, args in calls)]
    return m.assistant(
        content,
        provider=_PROVIDER,
        model=_MODEL,
        turn=turn,
        step=step,
        usage={"inputTokens": 1200 * step, "outputTokens": 80},
        id=ident,
    )


def _tool_step(
    s: Session, turn: int, step: int, ident: str, text: str, call: tuple[str, str, str], result: str
) -> int:
    """One step in which the model calls one tool; returns the seq of the tool result."""
    s.append("step/start", {"turn": turn, "step": step})
    s.append("assistant/message", _assistant(text, turn, step, ident, call), surface_op="append")
    call_id, name, args = call
    call_event = s.append(
        "tool/call",
        {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": args},
    )
    result_event = s.append(
        "tool/result",
        m.tool_result(call_id, result, turn=turn, step=step, id=f"r-{call_id}"),
        surface_op="append",
        source_event_seqs=[call_event.seq],
    )
    s.append("step/end", {"turn": turn, "step": step})
    return result_event.seq


def _final_step(s: Session, turn: int, step: int, ident: str, text: str) -> None:
    s.append("step/start", {"turn": turn, "step": step})
    s.append("assistant/message", _assistant(text, turn, step, ident), surface_op="append")
    s.append("step/end", {"turn": turn, "step": step})


def coding_session(session: Session | None = None) -> Session:
    """Play the script into ``session`` (a fresh in-memory one, id "coding", by default)."""
    s = session or Session.create("coding", clock=_Clock())

    # Turn 1: find and fix a bug, with two tool calls.
    s.append("turn/start", {"turn": 1})
    s.append("step/start", {"turn": 1, "step": 1})
    s.append(
        "request/header",
        {
            "header": {"config": {"provider": _PROVIDER, "model": _MODEL}, "tools": _TOOLS},
            "reason": "initial",
        },
    )
    s.append("request/context", {"provider": _PROVIDER, "model": _MODEL, "contextWindow": 128000})
    s.append(
        "system/message",
        m.system(
            "You are a careful coding agent. Read before you write.", turn=1, step=1, id="s-1"
        ),
        surface_op="append",
    )
    s.append(
        "user/message",
        m.user("tests/test_parser.py fails. Please fix it.", id="u-1"),
        surface_op="append",
    )
    s.append(
        "assistant/message",
        _assistant(
            "Let me read the parser.", 1, 1, "a-1", ("call-1", "read_file", '{"path": "parser.py"}')
        ),
        surface_op="append",
    )
    call = s.append(
        "tool/call",
        {
            "turn": 1,
            "step": 1,
            "callId": "call-1",
            "name": "read_file",
            "arguments": '{"path": "parser.py"}',
        },
    )
    s.append(
        "tool/result",
        m.tool_result("call-1", _PARSER_SOURCE, turn=1, step=1, id="r-call-1"),
        surface_op="append",
        source_event_seqs=[call.seq],
    )
    s.append("step/end", {"turn": 1, "step": 1})
    _tool_step(
        s,
        1,
        2,
        "a-2",
        "parse() drops the last token. Fixed it; running the tests.",
        ("call-2", "run_tests", '{"target": "tests/test_parser.py"}'),
        "3 passed in 0.04s",
    )
    _final_step(s, 1, 3, "a-3", "Fixed: parse() no longer drops the last token. All 3 tests pass.")
    s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})

    # Turn 2: before the step, prune the bulky file listing; only its content changes (§5.5).
    s.append("turn/start", {"turn": 2})
    prune_tool_results(s, _PRUNE)
    s.append(
        "user/message", m.user("Great. Add a test for empty input.", id="u-2"), surface_op="append"
    )
    _tool_step(
        s,
        2,
        1,
        "a-4",
        "Adding test_empty_input.",
        ("call-3", "run_tests", '{"target": "tests/test_parser.py::test_empty_input"}'),
        "1 passed in 0.01s",
    )
    _final_step(s, 2, 2, "a-5", "Added test_empty_input; it passes.")
    s.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})

    # Compaction between turns, as /compact does: a summary replaces all but the newest reply
    # and cites every node it shadows.
    asyncio.run(compact(s, ExtractiveSummarizer()))

    # Turn 3: the model works from the compacted history.
    s.append("turn/start", {"turn": 3})
    s.append("user/message", m.user("What did we change overall?", id="u-3"), surface_op="append")
    _final_step(s, 3, 1, "a-6", "We fixed parse() and added a regression test for empty input.")
    s.append("turn/end", {"turn": 3, "reason": {"kind": "completed"}})
    return s


def checkpoint(session: Session) -> int:
    """The seq of the compaction checkpoint (the summary that replaced history)."""
    return next(
        event.seq
        for event in reversed(session.events)
        if event.type == "user/message" and isinstance(event.surface_op, Mapping)
    )
