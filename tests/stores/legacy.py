"""A small format-0 transcript, written where a JSONL store keeps it (for store and CLI tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agentlog.formats import pack_chunk_runs
from agentlog.stores.jsonl.frames import encode_frame
from agentlog.stores.jsonl.layout import session_dir

__all__ = ["CWD", "TIME", "format_0_log", "write_log"]

CWD = "/work"
TIME = 1_700_000_000_000


def format_0_log(session_id: str = "old") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A closed format-0 turn: a legacy user message, streamed chunks, a cited reply."""
    chunks = [
        {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}},
        *(
            {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": piece}}
            for piece in ("Hel", "lo", "!")
        ),
        {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "stop"}}},
    ]
    body: list[tuple[str, Any, dict[str, Any]]] = [
        ("turn/start", {"turn": 1, "trigger": {"kind": "message"}}, {}),
        (
            "user/message",
            {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}},
            {"surfaceOp": "append"},
        ),
        ("step/start", {"turn": 1, "step": 1}, {}),
        (
            "request/header",
            {
                "header": {"config": {"provider": "p", "model": "m"}, "system": "be brief"},
                "reason": "initial",
            },
            {},
        ),
        *(("assistant/chunk", data, {}) for data in chunks),
        (
            "assistant/message",
            {
                "turn": 1,
                "step": 1,
                "message": {
                    "id": "a1",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Hello!"}],
                    "source": {"kind": "model", "provider": "p", "model": "m"},
                },
            },
            {"surfaceOp": "append", "sourceEventSeqs": [4, 5, 6, 7, 8]},
        ),
        ("step/end", {"turn": 1, "step": 1}, {}),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, {}),
    ]
    events = [
        {"type": kind, "seq": seq, "time": TIME + seq, "data": data, **envelope}
        for seq, (kind, data, envelope) in enumerate(body)
    ]
    header = {
        "type": "session",
        "version": 0,
        "id": session_id,
        "createdAt": TIME,
        "cwd": CWD,
        "delegationDepth": 0,
    }
    return header, events


def write_log(
    root: Path, header: dict[str, Any], events: list[dict[str, Any]], *, zstd: bool = False
) -> Path:
    directory = session_dir(root, header["id"], header.get("cwd"))
    directory.mkdir(parents=True)
    lines = [orjson.dumps(record) + b"\n" for record in [header, *pack_chunk_runs(events)]]
    if zstd:
        path = directory / "session.jsonl.zstd"
        path.write_bytes(encode_frame(lines[0]) + encode_frame(b"".join(lines[1:])))
    else:
        path = directory / "session.jsonl"
        path.write_bytes(b"".join(lines))
    return path
