"""Pydantic AI part of the adapters suite: ``AgentlogConversationStore`` against a JSON blob.

Pydantic AI ships no durable conversation store; its persistence docs serialize the whole
``Conversation`` with ``ConversationTypeAdapter`` and store the JSON. The baseline does that
into one SQLite row per conversation (WAL, ``synchronous=FULL``, one transaction per save), in
the same directory and the same run:

* ``save`` of one more turn (4 messages, ~9 KB) to a conversation of 100 turns, durable;
* ``load`` of a conversation of 1,000 turns (4,000 messages).

Neither has a target in the issue; the figures say where the adapter stands.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic_ai.conversation import Conversation, ConversationTypeAdapter
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from agentlog.adapters.pydantic_ai import AgentlogConversationStore
from benchmarks._harness import Benchmark, fig, median

SAVE_HISTORY, SAVES = 100, 20
LOAD_TURNS = 1_000


def turn_messages(rng: random.Random, n: int) -> list[ModelMessage]:
    def words(count: int) -> str:
        return " ".join(rng.choice(("alpha", "beta", "gamma", "delta")) for _ in range(count))

    call = ToolCallPart("read_file", {"path": f"src/module_{n}.py"}, tool_call_id=f"call_{n}")
    return [
        ModelRequest(parts=[UserPromptPart(words(500))]),
        ModelResponse(parts=[call], model_name="bench"),
        ModelRequest(parts=[ToolReturnPart("read_file", words(850), tool_call_id=f"call_{n}")]),
        ModelResponse(parts=[TextPart(words(150))], model_name="bench"),
    ]


class BlobStore:
    """The baseline: the whole conversation as one JSON row, rewritten on every save."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS c (id TEXT PRIMARY KEY, json BLOB)")

    def save(self, conversation: Conversation) -> None:
        blob = ConversationTypeAdapter.dump_json(conversation)
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute(
            "INSERT OR REPLACE INTO c VALUES (?, ?)", (conversation.conversation_id, blob)
        )
        self.db.execute("COMMIT")

    def load(self, conversation_id: str) -> Conversation:
        row = self.db.execute("SELECT json FROM c WHERE id = ?", (conversation_id,)).fetchone()
        return ConversationTypeAdapter.validate_json(row[0])


async def _grow(
    store: AgentlogConversationStore, blob: BlobStore, cid: str, turns: list[Any]
) -> None:
    conversation = Conversation(conversation_id=cid)
    for messages in turns:
        conversation.messages.extend(messages)
        await store.save(conversation)
    blob.save(conversation)


def bench_save(directory: Path, loop: asyncio.AbstractEventLoop) -> Benchmark:
    rng = random.Random(7)
    turns = [turn_messages(rng, n) for n in range(SAVE_HISTORY + SAVES)]
    store = AgentlogConversationStore(f"sqlite:///{directory}/agentlog-save.db")
    blob = BlobStore(directory / "blob-save.db")
    loop.run_until_complete(_grow(store, blob, "save", turns[:SAVE_HISTORY]))
    conversation = loop.run_until_complete(store.load("save"))
    assert conversation is not None
    copy = blob.load("save")
    ours: list[int] = []
    theirs: list[int] = []
    for messages in turns[SAVE_HISTORY:]:
        conversation.messages.extend(messages)
        start = time.perf_counter_ns()
        loop.run_until_complete(store.save(conversation))
        ours.append(time.perf_counter_ns() - start)
        copy.messages.extend(messages)
        start = time.perf_counter_ns()
        blob.save(copy)
        theirs.append(time.perf_counter_ns() - start)
    store.close()
    value, base = median(ours), median(theirs)
    return {
        "id": "pydantic_ai.save_turn",
        "title": f"AgentlogConversationStore.save of one turn (4 messages) after {SAVE_HISTORY}",
        "statistic": f"median of {SAVES} saves each, alternating",
        "value": round(value / 1e6, 3),
        "unit": "ms/save",
        "baseline": {
            "name": "the conversation as one JSON row in SQLite, rewritten per save",
            "value": round(base / 1e6, 3),
            "unit": "ms/save",
        },
        "ratio": round(value / base, 2),
        "target": None,
        "met": None,
        "figures": {
            "max": fig(max(ours) / 1e6, "ms"),
            "baseline max": fig(max(theirs) / 1e6, "ms"),
        },
        "notes": (
            "A save reads the stored record (Store.inspect: the whole log), then opens the "
            "session for writing (the store's resume: read, validate, restore), checks the "
            "revision, appends the entries, the history's events and the record in one "
            "durable batch, and closes it: every save is O(conversation) in reads, but writes "
            "only the new turn. The baseline rewrites the whole conversation every time."
        ),
    }


def bench_load(directory: Path, loop: asyncio.AbstractEventLoop) -> Benchmark:
    rng = random.Random(9)
    template = [turn_messages(rng, n) for n in range(40)]
    store = AgentlogConversationStore(f"sqlite:///{directory}/agentlog-load.db")
    blob = BlobStore(directory / "blob-load.db")
    conversation = Conversation(conversation_id="load")
    for n in range(LOAD_TURNS):
        conversation.messages.extend(template[n % len(template)])
        if n % 100 == 99:  # ten saves of 100 turns each: the log of a long-lived conversation
            loop.run_until_complete(store.save(conversation))
    blob.save(conversation)
    ours: list[int] = []
    theirs: list[int] = []
    for _ in range(3):
        fresh = AgentlogConversationStore(f"sqlite:///{directory}/agentlog-load.db")
        start = time.perf_counter_ns()
        loaded = loop.run_until_complete(fresh.load("load"))
        ours.append(time.perf_counter_ns() - start)
        fresh.close()
        assert loaded is not None
        assert len(loaded.messages) == 4 * LOAD_TURNS
        start = time.perf_counter_ns()
        copy = blob.load("load")
        theirs.append(time.perf_counter_ns() - start)
        assert len(copy.messages) == 4 * LOAD_TURNS
    store.close()
    value, base = min(ours), min(theirs)
    return {
        "id": "pydantic_ai.load_1k_turns",
        "title": f"AgentlogConversationStore.load of {LOAD_TURNS:,} turns (4,000 messages), cold",
        "statistic": "min of 3 loads each, by a freshly constructed store",
        "value": round(value / 1e6, 1),
        "unit": "ms",
        "baseline": {
            "name": "ConversationTypeAdapter.validate_json of the stored row",
            "value": round(base / 1e6, 1),
            "unit": "ms",
        },
        "ratio": round(value / base, 2),
        "target": None,
        "met": None,
        "figures": {},
        "notes": (
            "Both return an equal Conversation. agentlog reads the session (inspect: every event "
            "validated, the surface restored), takes the record and walks the entries from the "
            "head, then validates the messages with ModelMessagesTypeAdapter."
        ),
    }


def run() -> list[Benchmark]:
    directory = Path(tempfile.mkdtemp(prefix="agentlog-bench-pydantic-ai-"))
    loop = asyncio.new_event_loop()
    try:
        return [bench_save(directory, loop), bench_load(directory, loop)]
    finally:
        loop.close()
