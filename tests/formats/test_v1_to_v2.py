"""Format 1 → 2: chunks fold into stream records, seqs renumber (persistence §5.4)."""

from __future__ import annotations

from typing import Any

import pytest

from agentlog.events.stream import expand_stream
from agentlog.formats import Artifact, Refusal
from agentlog.formats.v1_to_v2 import migrate

HEADER = {"version": 1, "id": "s1", "createdAt": 5}
TEXT = [{"type": "text", "text": "hi"}]


def log(*events: dict[str, Any], header: dict[str, Any] = HEADER) -> Artifact:
    numbered = [{"seq": seq, "time": 100 + seq, **event} for seq, event in enumerate(events)]
    return Artifact(header=header, events=numbered)


def chunk(delta: dict[str, Any], turn: int = 1, step: int = 1) -> dict[str, Any]:
    return {"type": "assistant/chunk", "data": {"turn": turn, "step": step, "chunk": delta}}


START = chunk({"type": "block-start", "index": 0, "blockType": "text"})
DELTA = chunk({"type": "text-delta", "index": 0, "text": "hi"})
FINISH = chunk({"type": "finish", "reason": {"kind": "stop"}})


def assistant(**envelope: Any) -> dict[str, Any]:
    message = {"id": "a1", "role": "assistant", "content": TEXT, "source": {"kind": "model"}}
    return {
        "type": "assistant/message",
        "surfaceOp": "append",
        "data": {"turn": 1, "step": 1, "message": message},
        **envelope,
    }


def step(*events: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "step/start", "data": {"turn": 1, "step": 1}},
        *events,
        {"type": "step/end", "data": {"turn": 1, "step": 1}},
    ]


def types(artifact: Artifact) -> list[str]:
    return [event["type"] for event in artifact.events]


def test_a_claimed_attempt_becomes_the_messages_stream() -> None:
    source = log(*step(START, DELTA, FINISH, assistant(sourceEventSeqs=[2, 3, 4])))
    result = migrate(source)
    assert result.header == {"version": 2, "id": "s1", "createdAt": 5, "isSeeded": False}
    assert types(result) == ["turn/start", "step/start", "assistant/message", "step/end"]
    message = result.events[2]
    assert message["seq"] == 2
    assert "sourceEventSeqs" not in message
    chunks = [(100 + seq, source.events[seq]["data"]["chunk"]) for seq in (2, 3, 4)]
    assert expand_stream(message["data"]["stream"]) == chunks  # lossless


def test_a_message_citing_nothing_or_no_chunks_gets_an_empty_stream() -> None:
    result = migrate(log(*step(assistant(sourceEventSeqs=[]))))
    assert result.events[2]["data"]["stream"] == []
    assert "sourceEventSeqs" not in result.events[2]
    assert migrate(log(*step(assistant()))).events[2]["data"]["stream"] == []


def test_an_uncited_message_claims_the_one_attempt_of_its_step() -> None:
    result = migrate(log(*step(START, DELTA, FINISH, assistant())))
    assert types(result) == ["turn/start", "step/start", "assistant/message", "step/end"]
    assert len(expand_stream(result.events[2]["data"]["stream"])) == 3


def test_an_unclaimed_attempt_is_logged_where_its_last_chunk_was() -> None:
    retry = {"type": "llm/retry", "data": {"turn": 1, "step": 1}}
    result = migrate(
        log(*step(START, DELTA, retry, START, FINISH, assistant(sourceEventSeqs=[5, 6])))
    )
    assert types(result) == [
        "turn/start",
        "step/start",
        "assistant/attempt",
        "llm/retry",
        "assistant/message",
        "step/end",
    ]
    attempt = result.events[2]
    assert attempt == {
        "type": "assistant/attempt",
        "seq": 2,
        "time": 103,  # its last chunk's
        "data": {"turn": 1, "step": 1, "stream": attempt["data"]["stream"]},
    }
    assert [chunk for _, chunk in expand_stream(attempt["data"]["stream"])] == [
        START["data"]["chunk"],
        DELTA["data"]["chunk"],
    ]


@pytest.mark.parametrize("closer", ["step/end", "turn/end", "llm/retry", "llm/retry-started"])
def test_closers_end_an_attempt(closer: str) -> None:
    events = [{"type": "step/start", "data": {"turn": 1, "step": 1}}, START, DELTA]
    result = migrate(log(*events, {"type": closer, "data": {"turn": 1, "step": 1}}))
    assert types(result) == ["step/start", "assistant/attempt", closer]


