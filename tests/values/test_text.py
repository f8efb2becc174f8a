r"""JSON text of lossless values: ``dumps`` and ``loads``.

Covers the fallbacks around ``orjson``: strings with lone surrogates (``"\ud800"``, which dsh
logs contain), nesting deeper than ``orjson`` writes (255) or reads (1024), and the refusal of
text that has no lossless value (``NaN``, ``Infinity``, overflowing numbers, malformed text).
The round trip ``loads(dumps(v)) == v`` must hold for every value ``snapshot()`` accepts.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlog import NotLosslessJson
from agentlog.values import MAX_SAFE_INTEGER, dumps, loads, snapshot
from tests.values.support import deep_dict, deep_list


def _depth_of_lists(value: Any) -> int:
    depth = 0
    while isinstance(value, list) and value:
        value, depth = value[0], depth + 1
    return depth


# --- dumps -------------------------------------------------------------------------------


def test_dumps_writes_compact_utf8_in_insertion_order() -> None:
    assert dumps({"b": 1, "a": [True, None, 1.5, "é"]}) == (
        '{"b":1,"a":[true,null,1.5,"é"]}'.encode()
    )


def test_dumps_accepts_frozen_values() -> None:
    assert dumps(snapshot({"k": [1, {"x": "y"}]})) == b'{"k":[1,{"x":"y"}]}'


def test_dumps_writes_a_lone_surrogate_as_an_escape() -> None:
    assert dumps("\ud800x") == b'"\\ud800x"'


def test_dumps_escapes_a_lone_surrogate_in_a_key_and_keeps_other_text() -> None:
    text = dumps({"k\udfff": ["é", "\ud83d"]})
    assert json.loads(text) == {"k\udfff": ["é", "\ud83d"]}


def test_dumps_writes_nesting_deeper_than_orjson_allows() -> None:
    value = deep_list(300, {"leaf": "é"})
    text = dumps(value)
    assert text == ("[" * 300 + '{"leaf":"\\u00e9"}' + "]" * 300).encode()


# --- loads -------------------------------------------------------------------------------


def test_loads_reads_bytes_and_str_into_plain_values() -> None:
    for text in (b'{"a":[1,2.5,null]}', '{"a":[1,2.5,null]}'):
        value = loads(text)
        assert value == {"a": [1, 2.5, None]}
        assert type(value) is dict
        assert type(value["a"]) is list


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('"\\ud800x"', "\ud800x"),
        (b'"\\udc00"', "\udc00"),
        ('{"k\\ud800":["\\udfff"]}', {"k\ud800": ["\udfff"]}),
        (b'["\\ud83d", 1]', ["\ud83d", 1]),
    ],
)
def test_loads_reads_lone_surrogate_escapes(text: str | bytes, value: Any) -> None:
    assert loads(text) == value


@pytest.mark.parametrize(
    "text",
    ["NaN", "[1, NaN]", "[Infinity]", "-Infinity", "", "{", "[1] x", "[1,]", "{'a': 1}", "nul"],
)
def test_loads_refuses_text_without_a_lossless_value(text: str) -> None:
    with pytest.raises(NotLosslessJson) as info:
        loads(text)
    assert str(info.value).startswith("invalid JSON text: ")


@pytest.mark.parametrize("text", ["1e400", "[1e400]", '{"n": -1e400}'])
def test_loads_refuses_a_number_that_overflows_a_double(text: str) -> None:
    with pytest.raises(NotLosslessJson):
        loads(text)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 2000 + "NaN" + "]" * 2000,
        "[" * 2000 + "1e400" + "]" * 2000,
        "[" * 2000 + "]" * 1999,
        '{"a":' * 1500 + "1,}" + "}" * 1499,
        "[" * 2000 + "1" + "]" * 2000 + " extra",
    ],
)
def test_loads_refuses_malformed_deep_text(text: str) -> None:
    with pytest.raises(NotLosslessJson):
        loads(text)


# --- round trips -------------------------------------------------------------------------


def test_a_3000_deep_list_round_trips() -> None:
    """Deeper than orjson reads (1024) and than the stdlib's recursion allows."""
    value = deep_list(3000, "\ud800")
    back = loads(dumps(value))
    assert _depth_of_lists(back) == 3000
    for _ in range(3000):
        back = back[0]
    assert back == "\ud800"


def test_a_2000_deep_dict_round_trips_with_whitespace() -> None:
    value = deep_dict(2000, [1, -2.5, None, True, "é\ud800"])
    text = dumps(value).decode("ascii").replace(":", " : ").replace("{", "{ ")
    back = loads(text)
    depth = 1
    while "k" in back:
        back = back["k"]
        depth += 1
    assert depth == 2000
    assert back == {"leaf": [1, -2.5, None, True, "é\ud800"]}


def test_a_mixed_deep_value_round_trips_exactly() -> None:
    value: Any = {"tail": "end"}
    for level in range(1200):
        value = [level, value] if level % 2 else {"n": level, "child": value}
    assert dumps(loads(dumps(value))) == dumps(value)


_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
_TEXT = st.text(st.one_of(st.characters(), _SURROGATES), max_size=6)
LOSSLESS = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        _TEXT,
        st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
        st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: str(f) != "-0.0"),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(_TEXT, children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=200)
@given(LOSSLESS)
def test_every_lossless_value_round_trips(value: Any) -> None:
    assert loads(dumps(value)) == value
    assert loads(dumps(snapshot(value))) == value


@settings(max_examples=30)
@given(LOSSLESS)
def test_every_lossless_value_round_trips_below_1100_levels(value: Any) -> None:
    back = loads(dumps(deep_list(1100, value)))
    for _ in range(1100):
        back = back[0]
    assert back == value
