"""Assembling one attempt's chunks into blocks (spec/plugins.md §5.3 ``BlockAssembler``)."""

from __future__ import annotations

from typing import Any

from agentlog.events import expand_stream
from agentlog.loop.attempt import Attempt


def feed(*chunks: dict[str, Any]) -> Attempt:
    attempt = Attempt("s:1")
    for time, chunk in enumerate(chunks):
        attempt.add(chunk, 100 + time)
    return attempt


def test_blocks_assemble_from_deltas_in_first_seen_order() -> None:
    attempt = feed(
        {"type": "reasoning-delta", "index": 0, "text": "Hm"},
        {"type": "text-delta", "index": 1, "text": "Hel"},
        {"type": "reasoning-delta", "index": 0, "text": "m."},
        {"type": "text-delta", "index": 1, "text": "lo"},
        {"type": "tool-call-delta", "index": 2, "id": "c1", "name": "f", "argumentsDelta": '{"a"'},
        {"type": "tool-call-delta", "index": 2, "id": "c1", "argumentsDelta": ": 1}"},
        {"type": "usage", "usage": {"inputTokens": 5, "outputTokens": 2}},
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    )
    blocks, replay = attempt.content()
    assert blocks == [
        {"type": "reasoning", "text": "Hmm."},
        {"type": "text", "text": "Hello"},
        {"type": "tool-call", "id": "c1", "name": "f", "arguments": '{"a": 1}'},
    ]
    assert replay is None
    assert attempt.usage == {"inputTokens": 5, "outputTokens": 2}
    assert attempt.finish_kind == "tool-calls"
    assert attempt.failure is None
    # the records expand back to the exact timed chunks
    assert [chunk["type"] for _t, chunk in expand_stream(attempt.records())][:2] == [
        "reasoning-delta", "text-delta",
    ]  # fmt: skip


def test_block_end_supplies_the_final_block() -> None:
    attempt = feed(
        {"type": "text-delta", "index": 0, "text": "draft"},
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": "final"}},
        {"type": "finish", "reason": {"kind": "stop"}},
    )
    assert attempt.content()[0] == [{"type": "text", "text": "final"}]


def test_max_tokens_drops_tool_calls_and_prunes_the_envelope_in_step() -> None:
    envelope = {"response": {"kind": "x"}, "blocks": [{"type": "text"}, {"type": "tool-call"}]}
    attempt = feed(
        {"type": "text-delta", "index": 0, "text": "Let me"},
        {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "f", "argumentsDelta": "{"},
        {"type": "finish", "reason": {"kind": "max-tokens"}, "replayState": envelope},
    )
    blocks, replay = attempt.content()
    assert blocks == [{"type": "text", "text": "Let me"}]
    assert replay == {"response": {"kind": "x"}, "blocks": [{"type": "text"}]}


def test_an_envelope_that_does_not_match_the_blocks_is_discarded() -> None:
    envelope = {"response": {"kind": "x"}, "blocks": [{"type": "text"}, {"type": "text"}]}
    attempt = feed(
        {"type": "text-delta", "index": 0, "text": "one"},
        {"type": "finish", "reason": {"kind": "stop"}, "replayState": envelope},
    )
    assert attempt.content()[1] is None


def test_interrupted_blocks_are_the_visible_text_and_reasoning() -> None:
    attempt = feed(
        {"type": "reasoning-delta", "index": 0, "text": "   "},
        {"type": "text-delta", "index": 1, "text": "Half"},
        {"type": "tool-call-delta", "index": 2, "id": "c1", "name": "f", "argumentsDelta": "{"},
    )
    assert attempt.visible()
    assert attempt.interrupted_blocks() == [{"type": "text", "text": "Half"}]
    assert attempt.finish is None


def test_an_error_finish_carries_its_failure() -> None:
    failure = {"message": "bad", "code": "SERVER"}
    attempt = feed({"type": "finish", "reason": {"kind": "error", "failure": failure}})
    assert attempt.failure == failure
    aborted = feed({"type": "finish", "reason": {"kind": "aborted"}})
    assert aborted.failure == {"message": "model call ended with aborted", "code": "UNKNOWN"}
