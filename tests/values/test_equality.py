"""JSON equality and JavaScript-style text of values.

``json_equal`` is the comparison behind the tool-result rewrite guard (spec/core.md §5.5) and
the header comparison (§7.3): key order is irrelevant, arrays compare element-wise, a missing
key differs from a present one, ``1 == 1.0``, but a boolean never equals a number. ``js_text``
renders interpolated values the way the spec's ``${x}`` texts do (JavaScript template
literals), e.g. in ``session header version must be 4, got ${v}``.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog.values import js_text, json_equal, snapshot
from tests.values.support import deep_dict, deep_list


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        (1, 1.0),
        ([1, {"x": [None]}], [1.0, {"x": [None]}]),
        ("é", "é"),
        (None, None),
        ({}, {}),
        ([], []),
        ({"tags": ["a"]}, {"tags": ["a"]}),
    ],
)
def test_json_equal_values(a: Any, b: Any) -> None:
    assert json_equal(a, b)
    assert json_equal(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (True, 1),
        (False, 0),
        ([True], [1]),
        ({"v": False}, {"v": 0}),
        (None, False),
        (None, 0),
        ("1", 1),
        ([1, 2], [2, 1]),
        ([1], [1, 1]),
        ({"a": None}, {}),
        ({"left": 1}, {"right": 1}),
        ({"one": 1}, {"one": 1, "two": 2}),
        ({}, []),
        ([], ""),
        ({"tags": ["a"]}, {"tags": "a"}),
        ({"x": {"y": 1}}, {"x": {"y": 2}}),
    ],
)
def test_json_unequal_values(a: Any, b: Any) -> None:
    assert not json_equal(a, b)
    assert not json_equal(b, a)


def test_json_equal_compares_frozen_and_plain_values() -> None:
    plain = {"message": {"content": [{"type": "text", "text": "x"}]}}
    assert json_equal(snapshot(plain), plain)


def test_json_equal_walks_any_depth() -> None:
    assert json_equal(deep_list(5000, 1), deep_list(5000, 1.0))
    assert not json_equal(deep_list(5000, 1), deep_list(5000, True))
    assert json_equal(deep_dict(5000, "x"), deep_dict(5000, "x"))
    assert not json_equal(deep_dict(5000, "x"), deep_dict(4999, "x"))


# --- js_text -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (4, "4"),
        (-3, "-3"),
        (1.0, "1"),
        (4.0, "4"),
        (-0.0, "0"),
        (1.5, "1.5"),
        (0.1, "0.1"),
        (2.0**53, "9007199254740992"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (1e-7, "1e-7"),
        (5e-324, "5e-324"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        ("4", "4"),
        ("text", "text"),
        ({"a": 1}, "[object Object]"),
        ([1, None, [2, 3]], "1,,2,3"),
        ([], ""),
        (object(), "undefined"),
    ],
)
def test_js_text_renders_like_a_javascript_template_literal(value: Any, text: str) -> None:
    assert js_text(value) == text


def test_js_text_of_a_large_integral_float_uses_shortest_digits() -> None:
    assert js_text(2.0**60) == "1152921504606847000"
    assert js_text(1.2345678901234568e20) == "123456789012345680000"


def test_js_text_of_a_small_float_matches_javascript() -> None:
    assert js_text(1e-5) == "0.00001"
    assert js_text(1e-6) == "0.000001"
    assert js_text(1.5e-5) == "0.000015"
