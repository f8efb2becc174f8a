"""Assistant stream records (spec/core.md §2.5, spec/plugins.md §5.3–§5.4).

Examples pin each accumulation rule, the exact record shapes and every validation error; a
hypothesis property checks that recording is lossless, canonical and maximal (no two adjacent
runs that could have been one) for random chunk sequences whose times include huge negative
gaps and values at the safe-integer limits.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlog.errors import NotLosslessJson
from agentlog.events.stream import (
    StreamRecorder,
    TimedChunk,
    expand_stream,
    record_stream,
    validate_stream,
)
from agentlog.values import MAX_SAFE_INTEGER, dumps, is_frozen, loads

MAX = MAX_SAFE_INTEGER


def text(t: str, index: int = 0) -> dict[str, Any]:
    return {"type": "text-delta", "index": index, "text": t}


def reasoning(t: str, index: int = 0) -> dict[str, Any]:
    return {"type": "reasoning-delta", "index": index, "text": t}


def tool(args: str, index: int = 0, id: str = "c1", **name: str) -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": id, **name}
    chunk["argumentsDelta"] = args
    return chunk


START = {"type": "block-start", "index": 0, "blockType": "text"}
END = {"type": "block-end", "index": 0, "block": {"type": "text", "text": "hi"}}
USAGE = {"type": "usage", "usage": {"inputTokens": 3, "outputTokens": 2}}
FINISH = {"type": "finish", "reason": {"kind": "stop"}}


def roundtrip(chunks: list[TimedChunk]) -> list[dict[str, Any]]:
    """Record ``chunks``, check the record is valid and expands back exactly, return it."""
    records = record_stream(chunks)
    validate_stream(records)
    assert expand_stream(records) == chunks
    return records


# --- record shapes ---------------------------------------------------------------------------


def test_text_deltas_become_one_text_chunks_record() -> None:
    records = roundtrip([(10, text("a")), (12, text("b")), (17, text("c"))])
    assert records == [
        {"type": "text-chunks", "time0": 10, "index": 0, "dt": [2, 5], "texts": ["a", "b", "c"]}
    ]
    assert list(records[0]) == ["type", "time0", "index", "dt", "texts"]


def test_reasoning_deltas_become_one_reasoning_chunks_record() -> None:
    records = roundtrip([(1, reasoning("x", 2)), (1, reasoning("", 2))])
    assert records == [
        {"type": "reasoning-chunks", "time0": 1, "index": 2, "dt": [0], "texts": ["x", ""]}
    ]


def test_a_single_delta_is_a_run_with_empty_dt() -> None:
    assert roundtrip([(5, text("only"))]) == [
        {"type": "text-chunks", "time0": 5, "index": 0, "dt": [], "texts": ["only"]}
    ]


def test_tool_call_chunks_record_carries_id_and_name() -> None:
    records = roundtrip([(0, tool("{", name="bash")), (3, tool("}", name="bash"))])
    assert records == [
        {
            "type": "tool-call-chunks",
            "time0": 0,
            "index": 0,
            "dt": [3],
            "id": "c1",
            "name": "bash",
            "args": ["{", "}"],
        }
    ]
    assert list(records[0]) == ["type", "time0", "index", "dt", "id", "name", "args"]


def test_tool_call_chunks_record_without_name_has_no_name_key() -> None:
    records = roundtrip([(0, tool("{")), (1, tool("}"))])
    assert list(records[0]) == ["type", "time0", "index", "dt", "id", "args"]
    assert all("name" not in chunk for _, chunk in expand_stream(records))


@pytest.mark.parametrize("chunk", [START, END, USAGE, FINISH])
def test_non_delta_chunks_become_chunk_records(chunk: dict[str, Any]) -> None:
    records = roundtrip([(7, chunk)])
    assert records == [{"type": "chunk", "time": 7, "chunk": chunk}]
    assert list(records[0]) == ["type", "time", "chunk"]


def test_a_typical_attempt_records_in_order() -> None:
    chunks: list[TimedChunk] = [
        (100, START),
        (101, text("Hel")),
        (102, text("lo")),
        (103, END),
        (104, tool('{"a"', index=1, name="f")),
        (106, tool(":1}", index=1, name="f")),
        (107, USAGE),
        (108, FINISH),
    ]
    records = roundtrip(chunks)
    assert [r["type"] for r in records] == [
        "chunk",
        "text-chunks",
        "chunk",
        "tool-call-chunks",
        "chunk",
        "chunk",
    ]


def test_empty_stream_records_nothing() -> None:
    assert roundtrip([]) == []
    assert StreamRecorder().records() == []


# --- accumulation rules ----------------------------------------------------------------------


def test_negative_gaps_join() -> None:
    records = roundtrip([(50, text("a")), (10, text("b")), (-100, text("c")), (-MAX, text("d"))])
    assert records == [
        {
            "type": "text-chunks",
            "time0": 50,
            "index": 0,
            "dt": [-40, -110, -MAX + 100],
            "texts": ["a", "b", "c", "d"],
        }
    ]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param(text("a"), reasoning("b"), id="record type"),
        pytest.param(reasoning("a"), text("b"), id="record type reversed"),
        pytest.param(text("a", 0), text("b", 1), id="index"),
        pytest.param(tool("a", 0), tool("b", 1), id="tool index"),
        pytest.param(tool("a", id="c1"), tool("b", id="c2"), id="id"),
        pytest.param(tool("a"), tool("b", name="f"), id="name appears"),
        pytest.param(tool("a", name="f"), tool("b"), id="name disappears"),
        pytest.param(tool("a", name="f"), tool("b", name="g"), id="name value"),
        pytest.param(text("a"), tool("b"), id="text then tool"),
    ],
)
def test_a_delta_that_does_not_match_starts_a_new_record(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    records = roundtrip([(0, first), (1, second)])
    assert len(records) == 2
    assert records[1]["time0"] == 1


def test_a_non_delta_chunk_ends_the_run() -> None:
    records = roundtrip([(0, text("a")), (1, USAGE), (2, text("b"))])
    assert [r["type"] for r in records] == ["text-chunks", "chunk", "text-chunks"]


def test_gap_of_exactly_max_safe_integer_joins() -> None:
    records = roundtrip([(0, text("a")), (MAX, text("b")), (0, text("c")), (-MAX, text("d"))])
    assert records == [
        {
            "type": "text-chunks",
            "time0": 0,
            "index": 0,
            "dt": [MAX, -MAX, -MAX],
            "texts": ["a", "b", "c", "d"],
        }
    ]


@pytest.mark.parametrize(("t0", "t1"), [(-MAX, MAX), (MAX, -MAX), (-1, MAX), (1, -MAX), (MAX, -1)])
def test_an_unsafe_gap_starts_a_new_record(t0: int, t1: int) -> None:
    records = roundtrip([(t0, text("a")), (t1, text("b"))])
    assert [(r["time0"], r["dt"]) for r in records] == [(t0, []), (t1, [])]


def test_an_unsafe_gap_breaks_tool_call_runs_too() -> None:
    records = roundtrip([(MAX, tool("a", name="f")), (-MAX, tool("b", name="f"))])
    assert len(records) == 2


def test_a_run_continues_after_an_unsafe_gap_broke_it() -> None:
    chunks: list[TimedChunk] = [(MAX, text("a")), (-MAX, text("b")), (-MAX + 5, text("c"))]
    records = roundtrip(chunks)
    assert records[1] == {
        "type": "text-chunks",
        "time0": -MAX,
        "index": 0,
        "dt": [5],
        "texts": ["b", "c"],
    }


@pytest.mark.parametrize(
    "chunk",
    [
        pytest.param(tool("a", id=""), id="empty id"),
        pytest.param(tool("a", name=""), id="empty name"),
        pytest.param(tool("a", id="", name=""), id="both empty"),
    ],
)
def test_tool_call_delta_with_empty_id_or_name_is_a_chunk_record(chunk: dict[str, Any]) -> None:
    records = roundtrip([(0, chunk), (1, chunk), (2, chunk)])
    assert records == [{"type": "chunk", "time": t, "chunk": chunk} for t in (0, 1, 2)]


def test_empty_name_chunk_record_breaks_a_named_run() -> None:
    records = roundtrip(
        [(0, tool("a", name="f")), (1, tool("b", name="")), (2, tool("c", name="f"))]
    )
    assert [r["type"] for r in records] == ["tool-call-chunks", "chunk", "tool-call-chunks"]


@pytest.mark.parametrize(
    "chunk",
    [
        pytest.param({**text("a"), "extra": 1}, id="extra key"),
        pytest.param({"type": "text-delta", "index": 0}, id="missing text"),
        pytest.param({"type": "text-delta", "index": 0, "text": 5}, id="text not a string"),
        pytest.param(text("a", index=-1), id="negative index"),
        pytest.param({"type": "text-delta", "index": True, "text": "a"}, id="bool index"),
        pytest.param({"type": "text-delta", "index": 1.0, "text": "a"}, id="float index"),
        pytest.param({"type": "reasoning-delta", "index": "0", "text": "a"}, id="string index"),
        pytest.param({**tool("a"), "extra": None}, id="tool extra key"),
        pytest.param({**tool("a"), "name": None}, id="tool name null"),
        pytest.param({**tool("a"), "id": 3}, id="tool id not a string"),
        pytest.param({**tool("a"), "argumentsDelta": ["a"]}, id="tool args not a string"),
        pytest.param({"type": "tool-call-delta", "index": 0, "id": "c"}, id="tool missing args"),
        pytest.param({"type": ["text-delta"], "index": 0}, id="unhashable type"),
        pytest.param({"type": "plugin:custom", "index": 0}, id="unknown chunk type"),
        pytest.param({}, id="empty object"),
    ],
)
def test_off_protocol_chunks_are_kept_verbatim_as_chunk_records(chunk: dict[str, Any]) -> None:
    """A run could not carry these shapes, so they stay raw and the codec stays lossless."""
    records = roundtrip([(0, text("a")), (1, chunk), (2, text("b"))])
    assert records[1] == {"type": "chunk", "time": 1, "chunk": chunk}
    assert len(records) == 3


# --- the recorder ----------------------------------------------------------------------------


def test_recorder_matches_record_stream_and_records_can_be_taken_mid_stream() -> None:
    recorder = StreamRecorder()
    recorder.add(text("a"), 1)
    assert recorder.records() == [
        {"type": "text-chunks", "time0": 1, "index": 0, "dt": [], "texts": ["a"]}
    ]
    recorder.add(text("b"), 3)
    recorder.add(FINISH, 4)
    assert recorder.records() == record_stream([(1, text("a")), (3, text("b")), (4, FINISH)])


def test_records_are_detached_from_the_recorder_and_from_the_input() -> None:
    chunk: dict[str, Any] = {"type": "usage", "usage": {"inputTokens": 1}}
    recorder = StreamRecorder()
    recorder.add(text("a"), 0)
    recorder.add(chunk, 1)
    chunk["usage"]["inputTokens"] = 99
    first = recorder.records()
    first[0]["dt"].append(5)
    first[0]["texts"].append("x")
    first[1]["time"] = -1
    assert recorder.records() == [
        {"type": "text-chunks", "time0": 0, "index": 0, "dt": [], "texts": ["a"]},
        {"type": "chunk", "time": 1, "chunk": {"type": "usage", "usage": {"inputTokens": 1}}},
    ]
    assert is_frozen(recorder.records()[1]["chunk"])


def test_recorder_accepts_any_mapping_and_integral_float_times() -> None:
    from types import MappingProxyType

    recorder = StreamRecorder()
    recorder.add(MappingProxyType(text("a")), 2.0)  # type: ignore[arg-type]  # JSON-read time
    recorder.add(text("b"), 3)
    [record] = recorder.records()
    assert record == {"type": "text-chunks", "time0": 2, "index": 0, "dt": [1], "texts": ["a", "b"]}
    assert type(record["time0"]) is int


@pytest.mark.parametrize(
    "delta",
    [
        {"type": "text-delta", "index": 0, "text": "a"},
        {"type": "reasoning-delta", "index": 2, "text": ""},
        {"type": "text-delta", "index": True, "text": "a"},
        {"type": "text-delta", "index": -1, "text": "a"},
        {"type": "text-delta", "index": 0, "text": 1},
        {"type": "tool-call-delta", "index": 0, "text": "a"},
        {"type": "other-delta", "index": 0, "text": "a"},
        {"type": ["text-delta"], "index": 0, "text": "a"},
    ],
)
@pytest.mark.parametrize("time", [0, 7, MAX, -MAX])
def test_a_plain_dict_delta_records_as_any_other_mapping_does(
    delta: dict[str, Any], time: int
) -> None:
    # Plain text and reasoning deltas skip the snapshot; what they record must not change.
    from types import MappingProxyType

    fast, general = StreamRecorder(), StreamRecorder()
    for recorder, chunk in ((fast, delta), (general, MappingProxyType(delta))):
        recorder.add(chunk, time)
        recorder.add(chunk, time + (1 if time < MAX else -1))
    assert fast.records() == general.records()


@pytest.mark.parametrize("time", [True, 1.5, MAX + 1, -MAX - 1, float("nan"), -0.0, "1", None])
def test_recorder_refuses_a_time_that_is_not_a_safe_integer(time: Any) -> None:
    with pytest.raises(ValueError, match="stream time must be a safe integer"):
        StreamRecorder().add(text("a"), time)


@pytest.mark.parametrize("chunk", [["text-delta"], "text-delta", None, 3])
def test_recorder_refuses_a_chunk_that_is_not_a_mapping(chunk: Any) -> None:
    with pytest.raises(TypeError, match="stream chunk must be a mapping"):
        StreamRecorder().add(chunk, 0)


@pytest.mark.parametrize(
    "chunk", [{"type": "usage", "usage": float("nan")}, {"type": "x", "v": (1,)}, {1: "x"}]
)
def test_recorder_refuses_a_chunk_outside_lossless_json(chunk: Any) -> None:
    recorder = StreamRecorder()
    with pytest.raises(NotLosslessJson):
        recorder.add(chunk, 0)
    assert recorder.records() == []


# --- expansion -------------------------------------------------------------------------------


def test_expansion_rebuilds_member_times_from_time0_and_dt() -> None:
    records = [
        {"type": "text-chunks", "time0": 10, "index": 3, "dt": [5, -20], "texts": list("abc")}
    ]
    assert expand_stream(records) == [(10, text("a", 3)), (15, text("b", 3)), (-5, text("c", 3))]


def test_expansion_puts_name_only_where_the_record_has_it() -> None:
    named = {"type": "tool-call-chunks", "time0": 0, "index": 0, "dt": [], "id": "c", "name": "f"}
    records = [{**named, "args": ["{}"]}]
    [(_, chunk)] = expand_stream(records)
    assert list(chunk) == ["type", "index", "id", "name", "argumentsDelta"]
    unnamed = {k: v for k, v in records[0].items() if k != "name"}
    [(_, chunk)] = expand_stream([unnamed])
    assert list(chunk) == ["type", "index", "id", "argumentsDelta"]


def test_expansion_keeps_a_canonical_and_a_hand_made_chunk_record_alike() -> None:
    """A delta stored raw (not canonical, but valid) expands to itself."""
    records = [{"type": "chunk", "time": 4, "chunk": text("a")}]
    assert expand_stream(records) == [(4, text("a"))]
    assert record_stream(expand_stream(records)) != records


def test_expansion_reads_integral_floats_written_elsewhere_as_ints() -> None:
    records = loads(
        b'[{"type":"text-chunks","time0":1.0,"index":0.0,"dt":[2.0],"texts":["a","b"]},'
        b'{"type":"chunk","time":5.0,"chunk":{"type":"usage","usage":{}}}]'
    )
    expanded = expand_stream(records)
    assert expanded == [(1, text("a")), (3, text("b")), (5, {"type": "usage", "usage": {}})]
    assert [type(t) for t, _ in expanded] == [int, int, int]
    assert type(expanded[0][1]["index"]) is int


def test_expansion_validates_first() -> None:
    with pytest.raises(ValueError, match="stream record 0: dt length 1 does not match 1 members"):
        expand_stream([{"type": "text-chunks", "time0": 0, "index": 0, "dt": [1], "texts": ["a"]}])


# --- validation on read ----------------------------------------------------------------------

TEXT_RUN: dict[str, Any] = {
    "type": "text-chunks",
    "time0": 0,
    "index": 0,
    "dt": [1],
    "texts": ["a", "b"],
}
TOOL_RUN: dict[str, Any] = {
    "type": "tool-call-chunks",
    "time0": 0,
    "index": 0,
    "dt": [],
    "id": "c",
    "name": "f",
    "args": ["{}"],
}
CHUNK: dict[str, Any] = {"type": "chunk", "time": 0, "chunk": FINISH}


def with_(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**record, **changes}


def without(record: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != key}


def test_valid_records_pass() -> None:
    validate_stream([])
    validate_stream([TEXT_RUN, with_(TEXT_RUN, type="reasoning-chunks"), TOOL_RUN, CHUNK])
    validate_stream([without(TOOL_RUN, "name")])
    validate_stream([with_(TEXT_RUN, time0=MAX - 1, dt=[1]), with_(CHUNK, time=-MAX)])
    validate_stream([with_(TEXT_RUN, time0=MAX, dt=[-MAX], texts=["a", "b"])])
    validate_stream([with_(CHUNK, chunk={"anything": [1, None, {"x": "y"}]})])
    validate_stream(loads(dumps([TEXT_RUN, TOOL_RUN, CHUNK])))


@pytest.mark.parametrize(
    ("records", "message"),
    [
        # the stream and its records
        ({"0": TEXT_RUN}, "stream must be an array of records, got dict"),
        ((TEXT_RUN,), "stream must be an array of records, got tuple"),
        ([CHUNK, "x"], "stream record 1: a record must be an object, got str (at $[1])"),
        ([None], "stream record 0: a record must be an object, got NoneType (at $[0])"),
        (
            [without(TEXT_RUN, "type")],
            "stream record 0: type must be 'text-chunks', 'reasoning-chunks', "
            "'tool-call-chunks' or 'chunk', got None (at $[0].type)",
        ),
        ([with_(TEXT_RUN, type="text-delta")], "got 'text-delta' (at $[0].type)"),
        ([with_(CHUNK, type=["chunk"])], "got ['chunk'] (at $[0].type)"),
        # exact key sets
        (
            [without(TEXT_RUN, "dt")],
            "stream record 0: text-chunks record must be exactly "
            "{type, time0, index, dt, texts}: missing dt (at $[0])",
        ),
        (
            [with_(TEXT_RUN, time=0)],
            "stream record 0: text-chunks record must be exactly "
            "{type, time0, index, dt, texts}: unexpected 'time' (at $[0])",
        ),
        (
            [with_(without(TEXT_RUN, "texts"), args=["a", "b"])],
            "{type, time0, index, dt, texts}: missing texts; unexpected 'args' (at $[0])",
        ),
        (
            [with_(with_(TEXT_RUN, type="reasoning-chunks"), id="c")],
            "stream record 0: reasoning-chunks record must be exactly",
        ),
        (
            [without(TOOL_RUN, "id")],
            "stream record 0: tool-call-chunks record must be exactly "
            "{type, time0, index, dt, id, name, args}: missing id (at $[0])",
        ),
        (
            [with_(without(TOOL_RUN, "name"), texts=["x"])],
            "{type, time0, index, dt, id, args}: unexpected 'texts' (at $[0])",
        ),
        (
            [with_(CHUNK, time0=0)],
            "stream record 0: chunk record must be exactly {type, time, chunk}: "
            "unexpected 'time0' (at $[0])",
        ),
        ([without(CHUNK, "chunk")], "{type, time, chunk}: missing chunk (at $[0])"),
        # chunk records
        ([with_(CHUNK, time=1.5)], "stream record 0: time must be a safe integer (at $[0].time)"),
        ([with_(CHUNK, time=MAX + 1)], "time must be a safe integer (at $[0].time)"),
        ([with_(CHUNK, time=True)], "time must be a safe integer (at $[0].time)"),
        ([with_(CHUNK, time=None)], "time must be a safe integer (at $[0].time)"),
        ([with_(CHUNK, time=-0.0)], "time must be a safe integer (at $[0].time)"),
        (
            [with_(CHUNK, chunk=[FINISH])],
            "stream record 0: chunk must be a JSON object (at $[0].chunk)",
        ),
        ([with_(CHUNK, chunk="finish")], "chunk must be a JSON object (at $[0].chunk)"),
        (
            [with_(CHUNK, chunk={"type": "usage", "usage": {"n": float("inf")}})],
            "stream record 0: chunk must be lossless JSON: $[0].chunk.usage.n is inf (not a finite",
        ),
        # run records: times and index
        (
            [with_(TEXT_RUN, time0="0")],
            "stream record 0: time0 must be a safe integer (at $[0].time0)",
        ),
        ([with_(TEXT_RUN, time0=-MAX - 1)], "time0 must be a safe integer (at $[0].time0)"),
        ([with_(TOOL_RUN, time0=False)], "time0 must be a safe integer (at $[0].time0)"),
        (
            [with_(TEXT_RUN, index=-1)],
            "stream record 0: index must be a non-negative safe integer (at $[0].index)",
        ),
        ([with_(TEXT_RUN, index=0.5)], "index must be a non-negative safe integer (at $[0].index)"),
        (
            [with_(TOOL_RUN, index=None)],
            "index must be a non-negative safe integer (at $[0].index)",
        ),
        (
            [with_(TEXT_RUN, index=True)],
            "index must be a non-negative safe integer (at $[0].index)",
        ),
        # members
        (
            [with_(TEXT_RUN, texts=[])],
            "stream record 0: texts must be a non-empty string array (at $[0].texts)",
        ),
        ([with_(TEXT_RUN, texts="ab")], "texts must be a non-empty string array (at $[0].texts)"),
        (
            [with_(TEXT_RUN, texts=["a", 1])],
            "texts must be a non-empty string array (at $[0].texts[1])",
        ),
        ([with_(TOOL_RUN, args=[])], "args must be a non-empty string array (at $[0].args)"),
        ([with_(TOOL_RUN, args=None)], "args must be a non-empty string array (at $[0].args)"),
        ([with_(TOOL_RUN, args=[None])], "args must be a non-empty string array (at $[0].args[0])"),
        # id and name
        ([with_(TOOL_RUN, id="")], "stream record 0: id must be a non-empty string (at $[0].id)"),
        ([with_(TOOL_RUN, id=7)], "id must be a non-empty string (at $[0].id)"),
        (
            [with_(TOOL_RUN, name="")],
            "stream record 0: name must be a non-empty string (at $[0].name)",
        ),
        ([with_(TOOL_RUN, name=None)], "name must be a non-empty string (at $[0].name)"),
        # dt
        (
            [with_(TEXT_RUN, dt=None)],
            "stream record 0: dt must be an array of safe integers (at $[0].dt)",
        ),
        ([with_(TEXT_RUN, dt={"0": 1})], "dt must be an array of safe integers (at $[0].dt)"),
        ([with_(TEXT_RUN, dt=[0.5])], "dt must be an array of safe integers (at $[0].dt[0])"),
        ([with_(TEXT_RUN, dt=[MAX + 1])], "dt must be an array of safe integers (at $[0].dt[0])"),
        ([with_(TEXT_RUN, dt=[True])], "dt must be an array of safe integers (at $[0].dt[0])"),
        ([with_(TEXT_RUN, dt=["1"])], "dt must be an array of safe integers (at $[0].dt[0])"),
        (
            [CHUNK, CHUNK, CHUNK, with_(TEXT_RUN, dt=[1, 2], texts=list("abcd"))],
            "stream record 3: dt length 2 does not match 4 members (at $[3].dt)",
        ),
        ([with_(TEXT_RUN, dt=[])], "stream record 0: dt length 0 does not match 2 members"),
        ([with_(TOOL_RUN, dt=[1])], "stream record 0: dt length 1 does not match 1 members"),
        # running time
        (
            [with_(TEXT_RUN, time0=MAX, dt=[1])],
            "stream record 0: member 1 time 9007199254740992 is not a safe integer (at $[0].dt[0])",
        ),
        (
            [with_(TEXT_RUN, time0=-MAX, dt=[MAX, -MAX, -1], texts=list("abcd"))],
            "member 3 time -9007199254740992 is not a safe integer (at $[0].dt[2])",
        ),
    ],
)
def test_validation_refuses(records: Any, message: str) -> None:
    with pytest.raises(ValueError, match=r"^stream") as info:
        validate_stream(records)
    assert message in str(info.value)


def test_validation_names_the_first_bad_record() -> None:
    records = [TEXT_RUN, CHUNK, with_(TEXT_RUN, index=-1), with_(CHUNK, time=0.5)]
    with pytest.raises(ValueError, match=r"^stream record 2: .*\(at \$\[2\]\.index\)$"):
        validate_stream(records)


# --- property --------------------------------------------------------------------------------

NEAR_LIMITS = [MAX, MAX - 1, -MAX, -MAX + 1, MAX // 2, -(MAX // 2) - 1, 0]
times = st.one_of(
    st.integers(-3, 3),
    st.sampled_from(NEAR_LIMITS),
    st.integers(-MAX, MAX),
)
small_text = st.sampled_from(["", "a", "b", " ", "é", "\ud800"])
indexes = st.sampled_from([0, 0, 0, 1])
deltas = st.one_of(
    st.builds(text, small_text, indexes),
    st.builds(reasoning, small_text, indexes),
    st.builds(
        lambda args, index, call_id, name: tool(args, index, call_id, **name),
        small_text,
        indexes,
        st.sampled_from(["", "c1", "c2"]),
        st.sampled_from([{}, {}, {"name": ""}, {"name": "f"}, {"name": "g"}]),
    ),
)
raw = st.sampled_from([START, END, USAGE, FINISH, {**text("a"), "extra": 1}])
timed_chunks = st.lists(
    st.tuples(times, st.one_of(deltas, deltas, deltas, raw)),
    max_size=40,
)


def _run_key(record: dict[str, Any]) -> tuple[Any, ...] | None:
    if record["type"] == "chunk":
        return None
    return (record["type"], record["index"], record.get("id"), "name" in record, record.get("name"))


@settings(max_examples=300)
@given(timed_chunks)
def test_recording_is_lossless_canonical_and_maximal(chunks: list[TimedChunk]) -> None:
    records = record_stream(chunks)
    validate_stream(records)
    assert expand_stream(records) == chunks
    # Canonical: re-recording the expansion gives the same records.
    assert record_stream(expand_stream(records)) == records
    # JSON round trip: the text reads back to equal records that expand the same way.
    reread = loads(dumps(records))
    assert reread == records
    validate_stream(reread)
    assert expand_stream(reread) == chunks
    # Maximal: two adjacent runs with the same key are split only by an unsafe gap.
    for before, after in itertools.pairwise(records):
        key = _run_key(before)
        if key is not None and key == _run_key(after):
            assert abs(after["time0"] - (before["time0"] + sum(before["dt"]))) > MAX
