"""LangGraph serde output as JSON: the transcoding is exact, or the bytes are kept as they are.

Each case serializes a value with LangGraph's own ``JsonPlusSerializer``, transcodes it, stores
it as agentlog JSON (a real session, so the tree passes the lossless-JSON snapshot), and reads
it back through the same serde: the bytes handed back are the serde's own, byte for byte.
"""

from __future__ import annotations

import datetime
import math
import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from agentlog import Session, thaw
from agentlog.adapters._langgraph_codec import (
    LONG_STRING,
    decode_tree,
    encode_typed,
    long_strings,
    resolve_strings,
    share_strings,
)

SERDE = JsonPlusSerializer()


def _no_strings(seq: int, index: int) -> str:
    raise AssertionError("no shared strings here")


def _stored(tree: Any) -> Any:
    """``tree`` after a trip through an agentlog event (validated, frozen, shared)."""
    session = Session.create("codec", clock=lambda: 0)
    return session.append("test/value", {"tree": tree}, ignorable=True).data["tree"]


VALUES: list[Any] = [
    None,
    "text",
    42,
    -(2**62),
    2**53,
    1.5,
    math.inf,
    -0.0,
    b"\x00\xffbytes",
    [1, [2, {"a": None}]],
    (1, 2),
    {1: "int key", None: "none key"},
    {"$lg": "a key that looks like an escape"},
    {"nested": {"set": {1, 2, 3}}},
    datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.UTC),
    uuid.UUID(int=7),
    HumanMessage(content="hi", id="h1"),
    AIMessage(content="", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c1"}]),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_a_transcoded_value_reads_back_byte_for_byte(value: Any) -> None:
    typed = SERDE.dumps_typed(value)
    tree = _stored(encode_typed(typed))
    type_, data = decode_tree(tree, _no_strings)
    if typed[0] == "null":
        assert SERDE.loads_typed((type_, data)) is None
    else:
        assert (type_, data) == (typed[0], bytes(typed[1]))
    loaded = SERDE.loads_typed((type_, data))
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(loaded)
    else:
        assert loaded == SERDE.loads_typed(typed)


def test_what_json_cannot_hold_is_escaped_not_lost() -> None:
    tree = encode_typed(SERDE.dumps_typed({"n": 2**60, "b": b"\x01", 3: "x"}))
    assert tree["$lg"] == "map"  # an int key: the map is a list of pairs
    pairs = {key if isinstance(key, str | int) else str(key): value for key, value in tree["i"]}
    assert pairs["n"] == {"$lg": "int", "v": str(2**60)}
    assert pairs["b"] == {"$lg": "bin", "b": "AQ=="}


def test_a_message_is_plain_json_inside_its_extension() -> None:
    tree = encode_typed(SERDE.dumps_typed(HumanMessage(content="hello", id="h1")))
    assert tree["$lg"] == "ext"
    module, name, fields = tree["d"][:3]
    assert (module, name) == ("langchain_core.messages.human", "HumanMessage")
    assert fields["content"] == "hello"
    assert fields["id"] == "h1"


def test_another_serde_type_is_kept_as_base64() -> None:
    tree = encode_typed(("pickle", b"\x80\x04N."))
    assert tree == {"$lg": "raw", "t": "pickle", "b": "gAROLg=="}
    assert decode_tree(_stored(tree), _no_strings) == ("pickle", b"\x80\x04N.")


def test_long_strings_are_shared_by_reference_and_resolved_back() -> None:
    long = "x" * LONG_STRING
    first = {"content": long, "short": "y" * (LONG_STRING - 1)}
    assert long_strings(iter([first])) == [long]
    table = {long: (3, 0)}
    shared = share_strings({"again": long, "short": "y" * (LONG_STRING - 1)}, table)
    assert shared == {"again": {"$lg": "s", "r": [3, 0]}, "short": "y" * (LONG_STRING - 1)}
    assert long_strings(iter([shared])) == []
    resolved = resolve_strings(_stored(shared), lambda seq, index: {(3, 0): long}[seq, index])
    assert thaw(resolved) == {"again": long, "short": "y" * (LONG_STRING - 1)}


def test_a_shared_string_inside_a_value_packs_back_exactly() -> None:
    message = AIMessage(content="z" * 500, id="a1")
    typed = SERDE.dumps_typed(message)
    table = {"z" * 500: (0, 0)}
    tree = _stored(share_strings(encode_typed(typed), table))
    assert decode_tree(tree, lambda seq, index: "z" * 500) == typed
