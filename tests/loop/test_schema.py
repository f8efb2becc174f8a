"""Tool argument schemas from signatures, type hints and Google-style docstrings."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

import pytest

from agentlog.loop.schema import function_schema, type_schema


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(TypedDict):
    x: int
    y: int


@dataclass
class Box:
    width: float
    label: str = ""


@pytest.mark.parametrize(
    ("annotation", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (Any, {}),
        (list[str], {"type": "array", "items": {"type": "string"}}),
        (tuple[int, str], {
            "type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "minItems": 2, "maxItems": 2,
        }),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (str | None, {"type": ["string", "null"]}),
        (list[int] | str, {
            "anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "string"}],
        }),
        (Literal["a", "b"], {"enum": ["a", "b"]}),
        (Color, {"enum": ["red", "blue"]}),
        (Point, {
            "type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
        }),
        (Box, {
            "type": "object",
            "properties": {"width": {"type": "number"}, "label": {"type": "string"}},
            "required": ["width"],
        }),
    ],
)  # fmt: skip
def test_annotations_map_to_json_schema(annotation: Any, schema: dict[str, Any]) -> None:
    assert type_schema(annotation) == schema


def test_a_function_schema_has_required_defaults_and_argument_descriptions() -> None:
    def search(query: str, limit: int = 10, *args: Any, exact: bool = False, **kw: Any) -> str:
        """Search the index.

        Longer explanation that the model also sees.

        Args:
            query: What to look for; may span
                two lines.
            limit (int): How many hits.

        Returns:
            The hits.
        """
        return ""

    description, parameters = function_schema(search)
    assert description == "Search the index.\n\nLonger explanation that the model also sees."
    assert parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for; may span two lines."},
            "limit": {"type": "integer", "description": "How many hits.", "default": 10},
            "exact": {"type": "boolean", "default": False},
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def test_an_unschematic_annotation_names_the_parameter() -> None:
    def bad(callback: type) -> None:
        """Nope."""

    with pytest.raises(TypeError, match=r"parameter 'callback' of .*bad: no JSON schema"):
        function_schema(bad)
