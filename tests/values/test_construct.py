"""``construct``: objects built from parsed JSON by a shape, in C and in pure Python alike.

Every test runs against both implementations (the C one when it is compiled), on plain
classes: the module knows no framework.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentlog.values import snapshot, thaw
from agentlog.values._construct import (
    FLAG,
    NUMBER,
    TEXT,
    TEXT_SET,
    Field,
    Shape,
    Unconstructible,
    c_construct,
    listed,
    mapping,
    nested,
    python_construct,
)

Construct = Callable[[Shape, Any], Any]

IMPLEMENTATIONS = [
    pytest.param(python_construct, id="python"),
    pytest.param(
        c_construct,
        id="c",
        marks=pytest.mark.skipif(c_construct is None, reason="the C accelerator is not built"),
    ),
]


class Record:
    """A class whose ``__setattr__`` refuses every write, as frozen models do."""

    __slots__ = ("__dict__", "extra", "given")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("read-only")

    def post(self, *args: Any) -> None:
        self.__dict__["posted"] = args


class Leaf(Record):
    __slots__ = ()


def _shape(
    cls: type,
    fields: dict[str, Field],
    *,
    template: dict[str, Any] | None = None,
    made: tuple[tuple[str, Any], ...] = (),
    required: tuple[str, ...] = (),
    nullable: frozenset[str] = frozenset(),
    post_init: tuple[Callable[..., Any], tuple[Any, ...]] | None = None,
) -> Shape:
    return Shape(
        cls=cls,
        template=template if template is not None else dict.fromkeys(fields),
        fields=fields,
        made=made,
        required=required,
        nullable=nullable,
        dict_attr="__dict__",
        keys_attr="given",
        constants=(("extra", "constant"),),
        post_init=post_init,
    )


LEAF = _shape(Leaf, {"name": TEXT, "on": FLAG}, template={"name": None, "on": False})
ROOT = _shape(
    Record,
    {
        "id": TEXT,
        "at": NUMBER,
        "tags": TEXT_SET,
        "args": mapping(thaw),
        "leaf": nested(LEAF),
        "leaves": listed(LEAF),
    },
    template={"id": None, "at": 0.0, "tags": None, "args": None, "leaf": None, "leaves": None},
    made=(("args", dict), ("leaves", list), ("leaf", LEAF)),
    required=("id",),
    nullable=frozenset({"note"}),
    post_init=(Record.post, (None, 2)),
)


@pytest.mark.parametrize("construct", IMPLEMENTATIONS)
def test_an_object_holds_its_values_in_template_order(construct: Construct) -> None:
    args = {"a": [1]}
    built = construct(
        ROOT,
        {
            "leaves": [{"name": "x"}, {"on": True}],
            "id": "r1",
            "at": 3,
            "tags": ["b", "a"],
            "args": args,
            "note": None,
        },
    )
    made: type = type(built)  # not narrowing ``built`` (its attributes are dynamic)
    assert made is Record
    assert list(built.__dict__) == ["id", "at", "tags", "args", "leaf", "leaves", "note", "posted"]
    assert built.id == "r1"
    assert built.at == 3.0
    assert type(built.at) is float
    assert built.tags == {"a", "b"}
    assert built.args is args, "an exact dict is the caller's to give: kept, not copied"
    assert built.note is None
    assert built.given == {"leaves", "id", "at", "tags", "args", "note"}
    assert built.extra == "constant"
    assert built.posted == (None, 2)
    first, second = built.leaves
    assert (type(first), first.__dict__, first.given) == (
        Leaf,
        {"name": "x", "on": False},
        {"name"},
    )
    assert second.__dict__ == {"name": None, "on": True}
    assert built.leaf.__dict__ == {"name": None, "on": False}
    assert built.leaf.given == set()


@pytest.mark.parametrize("construct", IMPLEMENTATIONS)
def test_defaults_made_per_instance_are_never_shared(construct: Construct) -> None:
    one, two = construct(ROOT, {"id": "a"}), construct(ROOT, {"id": "b"})
    assert one.args == {}
    assert one.leaves == []
    assert one.args is not two.args
    assert one.leaves is not two.leaves
    assert one.leaf is not two.leaf


@pytest.mark.parametrize("construct", IMPLEMENTATIONS)
def test_frozen_values_are_thawed_and_frozen_lists_read(construct: Construct) -> None:
    frozen = snapshot({"id": "r", "args": {"k": [1, {"v": 2}]}, "leaves": [{"name": "n"}]})
    built = construct(ROOT, frozen)
    assert type(built.args) is dict
    assert type(built.args["k"]) is list
    assert built.args == {"k": [1, {"v": 2}]}
    assert type(built.leaves) is list
    assert built.leaves[0].name == "n"


@pytest.mark.parametrize("construct", IMPLEMENTATIONS)
@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"at": 1.0}, id="a required key missing"),
        pytest.param({"id": "r", "other": 1}, id="a key outside the shape"),
        pytest.param({"id": "r", "other": None}, id="None for a key not nullable"),
        pytest.param({"id": 1}, id="a number for text"),
        pytest.param({"id": "r", "at": True}, id="a bool for a number"),
        pytest.param({"id": "r", "at": "1"}, id="text for a number"),
        pytest.param({"id": "r", "at": 10**400}, id="an integer no float holds"),
        pytest.param({"id": "r", "tags": ["a", 1]}, id="a number among text"),
        pytest.param({"id": "r", "tags": "ab"}, id="text for a set"),
        pytest.param({"id": "r", "args": [1]}, id="a list for an object"),
        pytest.param({"id": "r", "leaf": None}, id="None for a nested object"),
        pytest.param({"id": "r", "leaf": {"on": 1}}, id="a number for a flag, nested"),
        pytest.param({"id": "r", "leaves": [{"name": "x"}, {"x": 1}]}, id="a bad list entry"),
        pytest.param({"id": "r", "leaves": {"name": "x"}}, id="an object for a list"),
        pytest.param(["id"], id="not an object"),
    ],
)
def test_a_value_outside_the_shape_is_unconstructible(construct: Construct, value: Any) -> None:
    with pytest.raises(Unconstructible):
        construct(ROOT, value)


@pytest.mark.parametrize("construct", IMPLEMENTATIONS)
def test_errors_of_the_shapes_own_callables_pass_through(construct: Construct) -> None:
    def broken() -> Any:
        raise KeyError("factory")

    shape = _shape(Leaf, {"name": TEXT}, made=(("name", broken),))
    with pytest.raises(KeyError):
        construct(shape, {})
    assert construct(shape, {"name": "given"}).name == "given", "a given key needs no factory"


def test_both_implementations_agree_on_every_attribute() -> None:
    if c_construct is None:
        pytest.skip("the C accelerator is not built")
    value = {"id": "r", "at": 2.5, "tags": None, "leaf": {"name": "l", "on": True}}
    built, expected = c_construct(ROOT, dict(value)), python_construct(ROOT, dict(value))
    assert built.__dict__.keys() == expected.__dict__.keys()
    assert {k: v for k, v in built.__dict__.items() if k not in ("leaf", "args")} == {
        k: v for k, v in expected.__dict__.items() if k not in ("leaf", "args")
    }
    assert built.leaf.__dict__ == expected.leaf.__dict__
    assert (built.given, built.extra) == (expected.given, expected.extra)
