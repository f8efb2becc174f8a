"""Safe integers, seqs and JSON paths.

A "safe integer" (spec/core.md §1.4) is an integral value in ±(2**53-1) that is not ``-0``; an
integral ``float`` such as ``1.0`` (JSON written elsewhere) counts, a ``bool`` never does. A
seq is a non-negative safe integer (§2.1). ``json_path`` renders the paths that
``NotLosslessJson`` reports.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog.values import MAX_SAFE_INTEGER, is_safe_integer, is_seq, json_path


def test_max_safe_integer_is_two_to_the_53_minus_one() -> None:
    assert MAX_SAFE_INTEGER == 2**53 - 1


@pytest.mark.parametrize(
    ("value", "safe", "seq"),
    [
        (0, True, True),
        (1, True, True),
        (-1, True, False),
        (MAX_SAFE_INTEGER, True, True),
        (-MAX_SAFE_INTEGER, True, False),
        (MAX_SAFE_INTEGER + 1, False, False),
        (-MAX_SAFE_INTEGER - 1, False, False),
        (0.0, True, True),
        (1.0, True, True),
        (-2.0, True, False),
        (-0.0, False, False),
        (0.5, False, False),
        (2.0**53, False, False),
        (float("nan"), False, False),
        (float("inf"), False, False),
        (True, False, False),
        (False, False, False),
        ("1", False, False),
        (None, False, False),
        ([1], False, False),
    ],
)
def test_safe_integers_and_seqs(value: Any, safe: bool, seq: bool) -> None:
    assert is_safe_integer(value) is safe
    assert is_seq(value) is seq


@pytest.mark.parametrize(
    ("keys", "path"),
    [
        ([], "$"),
        (["content", 1, "text"], "$.content[1].text"),
        (["a b", 0], "$['a b'][0]"),
        ([0, 0, "_x1"], "$[0][0]._x1"),
        (["1"], "$['1']"),
        (["é"], "$.é"),
    ],
)
def test_json_path_renders_keys_and_indexes(keys: list[str | int], path: str) -> None:
    assert json_path(keys) == path