def test_an_attempt_the_log_ends_in_is_kept_too() -> None:
    result = migrate(log({"type": "step/start", "data": {"turn": 1, "step": 1}}, START, DELTA))
    assert types(result) == ["step/start", "assistant/attempt"]


def test_references_follow_their_events_and_naming_a_folded_chunk_is_refused() -> None:
    title = {"type": "session/title", "data": {"title": "t", "messageSeqs": [6]}}
    result = migrate(
        log(
            *step(
                START,
                DELTA,
                FINISH,
                assistant(sourceEventSeqs=[2, 3, 4]),
                {"type": "user/message", "surfaceOp": "append", "data": {}},
            ),
            title,
        )
    )
    assert result.events[-1]["data"]["messageSeqs"] == [3]
    with pytest.raises(Refusal, match="refers to seq 3, which was an assistant/chunk"):
        migrate(
            log(
                *step(
                    START,
                    DELTA,
                    FINISH,
                    assistant(sourceEventSeqs=[2, 3, 4]),
                    {**title, "data": {"messageSeqs": [3]}},
                )
            )
        )


@pytest.mark.parametrize(
    ("sources", "problem"),
    [
        ([2, 3], " cites seqs that are not exactly the chunks of one attempt"),
        ([2, 3, 4, 1], " cites seqs that are not exactly the chunks of one attempt"),
        ([2, 3, 5], ": sourceEventSeqs must reference earlier events: 5 >= current seq 5"),
        ([2, 2, 3], ": sourceEventSeqs must not contain duplicates"),
        ([2, "3", 4], ": sourceEventSeqs must densely contain non-negative safe integers"),
    ],
)
def test_a_message_must_cite_exactly_one_attempt(sources: list[Any], problem: str) -> None:
    with pytest.raises(Refusal) as refused:
        migrate(log(*step(START, DELTA, FINISH, assistant(sourceEventSeqs=sources))))
    assert str(refused.value) == f'session "s1" assistant/message at seq 5{problem}'


def test_a_seeded_log_marks_its_inherited_cut() -> None:
    marker = {"type": "session/end-seed", "data": {}}
    seeded = {**HEADER, "seedLength": 2, "parentSession": "p"}
    result = migrate(
        log(
            {"type": "turn/start", "data": {"turn": 1}},
            {"type": "turn/end", "data": {}},
            marker,
            header=seeded,
        )
    )
    assert result.header == {
        "version": 2,
        "id": "s1",
        "createdAt": 5,
        "parentSession": "p",
        "isSeeded": True,
    }
    assert result.events[2]["data"] == {"inherited": True}
    # without a marker at the cut, one is inserted there
    result = migrate(
        log(
            {"type": "turn/start", "data": {"turn": 1}},
            {"type": "turn/end", "data": {}},
            {"type": "turn/start", "data": {"turn": 2}},
            header=seeded,
        )
    )
    assert types(result) == ["turn/start", "turn/end", "session/end-seed", "turn/start"]
    assert result.events[2] == {
        "type": "session/end-seed",
        "seq": 2,
        "time": 101,
        "data": {"inherited": True},
    }
    # a cut recorded beyond the log marks the whole log
    result = migrate(
        log({"type": "turn/start", "data": {"turn": 1}}, header={**HEADER, "seedLength": 9})
    )
    assert types(result) == ["turn/start", "session/end-seed"]


def test_a_cut_inside_an_attempt_is_refused() -> None:
    with pytest.raises(
        Refusal, match="seed cut at seq 3 splits the model attempt that starts at seq 2"
    ):
        migrate(
            log(
                *step(START, DELTA, FINISH, assistant(sourceEventSeqs=[2, 3, 4])),
                header={**HEADER, "seedLength": 3},
            )
        )


def test_malformed_chunks_are_refused() -> None:
    with pytest.raises(Refusal, match="malformed assistant/chunk at seq 1"):
        migrate(
            log(
                {"type": "step/start", "data": {}},
                {"type": "assistant/chunk", "data": {"chunk": 5}},
            )
        )
    with pytest.raises(Refusal, match="malformed assistant/chunk at or after seq 0"):
        migrate(log({**DELTA, "time": "late"}))
