"""The lossless-JSON snapshot: what it accepts, what it refuses, and where it says the problem is.

Covers spec/core.md §1 with the Python mapping of §1.4 and DESIGN decision 3: the accepted
domain, the refused values with their JSON paths, detaching (shared sub-objects become
independent copies), iterative walking of any depth, cycle detection, reuse of already-frozen
values, and the agreement of the three walkers — the C accelerator, the pure-Python fast path
and the diagnosing walker the public ``snapshot()`` falls back to. Last, ``share_strings()``,
the accelerator's memory saver for the stores' readers.
"""

from __future__ import annotations

import collections
import copy
import os
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlog import NotLosslessJson
from agentlog.values import (
    MAX_SAFE_INTEGER,
    FrozenDict,
    FrozenList,
    is_frozen,
    loads,
    share_strings,
    snapshot,
    snapshot_fast,
)
from agentlog.values._snapshot import _Reject, c_snapshot, python_snapshot
from tests.values.support import deep_dict, deep_list, needs_accelerator


def assert_same_tree(actual: Any, expected: Any) -> None:
    """Equal values with identical container types at every level (frozen vs plain matters)."""
    stack = [(actual, expected)]
    while stack:
        a, b = stack.pop()
        assert type(a) is type(b), (a, b)
        if isinstance(a, dict):
            assert list(a) == list(b)
            stack.extend((a[k], b[k]) for k in a)
        elif isinstance(a, list):
            assert len(a) == len(b)
            stack.extend(zip(a, b, strict=True))
        else:
            assert a == b


def assert_deeply_frozen(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            assert type(item) is FrozenDict
            stack.extend(item.values())
        elif isinstance(item, list):
            assert type(item) is FrozenList
            stack.extend(item)


# --- the accepted domain -----------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [None, True, False, "", "text \ud800", 0, -7, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 1.5, 0.0],
)
def test_scalars_in_the_domain_are_returned_as_they_are(value: Any) -> None:
    result = snapshot(value)
    assert result is value


def test_containers_become_deeply_frozen_equal_copies() -> None:
    value = {"id": "u1", "content": [{"type": "text", "text": "hi"}, [1, 2.5, None]], "n": {}}
    result = snapshot(value)
    assert result == value
    assert result is not value
    assert_deeply_frozen(result)


def test_the_copy_is_detached_from_the_input() -> None:
    value: dict[str, Any] = {"todos": [{"content": "a", "status": "pending"}]}
    result = snapshot(value)
    value["todos"][0]["status"] = "completed"
    value["extra"] = 1
    assert result == {"todos": [{"content": "a", "status": "pending"}]}


def test_the_input_stays_mutable() -> None:
    value: dict[str, Any] = {"xs": [1]}
    snapshot(value)
    value["xs"].append(2)
    assert value == {"xs": [1, 2]}


def test_shared_sub_objects_become_independent_copies() -> None:
    """§1.2: a DAG is accepted; each reference gets its own copy."""
    shared = {"k": [1, 2]}
    result = snapshot({"a": shared, "b": shared, "list": [shared, shared]})
    assert result["a"] == result["b"] == shared
    assert result["a"] is not result["b"]
    assert result["list"][0] is not result["list"][1]


def test_key_order_is_kept() -> None:
    assert list(snapshot({"b": 1, "a": 2, "c": 3})) == ["b", "a", "c"]


def test_already_frozen_values_are_reused_without_a_copy() -> None:
    """DESIGN decision 4: what snapshot() froze is accepted again as it is."""
    frozen = snapshot({"content": [{"type": "text", "text": "x"}]})
    assert snapshot(frozen) is frozen
    assert snapshot({"wrapped": frozen})["wrapped"] is frozen
    assert snapshot([frozen["content"]])[0] is frozen["content"]


def test_integral_float_is_kept_as_a_float() -> None:
    result = snapshot({"n": 1.0})
    assert type(result["n"]) is float


# --- refusals and their paths ------------------------------------------------------------


class DictSubclass(dict[str, Any]):
    pass


class ListSubclass(list[Any]):
    pass


