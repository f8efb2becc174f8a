"""The loop-shaped workload: one tool turn as agentlog's agent loop writes it (issue 11).

A turn is 8 events — ``turn/start``, ``user/message``, ``step/start``, ``assistant/message``
with one tool call, ``tool/call``, ``tool/result``, ``step/end``, ``turn/end`` — about 9 KB of
JSON: a ~600-character question, a ~1,400-character reply calling ``read_file``, and a file
read whose length is log-normal with a median of 4 KiB (a few reads are much longer, capped at
60,000 characters). The text is the core suite's escape-free ASCII prose. The loop makes a
turn durable at three points (spec/persistence.md §6.1): before the model request (after
``step/start``), before the tool runs (after ``tool/call``) and at the turn's end.

Used by the stores suite (durable turns, cold open) and the peers suite.
"""

from __future__ import annotations

import math
import random
from typing import Any, Final

import orjson

from agentlog import messages as m
from benchmarks.core import prose

__all__ = [
    "CHECKPOINTS",
    "MESSAGES_PER_TURN",
    "Turn",
    "loop_turn",
    "loop_turns",
    "turn_messages",
]

Turn = list[tuple[str, dict[str, Any], str | None]]
"""One turn: (event type, data, surface op) per event."""

MESSAGES_PER_TURN: Final = 3
"""Messages a turn adds to the history: the question, the reply, the tool result."""
CHECKPOINTS: Final = ((0, 3), (3, 5), (5, 8))
"""The turn's events between its durable points: up to the model request, up to the tool's
run, up to the turn's end (slices of the turn)."""
RESULT_MEDIAN: Final = 4096
RESULT_SIGMA: Final = 0.8
RESULT_CAP: Final = 60_000


def loop_turn(rng: random.Random, turn: int) -> Turn:
    """Turn number ``turn`` (from 1) of the loop-shaped workload."""
    call_id = f"call_{turn:06d}"
    arguments = orjson.dumps({"path": f"src/project/module_{turn % 97:02d}.py"}).decode()
    result = min(RESULT_CAP, int(rng.lognormvariate(math.log(RESULT_MEDIAN), RESULT_SIGMA)))
    return [
        ("turn/start", {"turn": turn}, None),
        ("user/message", dict(m.user(prose(rng, 600), id=f"user-{turn:06d}")), "append"),
        ("step/start", {"turn": turn, "step": 1}, None),
        (
            "assistant/message",
            m.assistant(
                [m.text(prose(rng, 1400)), m.tool_call(call_id, "read_file", arguments)],
                provider="openai",
                model="gpt-4o",
                turn=turn,
                step=1,
                usage={"inputTokens": 12_000 + 3 * turn, "outputTokens": 180},
                id=f"assistant-{turn:06d}",
            ),
            "append",
        ),
        (
            "tool/call",
            {
                "turn": turn,
                "step": 1,
                "callId": call_id,
                "name": "read_file",
                "arguments": arguments,
            },
            None,
        ),
        (
            "tool/result",
            m.tool_result(call_id, prose(rng, result), turn=turn, step=1, id=f"tool-{turn:06d}"),
            "append",
        ),
        ("step/end", {"turn": turn, "step": 1}, None),
        ("turn/end", {"turn": turn, "reason": {"kind": "completed"}}, None),
    ]


def loop_turns(count: int, seed: int = 11) -> list[Turn]:
    """``count`` turns, numbered from 1, deterministic in ``seed``."""
    rng = random.Random(seed)
    return [loop_turn(rng, turn) for turn in range(1, count + 1)]


def turn_messages(turn: Turn) -> list[dict[str, Any]]:
    """The turn's messages as a chat history holds them (for the peers' stores)."""
    return [data if kind == "user/message" else data["message"] for kind, data, op in turn if op]
