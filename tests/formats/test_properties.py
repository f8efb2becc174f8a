"""Properties of the chain over generated format-0 logs (issue 5 acceptance).

Random closed agent sessions in format 0 — turns, steps, streamed chunks (claimed by citation,
implicitly, or left as failed attempts before a retry), tool calls and results, legacy shapes,
system-prompt changes, pruned results and compaction replaces — are migrated and rebuilt as a
format-4 session. Then:

* the derived history equals the format-0 one (folded here independently) after the
  documented shape changes (``tests/conformance/f0.py``), plus the current system prompt;
* every reference still names the same event (checked by message id and call id);
* every chunk survives, in order, inside a stream record;
* migration is deterministic, and migrating the result again changes nothing.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlog import Session, thaw
from agentlog.events.stream import expand_stream
from agentlog.formats import Artifact, migrate
from agentlog.stores.recovery import inherited_event_count
from tests.conformance.f0 import to_format_4, without_system_prompts

WORDS = ("alpha", "beta", "gamma", "delta", "kappa", "sigma")
PROMPTS = ("", "be brief", "be thorough")
TEXT_BLOCK = {"text-delta": "text", "reasoning-delta": "reasoning"}


class Writer:
    """Builds one format-0 log event by event, remembering what the oracle needs."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.events: list[dict[str, Any]] = []
        self.nodes: list[int] = []  # the format-0 surface, folded as events are written
        self.chunks: list[dict[str, Any]] = []  # every chunk event, in order
        self.time = 1_700_000_000_000
        self.prompt = ""
        self.message_ids = 0

    def add(self, event_type: str, data: Any, **envelope: Any) -> int:
        seq = len(self.events)
        self.time += self.rng.randint(0, 40)
        self.events.append(
            {"type": event_type, "seq": seq, "time": self.time, "data": data, **envelope}
        )
        op = envelope.get("surfaceOp")
        if op == "append":
            self.nodes.append(seq)
        elif op is not None:
            first, last = self.nodes.index(op["start"]), self.nodes.index(op["end"])
            self.nodes[first : last + 1] = [seq]
        return seq

    def new_id(self, prefix: str) -> str:
        self.message_ids += 1
        return f"{prefix}{self.message_ids}"

    def words(self) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(1, 4)))

    # --- one turn ------------------------------------------------------------------------

    def turn(self, turn: int) -> None:
        rng = self.rng
        trigger = (
            {"trigger": {"kind": "message", "source": {"kind": "user"}}}
            if rng.random() < 0.3
            else {}
        )
        self.add("turn/start", {"turn": turn, **trigger})
        content = [{"type": "text", "text": self.words()}]
        if rng.random() < 0.3:  # a pre-identity message
            self.add(
                "user/message", {"content": content, "source": {"kind": "user"}}, surfaceOp="append"
            )
        else:
            message = {
                "id": self.new_id("u"),
                "role": "user",
                "content": content,
                "source": {"kind": "user"},
            }
            self.add("user/message", message, surfaceOp="append")
        for step in range(1, rng.randint(1, 3) + 1):
            self.step(turn, step)
        reason = rng.choice(
            [
                {"kind": "completed"},
                {"kind": "completed"},
                {"kind": "aborted"},
                {"kind": "disposed"},
            ]
        )
        self.add("turn/end", {"turn": turn, "reason": reason})

    def step(self, turn: int, step: int) -> None:
        rng = self.rng
        self.add("step/start", {"turn": turn, "step": step})
        if rng.random() < 0.3:
            self.prompt = rng.choice(PROMPTS)
        header: dict[str, Any] = {"config": {"provider": "p", "model": "m"}}
        if self.prompt:
            header["system"] = self.prompt
        self.add("request/header", {"header": header, "reason": "initial"})
        if rng.random() < 0.2:  # a failed attempt, then a retry
            self.stream(turn, step, finish=False)
            self.add("llm/retry", {"turn": turn, "step": step, "retry": 1})
        if rng.random() < 0.15 and len(self.nodes) >= 2:
            self.compaction(turn)
        calls = [f"call{len(self.events)}-{i}" for i in range(rng.randint(0, 2))]
        chunk_seqs = self.stream(turn, step, finish=True, calls=calls)
        content: list[dict[str, Any]] = [{"type": "text", "text": self.words()}]
        content += [
            {"type": "tool-call", "id": c, "name": "bash", "arguments": "{}"} for c in calls
        ]
        citation = rng.choice(["exact", "exact", "absent"])
        envelope: dict[str, Any] = {"surfaceOp": "append"}
        if citation == "exact":
            envelope["sourceEventSeqs"] = chunk_seqs
        if rng.random() < 0.2:  # a pre-identity message
            data = {
                "turn": turn,
                "step": step,
                "content": content,
                "provenance": {"provider": "p", "model": "m"},
            }
        else:
            message = {
                "id": self.new_id("a"),
                "role": "assistant",
                "content": content,
                "source": {"kind": "model", "provider": "p", "model": "m"},
            }
            data = {"turn": turn, "step": step, "message": message}
        self.add("assistant/message", data, **envelope)
        for call in calls:
            call_seq = self.add(
                "tool/call",
                {"turn": turn, "step": step, "callId": call, "name": "bash", "arguments": "{}"},
            )
            self.tool_result(turn, step, call, call_seq)
        self.add("step/end", {"turn": turn, "step": step})

    def stream(self, turn: int, step: int, *, finish: bool, calls: list[str] = ()) -> list[int]:  # type: ignore[assignment]
        rng = self.rng
        seqs = []

        def chunk(delta: dict[str, Any]) -> None:
            seq = self.add("assistant/chunk", {"turn": turn, "step": step, "chunk": delta})
            self.chunks.append(self.events[seq])
            seqs.append(seq)

        kind = rng.choice(["text-delta", "reasoning-delta"])
        chunk({"type": "block-start", "index": 0, "blockType": TEXT_BLOCK[kind]})
        for _ in range(rng.randint(0, 5)):
            chunk({"type": kind, "index": 0, "text": rng.choice(WORDS)})
        chunk({"type": "block-end", "index": 0, "block": {"type": TEXT_BLOCK[kind], "text": "x"}})
        for index, call in enumerate(calls, start=1):
            chunk({"type": "block-start", "index": index, "blockType": "tool-call"})
            for part in ("{", "}"):
                chunk(
                    {
                        "type": "tool-call-delta",
                        "index": index,
                        "id": call,
                        "name": "bash",
                        "argumentsDelta": part,
                    }
                )
        if finish:
            if rng.random() < 0.5:
                chunk({"type": "usage", "usage": {"inputTokens": 3, "outputTokens": 2}})
            chunk({"type": "finish", "reason": {"kind": "stop"}})
        return seqs

    def tool_result(self, turn: int, step: int, call: str, call_seq: int) -> None:
        rng = self.rng
        text = [{"type": "text", "text": self.words()}]
        if rng.random() < 0.2:  # a pre-identity result
            data: dict[str, Any] = {
                "turn": turn,
                "step": step,
                "callId": call,
                "content": text,
                "isError": False,
            }
        else:
            block = {"type": "tool-result", "toolCallId": call, "content": text, "isError": False}
            message = {
                "id": self.new_id("r"),
                "role": "user",
                "source": {"kind": "tool", "callId": call},
                "content": [block],
            }
            data = {"turn": turn, "step": step, "message": message}
        seq = self.add("tool/result", data, surfaceOp="append", sourceEventSeqs=[call_seq])
        if rng.random() < 0.25:  # pruned: the same result message, shorter content
            pruned = [{"type": "text", "text": "[pruned]"}]
            if "message" in data:
                message = {
                    **data["message"],
                    "content": [{**data["message"]["content"][0], "content": pruned}],
                }
                replacement: dict[str, Any] = {**data, "message": message}
            else:
                replacement = {**data, "content": pruned}
            op = {"op": "replace", "start": seq, "end": seq}
            self.add("tool/result", replacement, surfaceOp=op, sourceEventSeqs=[seq])

    def compaction(self, turn: int) -> None:
        """A summary replacing a run of the oldest surface nodes, citing each of them."""
        count = self.rng.randint(1, len(self.nodes) - 1)
        shadowed = self.nodes[:count]
        summary = {
            "id": self.new_id("s"),
            "role": "user",
            "content": [{"type": "text", "text": "summary"}],
            "source": {"kind": "plugin", "plugin": "compact"},
        }
        op = {"op": "replace", "start": shadowed[0], "end": shadowed[-1]}
        self.add("compaction/start", {"compactionId": "k", "turn": turn})
        self.add("user/message", summary, surfaceOp=op, sourceEventSeqs=list(shadowed))
        self.add("compaction/end", {"compactionId": "k", "turn": turn})