class Custom:
    pass


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (float("nan"), "is nan (not a finite number)"),
        (float("inf"), "is inf (not a finite number)"),
        (float("-inf"), "is -inf (not a finite number)"),
        (-0.0, "is -0.0 (no JSON form)"),
        (MAX_SAFE_INTEGER + 1, "is 9007199254740992 (outside the safe integer range ±(2**53-1))"),
        (-MAX_SAFE_INTEGER - 1, "is -9007199254740992 (outside the safe integer range ±(2**53-1))"),
        (2**64, "is 18446744073709551616 (outside the safe integer range ±(2**53-1))"),
        ((1, 2), "is of type tuple (not a JSON type)"),
        ({1, 2}, "is of type set (not a JSON type)"),
        (frozenset(), "is of type frozenset (not a JSON type)"),
        (b"bytes", "is of type bytes (not a JSON type)"),
        (bytearray(b"x"), "is of type bytearray (not a JSON type)"),
        (Custom(), "is of type Custom (not a JSON type)"),
        (len, "is of type builtin_function_or_method (not a JSON type)"),
        (DictSubclass(), "is of type DictSubclass (a dict subclass, not plain JSON)"),
        (collections.OrderedDict(), "is of type OrderedDict (a dict subclass, not plain JSON)"),
        (ListSubclass(), "is of type ListSubclass (a list subclass, not plain JSON)"),
    ],
)
def test_values_outside_the_domain_are_refused_with_a_reason(value: Any, reason: str) -> None:
    with pytest.raises(NotLosslessJson) as info:
        snapshot(value)
    assert info.value.path == "$"
    assert info.value.reason == reason
    assert str(info.value) == f"value is not lossless JSON: $ {reason}"
    assert info.value.detail == f"$ {reason}"


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"content": [1, {"text": float("nan")}]}, "$.content[1].text"),
        ([1, [2, float("inf")]], "$[1][1]"),
        ({"a b": {"c": -0.0}}, "$['a b'].c"),
        ({"x": collections.OrderedDict()}, "$.x"),
        ([{"ok": 1}, {"bad": (1,)}], "$[1].bad"),
        ({"deep": {"f": len}}, "$.deep.f"),
        ({"n": [0, 2**53]}, "$.n[1]"),
    ],
)
def test_a_refusal_names_the_json_path_of_the_offending_value(value: Any, path: str) -> None:
    with pytest.raises(NotLosslessJson) as info:
        snapshot(value)
    assert info.value.path == path
    assert str(info.value).startswith(f"value is not lossless JSON: {path} is ")


def test_a_non_string_key_is_refused_naming_the_key() -> None:
    with pytest.raises(NotLosslessJson) as info:
        snapshot({"x": {"fine": 1, 7: 2}})
    assert info.value.path == "$.x"
    assert info.value.detail == "$.x has key 7 of type int (JSON object keys are strings)"


@pytest.mark.parametrize("key", [1, None, True, (1,), 1.5])
def test_every_non_string_key_type_is_refused(key: Any) -> None:
    with pytest.raises(NotLosslessJson):
        snapshot({key: 1})


def test_a_cycle_is_refused_at_the_key_that_closes_it() -> None:
    value: dict[str, Any] = {"a": [{"b": None}]}
    value["a"][0]["b"] = value["a"]
    with pytest.raises(NotLosslessJson) as info:
        snapshot(value)
    assert info.value.path == "$.a[0].b"
    assert info.value.reason == "refers back to an enclosing value (a cycle)"


def test_a_self_containing_dict_is_refused() -> None:
    value: dict[str, Any] = {}
    value["self"] = value
    with pytest.raises(NotLosslessJson) as info:
        snapshot(value)
    assert info.value.path == "$.self"


def test_a_deep_cycle_is_found_without_recursion_limits() -> None:
    root = deep_list(3000, None)
    bottom = root
    for _ in range(2999):
        bottom = bottom[0]
    bottom[0] = root
    with pytest.raises(NotLosslessJson) as info:
        snapshot(root)
    assert info.value.path == "$" + "[0]" * 3000
    assert info.value.reason == "refers back to an enclosing value (a cycle)"


def test_bool_is_kept_as_bool_not_turned_into_a_number() -> None:
    result = snapshot([True, 1, False, 0])
    assert [type(x) for x in result] == [bool, int, bool, int]


# --- depth -------------------------------------------------------------------------------


def test_5000_deep_lists_are_accepted_and_equal_the_input() -> None:
    """§1.3 / §15 scenario 2: no recursion-depth limit."""
    value = deep_list(5000, "bottom")
    result = snapshot(value)
    source, copy = value, result
    for _ in range(4999):
        assert type(copy) is FrozenList
        assert len(copy) == len(source) == 1
        source, copy = source[0], copy[0]
    assert copy == ["bottom"]


