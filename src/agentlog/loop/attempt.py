"""One model attempt: its chunks recorded and assembled into the blocks of a reply.

Implements spec/plugins.md §5.3 (``BlockAssembler``: blocks per index in first-seen order,
text and reasoning from deltas, tool calls from id/name/argument deltas, ``block-end``
supplying the final block; on a ``max-tokens`` finish tool-call blocks are dropped and the
replay envelope pruned in step, or discarded when its block count does not match;
``interrupted_blocks``) and the recording side of §5.4 (every chunk goes into the attempt's
compact ``stream`` records with its time). Pure: chunks in, blocks and records out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlog.events import StreamRecorder
from agentlog.values import JsonValue, thaw

__all__ = ["Attempt"]


class _Block:
    __slots__ = ("arguments", "final", "id", "name", "text", "type")

    def __init__(self, block_type: str) -> None:
        self.type = block_type
        self.text: list[str] = []
        self.id = ""
        self.name = ""
        self.arguments: list[str] = []
        self.final: dict[str, Any] | None = None

    def block(self) -> dict[str, Any]:
        if self.final is not None:
            return self.final
        if self.type == "tool-call":
            return {
                "type": "tool-call",
                "id": self.id,
                "name": self.name,
                "arguments": "".join(self.arguments),
            }
        if self.type in ("text", "reasoning"):
            return {"type": self.type, "text": "".join(self.text)}
        return {"type": self.type}

    def visible(self) -> bool:
        if self.type not in ("text", "reasoning"):
            return False
        if self.final is not None:
            text = self.final.get("text")
            return isinstance(text, str) and bool(text.strip())
        return any(part.strip() for part in self.text)


class Attempt:
    """Collects one attempt's chunks: the stream records, the blocks, usage and finish."""

    __slots__ = ("_blocks", "_recorder", "chunks", "error", "finish", "id", "usage")

    def __init__(self, attempt_id: str = "") -> None:
        self.id = attempt_id
        """``<sessionId>:<counter>`` (spec/plugins.md §4.5), for live frames."""
        self.error: dict[str, Any] | None = None
        """The ``LlmFailure`` of a call that raised (set by the caller)."""
        self._recorder = StreamRecorder()
        self._blocks: dict[int, _Block] = {}
        self.chunks = 0
        """How many chunks arrived."""
        self.usage: dict[str, Any] | None = None
        """The ``usage`` chunk's token counts, when one came."""
        self.finish: dict[str, Any] | None = None
        """The ``finish`` chunk, once it came (nothing may follow it)."""

    def add(self, chunk: Mapping[str, JsonValue], time: int) -> None:
        """Record ``chunk``, streamed at session time ``time``, and fold it into the blocks."""
        self._recorder.add(chunk, time)
        self.chunks += 1
        kind = chunk.get("type")
        index = chunk.get("index")
        if kind == "text-delta" and type(index) is int:  # the commonest chunk, tested first
            block = self._blocks.get(index)  # ``_block`` in line: its block exists after the first
            if block is None:
                block = self._block(index, "text")
            block.text.append(str(chunk.get("text", "")))
        elif kind == "finish":
            self.finish = thaw(chunk)
        elif kind == "usage":
            usage = chunk.get("usage")
            self.usage = thaw(usage) if isinstance(usage, Mapping) else None
        elif type(index) is int:
            if kind == "block-start":
                self._block(index, str(chunk.get("blockType")))
            elif kind == "reasoning-delta":
                self._block(index, "reasoning").text.append(str(chunk.get("text", "")))
            elif kind == "tool-call-delta":
                block = self._block(index, "tool-call")
                block.id = str(chunk.get("id") or block.id)
                name = chunk.get("name")
                if isinstance(name, str) and name:
                    block.name = name
                block.arguments.append(str(chunk.get("argumentsDelta", "")))
            elif kind == "block-end":
                final = chunk.get("block")
                if type(final) is dict or isinstance(final, Mapping):
                    block = self._block(index, str(final.get("type")))
                    block.final = thaw(final)

    def _block(self, index: int, block_type: str) -> _Block:
        block = self._blocks.get(index)
        if block is None:
            block = self._blocks[index] = _Block(block_type)
        return block

    def records(self) -> list[dict[str, JsonValue]]:
        """The attempt's compact stream records (spec/core.md §2.5)."""
        return self._recorder.records()

    @property
    def finish_kind(self) -> str:
        """How the attempt finished: ``stop`` (also when no finish came), ``max-tokens``, ...."""
        reason = self.finish.get("reason") if self.finish else None
        kind = reason.get("kind") if type(reason) is dict or isinstance(reason, Mapping) else None
        return kind if isinstance(kind, str) else "stop"

    @property
    def failure(self) -> dict[str, Any] | None:
        """The ``LlmFailure`` of the call: its ``error``, or that of an error/aborted finish."""
        if self.error is not None:
            return self.error
        reason = self.finish.get("reason") if self.finish else None
        if not isinstance(reason, Mapping) or reason.get("kind") not in ("error", "aborted"):
            return None
        failure = reason.get("failure")
        if isinstance(failure, Mapping):
            return dict(failure)
        return {"message": f"model call ended with {reason.get('kind')}", "code": "UNKNOWN"}

    def blocks(self) -> list[dict[str, Any]]:
        """Every block seen, in index order (before any ``max-tokens`` pruning)."""
        return [block.block() for block in self._blocks.values()]

    def content(self) -> tuple[list[dict[str, Any]], Any]:
        """The reply's blocks and its replay envelope (``replayState``, or ``None``).

        On a ``max-tokens`` finish the tool-call blocks are dropped (their arguments may be
        cut off) and the envelope's per-block entries with them; an envelope whose ``blocks``
        do not match the blocks seen is discarded (spec/plugins.md §5.3).
        """
        blocks = [block.block() for block in self._blocks.values()]
        replay = self.finish.get("replayState") if self.finish else None
        entries = replay.get("blocks") if isinstance(replay, dict) else None
        if isinstance(entries, list) and len(entries) != len(blocks):
            replay, entries = None, None
        if self.finish_kind == "max-tokens":
            keep = [i for i, block in enumerate(blocks) if block.get("type") != "tool-call"]
            if len(keep) != len(blocks):
                blocks = [blocks[i] for i in keep]
                if isinstance(entries, list) and isinstance(replay, dict):
                    replay = {**replay, "blocks": [entries[i] for i in keep]}
        return blocks, replay

    def visible(self) -> bool:
        """Whether any text or reasoning with non-whitespace content arrived."""
        return any(block.visible() for block in self._blocks.values())

    def interrupted_blocks(self) -> list[dict[str, Any]]:
        """The text and reasoning blocks with visible content, in order (for a cancel)."""
        return [block.block() for block in self._blocks.values() if block.visible()]