def format_0_history(writer: Writer) -> list[dict[str, Any]]:
    """What the format-0 reference derives: each surface node's message, legacy ids minted."""
    history = []
    for seq in writer.nodes:
        event = writer.events[seq]
        data = event["data"]
        legacy_id = f"legacy-message:s1:{seq}"
        if event["type"] == "user/message":
            history.append(data if "role" in data else {**data, "id": legacy_id, "role": "user"})
        elif "message" in data:
            history.append(data["message"])
        elif event["type"] == "assistant/message":
            source = {**data["provenance"], "kind": "model"}
            history.append(
                {"id": legacy_id, "role": "assistant", "content": data["content"], "source": source}
            )
        else:
            op = event.get("surfaceOp")
            replaced = op["start"] if isinstance(op, dict) else None
            message_id = history_id(writer, replaced) if replaced is not None else legacy_id
            block = {
                "type": "tool-result",
                "toolCallId": data["callId"],
                "content": data["content"],
                "isError": data["isError"],
            }
            history.append(
                {
                    "id": message_id,
                    "role": "user",
                    "content": [block],
                    "source": {"kind": "tool", "callId": data["callId"]},
                }
            )
    return history


def history_id(writer: Writer, seq: int) -> str:
    data = writer.events[seq]["data"]
    if "message" in data:
        return str(data["message"]["id"])
    op = writer.events[seq].get("surfaceOp")
    return history_id(writer, op["start"]) if isinstance(op, dict) else f"legacy-message:s1:{seq}"


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_a_migrated_format_0_log_derives_its_history_and_keeps_every_reference(seed: int) -> None:
    writer = Writer(random.Random(seed))
    for turn in range(1, writer.rng.randint(1, 4) + 1):
        writer.turn(turn)
    header = {"version": 0, "id": "s1", "createdAt": 0, "delegationDepth": 0}
    source = Artifact(header=header, events=writer.events)

    migrated = migrate(source)
    assert migrated == migrate(source)  # deterministic
    assert migrate(migrated) is migrated  # current: nothing left to do

    events = [dict(event) for event in migrated.events]
    session = Session.from_events(
        "s1", events, dict(migrated.header), restore=True,
        inherited_event_count=inherited_event_count(migrated.header, events),
    )  # fmt: skip
    derived = thaw(session.derive_messages())
    assert isinstance(derived, list)
    expected = [to_format_4(message) for message in format_0_history(writer)]
    assert without_system_prompts(derived) == expected
    prompts = [m["content"] for m in derived if m["role"] == "system"]
    assert prompts == ([[{"type": "text", "text": writer.prompt}]] if writer.prompt else [])

    # Every reference names the same event as before (sources, replace endpoints): pair the
    # kept events in order (chunks went into streams; attempts and system nodes are new).
    kept = [e for e in writer.events if e["type"] != "assistant/chunk"]
    new = [e for e in migrated.events if e["type"] not in ("assistant/attempt", "system/message")]
    assert [e["type"] for e in kept] == [e["type"] for e in new]
    moved = {old["seq"]: event["seq"] for old, event in zip(kept, new, strict=True)}
    system = {e["seq"] for e in migrated.events if e["type"] == "system/message"}
    for old, event in zip(kept, new, strict=True):
        if "sourceEventSeqs" in old and old["type"] != "assistant/message":
            cited = [seq for seq in event["sourceEventSeqs"] if seq not in system]
            assert cited == [moved[seq] for seq in old["sourceEventSeqs"]]
        op = old.get("surfaceOp")
        if isinstance(op, dict):
            new_op = event["surfaceOp"]
            assert (new_op["startSeq"], new_op["endSeq"]) == (moved[op["start"]], moved[op["end"]])

    # Every chunk survives, in order, in exactly one stream record.
    streams = [
        chunk
        for event in migrated.events
        if event["type"] in ("assistant/message", "assistant/attempt")
        for _, chunk in expand_stream(event["data"]["stream"])
    ]
    assert streams == [chunk["data"]["chunk"] for chunk in writer.chunks]