def test_20000_deep_dicts_are_accepted() -> None:
    """§1.3: 20 000-deep dicts are valid."""
    result = snapshot(deep_dict(20000, 1))
    depth = 1
    while "k" in result:
        assert type(result) is FrozenDict
        result = result["k"]
        depth += 1
    assert depth == 20000
    assert result == {"leaf": 1}


def test_a_deep_refusal_still_names_its_path() -> None:
    with pytest.raises(NotLosslessJson) as info:
        snapshot(deep_list(2000, float("nan")))
    assert info.value.path == "$" + "[0]" * 2000


# --- hand-built frozen containers --------------------------------------------------------


def test_frozen_containers_cannot_be_built_by_hand() -> None:
    """Only snapshot() builds frozen values, so holding one means holding validated JSON."""
    with pytest.raises(TypeError, match=r"built by agentlog\.values\.snapshot\(\)"):
        FrozenDict({"n": float("nan")})
    with pytest.raises(TypeError, match=r"built by agentlog\.values\.snapshot\(\)"):
        FrozenList([[1]])


def test_a_pickled_frozen_value_is_validated_again() -> None:
    frozen = snapshot({"xs": [1, {"a": None}]})
    copy = pickle.loads(pickle.dumps(frozen))
    assert copy == frozen
    assert is_frozen(copy)
    assert is_frozen(copy["xs"])


# --- the walkers agree -------------------------------------------------------------------


class _Opaque:
    def __repr__(self) -> str:
        return "_Opaque()"


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=4),
    st.integers(min_value=-(2**55), max_value=2**55),
    st.sampled_from([MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, float("nan"), float("inf"), 1e308]),
    st.sampled_from([b"x", frozenset({1}), _Opaque(), len]),
)
_KEYS = st.one_of(st.text(max_size=3), st.integers(-1, 1), st.none(), st.booleans())


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=3), children, max_size=4),
        st.dictionaries(_KEYS, children, max_size=3),
        st.tuples(children, children),
        st.lists(children, max_size=3).map(ListSubclass),
        st.dictionaries(st.text(max_size=3), children, max_size=3).map(DictSubclass),
        st.dictionaries(st.text(max_size=3), children, max_size=3).map(collections.OrderedDict),
    )


JSONISH = st.recursive(_SCALARS, _extend, max_leaves=25)
"""Values near the lossless domain: mostly valid, often not (NaN, -0.0, big ints, tuples...)."""

_VALID_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=4),
    st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: str(f) != "-0.0"),
)
VALID_JSON = st.recursive(
    _VALID_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=3), children, max_size=4)
    ),
    max_leaves=25,
)
WITH_FROZEN = st.recursive(st.one_of(_SCALARS, VALID_JSON.map(snapshot)), _extend, max_leaves=20)
"""Like ``JSONISH``, with frozen sub-values produced by ``snapshot()`` mixed in."""


def _outcome(walker: Any, value: Any) -> tuple[str, Any]:
    try:
        return ("ok", walker(value))
    except (_Reject, RecursionError) as exc:
        return ("raised", type(exc))


@pytest.mark.skipif(
    c_snapshot is None,
    reason="the C accelerator agentlog.values._speedups is not compiled here (or "
    "AGENTLOG_PURE_PYTHON is set), so there is nothing to compare",
)
@settings(max_examples=300)
@given(st.one_of(JSONISH, WITH_FROZEN))
def test_the_c_accelerator_and_the_python_fast_path_agree(value: Any) -> None:
    c_result = _outcome(c_snapshot, value)
    python_result = _outcome(python_snapshot, value)
    assert c_result[0] == python_result[0]
    if c_result[0] == "ok":
        assert_same_tree(c_result[1], python_result[1])
        assert c_result[1] == value


@settings(max_examples=200)
@given(st.one_of(JSONISH, WITH_FROZEN))
def test_public_snapshot_accepts_exactly_what_the_fast_path_accepts(value: Any) -> None:
    kind, expected = _outcome(python_snapshot, value)
    if kind == "ok":
        assert_same_tree(snapshot(value), expected)
    else:
        with pytest.raises(NotLosslessJson):
            snapshot(value)


@settings(max_examples=60)
@given(st.one_of(JSONISH, WITH_FROZEN))
def test_the_diagnosing_walker_agrees_with_the_fast_path(value: Any) -> None:
    """Nesting a value 1500 lists deep defeats both fast paths, so the iterative walker runs."""
    depth = 1500
    kind, expected = _outcome(python_snapshot, value)
    wrapped = deep_list(depth, value)
    if kind == "raised":
        with pytest.raises(NotLosslessJson) as info:
            snapshot(wrapped)
        assert info.value.path.startswith("$" + "[0]" * depth)
        return
    result = snapshot(wrapped)
    for _ in range(depth):
        assert type(result) is FrozenList
        result = result[0]
    assert_same_tree(result, expected)


