"""Packed chunk rows of format-0/1 files (spec/core.md §12)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlog.formats import MalformedChunkRow, decode_storage_record, pack_chunk_runs


def chunk(
    seq: int, time: int, delta: dict[str, Any], turn: int = 1, step: int = 1
) -> dict[str, Any]:
    return {
        "type": "assistant/chunk",
        "seq": seq,
        "time": time,
        "data": {"turn": turn, "step": step, "chunk": delta},
    }


def text(seq: int, time: int, piece: str, index: int = 0) -> dict[str, Any]:
    return chunk(seq, time, {"type": "text-delta", "index": index, "text": piece})


def call(seq: int, time: int, piece: str, **extra: Any) -> dict[str, Any]:
    delta = {"type": "tool-call-delta", "index": 1, "id": "c1", **extra, "argumentsDelta": piece}
    return chunk(seq, time, delta)


def test_a_run_of_three_text_deltas_is_one_row_and_expands_back() -> None:
    run = [text(4, 100, "Hel"), text(5, 104, "lo"), text(6, 103, "!")]
    (row,) = pack_chunk_runs(run)
    assert row == {
        "type": "text-chunks",
        "seq0": 4,
        "time0": 100,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [4, -1], "texts": ["Hel", "lo", "!"]},
    }
    assert decode_storage_record(row) == run


def test_tool_call_rows_keep_the_name_only_when_present() -> None:
    named = [
        call(0, 0, "{", name="bash"),
        call(1, 1, '"a"', name="bash"),
        call(2, 1, "}", name="bash"),
    ]
    (row,) = pack_chunk_runs(named)
    assert row["data"] == {
        "turn": 1,
        "step": 1,
        "index": 1,
        "id": "c1",
        "name": "bash",
        "dt": [1, 0],
        "args": ["{", '"a"', "}"],
    }
    assert decode_storage_record(row) == named
    anonymous = [call(0, 0, "{"), call(1, 1, "1"), call(2, 1, "}")]
    (row,) = pack_chunk_runs(anonymous)
    assert "name" not in row["data"]
    assert decode_storage_record(row) == anonymous


@pytest.mark.parametrize(
    "batch",
    [
        [text(0, 0, "a"), text(1, 0, "b")],  # too short
        [text(0, 0, "a"), text(2, 0, "b"), text(3, 0, "c")],  # a seq gap
        [text(0, 0, "a"), text(1, 0, "b", index=1), text(2, 0, "c")],  # another block
        [text(0, 0, "a"), {**text(1, 0, "b"), "ignorable": True}, text(2, 0, "c")],  # envelope
        [call(0, 0, "a", name="x"), call(1, 0, "b"), call(2, 0, "c")],  # name presence differs
        [chunk(0, 0, {"type": "block-start", "index": 0, "blockType": "text"})] * 3,  # not deltas
    ],
)
def test_what_cannot_be_packed_passes_through_in_order(batch: list[dict[str, Any]]) -> None:
    assert pack_chunk_runs(batch) == batch


@pytest.mark.parametrize("value", ["junk", None, 7, [], {"type": "turn/start", "seq": 0}])
def test_records_that_are_not_rows_pass_through_unvalidated(value: object) -> None:
    assert decode_storage_record(value) == [value]


ROW = {
    "type": "text-chunks",
    "seq0": 3,
    "time0": 10,
    "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]},
}
TOOL_ROW = {
    "type": "tool-call-chunks",
    "seq0": 3,
    "time0": 10,
    "data": {"turn": 1, "step": 1, "index": 0, "id": "c", "dt": [1], "args": ["a", "b"]},
}


def edit(row: dict[str, Any], **changes: Any) -> dict[str, Any]:
    data = {**row["data"], **changes.pop("data", {})}
    for key in changes.pop("drop", ()):
        data.pop(key)
    return {**row, **changes, "data": data}


@pytest.mark.parametrize(
    ("row", "why"),
    [
        ({**ROW, "extra": 1}, "envelope must be exactly {type, seq0, time0, data}"),
        (edit(ROW, seq0=-1), "seq0 must be a non-negative safe integer"),
        (edit(ROW, seq0=2**53), "seq0 must be a non-negative safe integer"),
        (edit(ROW, time0=0.5), "time0 must be a safe integer"),
        ({**ROW, "data": []}, "data must be an object"),
        (edit(ROW, data={"id": "c"}), "data must be exactly {turn, step, index, dt, texts}"),
        (
            edit(TOOL_ROW, drop=["id"]),
            "data must be exactly {turn, step, index, id, name?, dt, args}",
        ),
        (edit(TOOL_ROW, data={"id": 5}), "id (and name when present) must be strings"),
        (edit(TOOL_ROW, data={"name": None}), "id (and name when present) must be strings"),
        (edit(ROW, data={"turn": "1"}), "turn/step/index must be numbers"),
        (edit(ROW, data={"index": True}), "turn/step/index must be numbers"),
        (edit(ROW, data={"texts": []}), "texts must be a non-empty string array"),
        (edit(ROW, data={"texts": ["a", 1]}), "texts must be a non-empty string array"),
        (edit(TOOL_ROW, data={"args": "ab"}), "args must be a non-empty string array"),
        (edit(ROW, data={"dt": [0.5]}), "dt must be an array of safe integers"),
        (edit(ROW, data={"dt": [1, 1]}), "dt length 2 does not match 2 members"),
        (edit(ROW, seq0=2**53 - 1), "member seqs must stay safe integers"),
        (edit(ROW, time0=2**53 - 1), "member times must stay safe integers"),
    ],
)
def test_damaged_rows_are_refused_with_the_spec_text(row: dict[str, Any], why: str) -> None:
    with pytest.raises(MalformedChunkRow) as refused:
        decode_storage_record(row)
    assert str(refused.value) == f"malformed {row['type']} storage row: {why}"


DELTAS = st.one_of(
    st.builds(
        lambda kind, index, piece: {"type": kind, "index": index, "text": piece},
        st.sampled_from(["text-delta", "reasoning-delta"]),
        st.integers(0, 2),
        st.text(max_size=3),
    ),
    st.builds(
        lambda index, call_id, name, piece: {
            "type": "tool-call-delta",
            "index": index,
            "id": call_id,
            **({} if name is None else {"name": name}),
            "argumentsDelta": piece,
        },
        st.integers(0, 2),
        st.sampled_from(["c1", "c2"]),
        st.sampled_from([None, "bash"]),
        st.text(max_size=3),
    ),
    st.just({"type": "finish", "reason": {"kind": "stop"}}),
)


@given(st.lists(st.tuples(DELTAS, st.integers(-5, 50), st.booleans()), max_size=40))
def test_decode_after_a_json_round_trip_of_pack_is_the_identity(
    steps: list[tuple[dict[str, Any], int, bool]],
) -> None:
    batch, seq, time = [], 0, 1_700_000_000_000
    for delta, gap, skip_seq in steps:
        seq += 2 if skip_seq else 1
        time += gap
        batch.append(chunk(seq, time, delta))
    stored = orjson.loads(orjson.dumps(pack_chunk_runs(batch)))
    assert [event for record in stored for event in decode_storage_record(record)] == batch
