"""Frozen containers and ``thaw``: immutable JSON values and their plain, mutable copies.

Covers DESIGN decision 4 (stored values raise ``TypeError`` on mutation and are shared, never
copied again) and spec/core.md §18: ``FrozenDict``/``FrozenList`` behave as read-only ``dict`` /
``list``, compare equal to plain values, survive ``copy``/``pickle`` as themselves, and
``thaw`` turns any frozen value back into plain ``dict``/``list`` of any depth.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from agentlog import thaw
from agentlog.values import FrozenDict, FrozenList, is_frozen, snapshot
from tests.values.support import deep_dict, deep_list


def frozen_dict() -> Any:
    return snapshot({"a": 1, "nested": {"b": [1, 2]}})


def frozen_list() -> Any:
    return snapshot([3, 1, 2])


DICT_MUTATIONS: list[tuple[str, Callable[[Any], object]]] = [
    ("setitem", lambda d: d.__setitem__("a", 2)),
    ("delitem", lambda d: d.__delitem__("a")),
    ("ior", lambda d: d.__ior__({"c": 3})),
    ("clear", lambda d: d.clear()),
    ("pop", lambda d: d.pop("a")),
    ("popitem", lambda d: d.popitem()),
    ("setdefault", lambda d: d.setdefault("z", 1)),
    ("update", lambda d: d.update(c=3)),
]

LIST_MUTATIONS: list[tuple[str, Callable[[Any], object]]] = [
    ("setitem", lambda x: x.__setitem__(0, 9)),
    ("setitem slice", lambda x: x.__setitem__(slice(0, 1), [9])),
    ("delitem", lambda x: x.__delitem__(0)),
    ("iadd", lambda x: x.__iadd__([4])),
    ("imul", lambda x: x.__imul__(2)),
    ("append", lambda x: x.append(4)),
    ("extend", lambda x: x.extend([4])),
    ("insert", lambda x: x.insert(0, 4)),
    ("pop", lambda x: x.pop()),
    ("remove", lambda x: x.remove(3)),
    ("reverse", lambda x: x.reverse()),
    ("sort", lambda x: x.sort()),
    ("clear", lambda x: x.clear()),
]


@pytest.mark.parametrize(("name", "mutate"), DICT_MUTATIONS, ids=[n for n, _ in DICT_MUTATIONS])
def test_every_dict_mutator_raises_type_error(name: str, mutate: Callable[[Any], object]) -> None:
    value = frozen_dict()
    with pytest.raises(TypeError, match=r"FrozenDict is immutable; agentlog\.thaw\(\)"):
        mutate(value)
    assert value == {"a": 1, "nested": {"b": [1, 2]}}


@pytest.mark.parametrize(("name", "mutate"), LIST_MUTATIONS, ids=[n for n, _ in LIST_MUTATIONS])
def test_every_list_mutator_raises_type_error(name: str, mutate: Callable[[Any], object]) -> None:
    value = frozen_list()
    with pytest.raises(TypeError, match=r"FrozenList is immutable; agentlog\.thaw\(\)"):
        mutate(value)
    assert value == [3, 1, 2]


def test_augmented_assignment_on_a_frozen_value_raises() -> None:
    holder = frozen_dict()
    items = holder["nested"]["b"]
    with pytest.raises(TypeError):
        items += [3]
    assert holder["nested"]["b"] == [1, 2]


def test_reinitialising_a_frozen_value_raises() -> None:
    value = frozen_dict()
    items = frozen_list()
    with pytest.raises(TypeError):
        value.__init__({"b": 2})
    with pytest.raises(TypeError):
        items.__init__([9])


def test_frozen_values_read_and_compare_like_plain_ones() -> None:
    value = frozen_dict()
    assert isinstance(value, dict)
    assert value == {"a": 1, "nested": {"b": [1, 2]}}
    assert value["nested"]["b"][1] == 2
    assert next(iter(value.items())) == ("a", 1)
    assert frozen_list() == [3, 1, 2]
    assert sorted(frozen_list()) == [1, 2, 3]


def test_operations_that_build_a_new_value_give_plain_mutable_ones() -> None:
    value, items = frozen_dict(), frozen_list()
    merged = value | {"c": 3}
    added = items + [4]  # noqa: RUF005  # the operator itself is under test
    assert type(merged) is dict
    assert type(added) is list
    assert type(value.copy()) is dict
    assert type(items.copy()) is list
    merged["d"] = 4
    added.append(5)
    assert value == {"a": 1, "nested": {"b": [1, 2]}}


def test_copy_and_deepcopy_return_the_same_object() -> None:
    value = frozen_dict()
    assert copy.copy(value) is value
    assert copy.deepcopy(value) is value
    assert copy.deepcopy(value["nested"]["b"]) is value["nested"]["b"]


def test_pickle_round_trip_keeps_the_frozen_types() -> None:
    value = frozen_dict()
    back = pickle.loads(pickle.dumps(value))
    assert back == value
    assert type(back) is FrozenDict
    assert type(back["nested"]["b"]) is FrozenList


def test_orjson_serialises_frozen_values_natively() -> None:
    assert orjson.dumps(frozen_dict()) == b'{"a":1,"nested":{"b":[1,2]}}'


def test_is_frozen_tells_frozen_containers_from_plain_ones() -> None:
    assert is_frozen(frozen_dict())
    assert is_frozen(frozen_list())
    assert not is_frozen({"a": 1})
    assert not is_frozen([1])
    assert not is_frozen("text")


# --- thaw --------------------------------------------------------------------------------


def test_thaw_gives_a_deep_plain_mutable_copy() -> None:
    value = frozen_dict()
    plain = thaw(value)
    assert plain == value
    assert type(plain) is dict
    assert type(plain["nested"]) is dict
    assert type(plain["nested"]["b"]) is list
    plain["nested"]["b"].append(3)
    assert value["nested"]["b"] == [1, 2]


def test_thaw_returns_scalars_as_they_are() -> None:
    for scalar in (None, True, 0, 1.5, "x"):
        assert thaw(scalar) is scalar


def test_thaw_copies_plain_values_too() -> None:
    plain = {"xs": [1]}
    copied = thaw(plain)
    copied["xs"].append(2)
    assert plain == {"xs": [1]}


def test_thaw_handles_lone_surrogates() -> None:
    value = snapshot({"k\ud800": ["\udfff"]})
    plain = thaw(value)
    assert plain == {"k\ud800": ["\udfff"]}
    assert type(plain["k\ud800"]) is list


def test_thaw_handles_any_depth() -> None:
    plain = thaw(snapshot(deep_list(3000, {"x": 1})))
    for _ in range(3000):
        assert type(plain) is list
        plain = plain[0]
    assert plain == {"x": 1}
    assert type(plain) is dict
    bottom = thaw(snapshot(deep_dict(2000, 1)))
    while "k" in bottom:
        assert type(bottom) is dict
        bottom = bottom["k"]
    assert bottom == {"leaf": 1}