@pytest.mark.skipif(
    c_snapshot is None,
    reason="the C accelerator agentlog.values._speedups is not compiled here",
)
def test_the_c_accelerator_hands_deep_values_back_to_python() -> None:
    accelerator = c_snapshot
    assert accelerator is not None
    value = deep_list(300, 1)
    with pytest.raises(_Reject):
        accelerator(value)
    assert is_frozen(snapshot(value))


def test_the_python_fast_path_hands_very_deep_values_back() -> None:
    value = deep_list(5000, 1)
    with pytest.raises(RecursionError):
        python_snapshot(value)
    assert is_frozen(snapshot(value))


def test_the_fast_paths_signal_instead_of_diagnosing() -> None:
    """The fast paths raise the internal signal; only the public function names the path."""
    value = {"content": [{"text": float("nan")}]}
    with pytest.raises(_Reject):
        python_snapshot(value)
    with pytest.raises(NotLosslessJson) as info:
        snapshot(value)
    assert info.value.path == "$.content[0].text"


def test_ci_builds_the_c_accelerator() -> None:
    """The accelerator tests skip where it is not compiled; CI always compiles it."""
    if os.environ.get("CI"):
        assert c_snapshot is not None


# --- sharing short strings (the stores' readers) ------------------------------------------


@needs_accelerator
def test_equal_short_values_of_parsed_records_become_one_object() -> None:
    text = b'{"message": {"role": "assistant", "content": [["text", "call-1"]]}}'
    first, second = loads(text), loads(text)
    assert first["message"]["role"] is not second["message"]["role"]
    share_strings(first)
    share_strings(second)
    assert first == second == loads(text)
    assert second["message"]["role"] is first["message"]["role"]
    assert second["message"]["content"][0][0] is first["message"]["content"][0][0]
    assert second["message"]["content"][0][1] is first["message"]["content"][0][1]


@needs_accelerator
def test_strings_longer_than_32_characters_are_left_alone() -> None:
    text = b'["' + b"x" * 33 + b'", "' + b"y" * 32 + b'"]'
    first, second = loads(text), loads(text)
    share_strings(first)
    share_strings(second)
    assert second[0] is not first[0]
    assert second[1] is first[1]


@needs_accelerator
def test_a_recurring_value_stays_shared_while_one_off_values_pass_through() -> None:
    share_strings(["assistant"])
    held = ["assistant"]
    share_strings(held)
    for index in range(20_000):  # ids: every set of the table sees several
        share_strings([f"id-{index}"])
        again = loads(b'["assistant"]')
        share_strings(again)
        assert again[0] is held[0]


@needs_accelerator
def test_frozen_values_and_keys_are_not_touched() -> None:
    """Frozen values are already shared by whoever holds them; keys cannot be swapped in place."""
    share_strings(["assistant"])  # the table holds an "assistant"
    frozen = snapshot({"role": "".join(["assis", "tant"])})  # another one
    role = frozen["role"]
    key = "".join(["ro", "le"])
    record = {"frozen": frozen, key: "".join(["assis", "tant"])}
    share_strings(record)
    assert record["frozen"] is frozen
    assert frozen["role"] is role
    assert record[key] is not role  # the plain value was shared with the table's
    assert next(iter(record.keys() - {"frozen"})) is key


@settings(max_examples=200)
@given(VALID_JSON)
def test_sharing_never_changes_a_value(value: Any) -> None:
    record = copy.deepcopy(value)
    share_strings(record)
    assert record == value
    assert_same_tree(record, value)


def _result(walker: Any, value: Any) -> tuple[str, Any]:
    try:
        return ("ok", walker(value))
    except NotLosslessJson as exc:
        return ("raised", str(exc))


@settings(max_examples=300)
@given(st.one_of(JSONISH, WITH_FROZEN))
def test_snapshot_fast_is_snapshot(value: Any) -> None:
    """The one-call entry (the accelerator, or ``snapshot`` itself) gives the same values and
    the same errors, path included."""
    fast, plain = _result(snapshot_fast, value), _result(snapshot, value)
    assert fast[0] == plain[0]
    if fast[0] == "ok":
        assert_same_tree(fast[1], plain[1])
    else:
        assert fast[1] == plain[1]
