"""The peers suite's OpenAI Agents part: ``agents.SQLiteSession`` with the loop-shaped turn.

A turn becomes the four items an OpenAI Agents session stores for it (the user message, the
assistant's text message, its ``function_call`` and the ``function_call_output``), appended
with one ``add_items`` call (one transaction in its WAL-mode SQLite file). Its cold load is
``get_items()`` of the whole session in a fresh process. Importing this module needs
``openai-agents`` (``pip install 'agentlog[bench]'``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Final

from agents import SQLiteSession

from benchmarks._loop import Turn

__all__ = ["Items", "cold_work", "turn_items"]

SESSION: Final = "bench"


def turn_items(turn: Turn) -> list[Any]:
    """The items ``Runner`` would add to a session for one loop-shaped turn."""
    by_type = {event_type: data for event_type, data, _ in turn}
    user = by_type["user/message"]
    reply = by_type["assistant/message"]["message"]
    call = by_type["tool/call"]
    result = by_type["tool/result"]["message"]
    return [
        {"role": "user", "content": user["content"][0]["text"]},
        {
            "type": "message",
            "role": "assistant",
            "id": f"msg_{reply['id']}",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": reply["content"][0]["text"], "annotations": []}
            ],
        },
        {
            "type": "function_call",
            "id": f"fc_{call['callId']}",
            "call_id": call["callId"],
            "name": call["name"],
            "arguments": call["arguments"],
        },
        {
            "type": "function_call_output",
            "call_id": call["callId"],
            "output": result["content"][0]["text"],
        },
    ]


class Items:
    """One ``SQLiteSession`` file; each call adds one turn's items and times it."""

    def __init__(self, path: Path, turns: list[list[Any]]) -> None:
        self.session = SQLiteSession(SESSION, path)
        self.turns = turns
        self.loop = asyncio.new_event_loop()

    def add(self, items: list[Any]) -> None:
        self.loop.run_until_complete(self.session.add_items(items))

    def close(self) -> None:
        self.session.close()
        self.loop.close()


def cold_work(target: str) -> tuple[int, object]:
    """A fresh process's load of the whole session: ``get_items()``."""
    session = SQLiteSession(SESSION, target)
    items = asyncio.run(session.get_items())
    return len(items), (session, items)
