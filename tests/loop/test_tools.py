"""Tools: the ``@tool`` decorator, plain callables, argument parsing and output rendering."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from agentlog import tool
from agentlog.loop.tools import (
    Tool,
    ToolArgumentsError,
    ToolResult,
    as_tool,
    parse_arguments,
    render_output,
)


def test_tool_takes_name_description_and_schema_from_the_function() -> None:
    @tool
    def read_file(path: str) -> str:
        """Read a UTF-8 text file.

        Args:
            path: Where it is.
        """
        return path

    assert isinstance(read_file, Tool)
    assert read_file.schema() == {
        "name": "read_file",
        "description": "Read a UTF-8 text file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Where it is."}},
            "required": ["path"],
            "additionalProperties": False,
        },
    }
    assert read_file("x") == "x"  # still callable directly


def test_explicit_name_description_and_parameters_win() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}

    @tool(name="find", description="Find it.", parameters=schema)
    def anything(**kwargs: object) -> str:
        """Ignored docstring."""
        return "x"

    assert (anything.name, anything.description, anything.parameters) == (
        "find",
        "Find it.",
        schema,
    )


def test_a_plain_callable_becomes_a_tool() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    assert as_tool(ping).name == "ping"
    assert as_tool(as_tool(ping)).name == "ping"


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [("", {}), ("  ", {}), ('{"a": 1}', {"a": 1}), ("[1]", [1]), ('{"a": ', '{"a": ')],
)
def test_arguments_are_parsed_per_the_spec(raw: str, parsed: object) -> None:
    """§4.6: empty → {}; invalid JSON → the raw string."""
    assert parse_arguments(raw) == parsed


def test_run_passes_the_arguments_and_refuses_what_does_not_fit() -> None:
    @tool
    async def add(a: int, b: int = 1) -> int:
        """Add."""
        return a + b

    assert asyncio.run(add.run({"a": 2})) == 3
    with pytest.raises(ToolArgumentsError, match="not valid JSON"):
        asyncio.run(add.run('{"a'))
    with pytest.raises(ToolArgumentsError, match="must be a JSON object, got list"):
        asyncio.run(add.run([1]))
    with pytest.raises(ToolArgumentsError, match="do not fit add"):
        asyncio.run(add.run({"c": 1}))


def _keyword_only(x: int, *, y: int) -> None: ...
def _var_keyword(x: int, **rest: int) -> None: ...
def _positional_only(x: int, /, y: int = 0) -> None: ...
def _var_positional(*rest: int, x: int) -> None: ...


@pytest.mark.parametrize(
    "function", [_keyword_only, _var_keyword, _positional_only, _var_positional]
)
@pytest.mark.parametrize("arguments", [{}, {"x": 1}, {"y": 1}, {"x": 1, "y": 1}, {"x": 1, "z": 1}])
def test_arguments_fit_exactly_when_the_signature_binds_them(
    function: Callable[..., Any], arguments: dict[str, Any]
) -> None:
    # The fast check never lets through what binding refuses, and the refusal is binding's.
    try:
        inspect.signature(function).bind(**arguments)
        refusal = None
    except TypeError as exc:
        refusal = f"arguments do not fit {function.__name__}: {exc}"
    call = Tool(name=function.__name__, description="", parameters={}, function=function)
    if refusal is None:
        asyncio.run(call.run(arguments))
    else:
        with pytest.raises(ToolArgumentsError) as raised:
            asyncio.run(call.run(arguments))
        assert str(raised.value) == refusal


@pytest.mark.parametrize(
    ("value", "blocks"),
    [
        ("hi", [{"type": "text", "text": "hi"}]),
        (None, [{"type": "text", "text": ""}]),
        ({"n": 1}, [{"type": "text", "text": '{"n":1}'}]),
        (3, [{"type": "text", "text": "3"}]),
        ([{"type": "text", "text": "a"}], [{"type": "text", "text": "a"}]),
    ],
)
def test_outputs_render_as_content_blocks(value: object, blocks: list[dict[str, str]]) -> None:
    assert render_output(value) == blocks


def test_an_output_that_is_not_json_fails_the_call() -> None:
    with pytest.raises(TypeError, match="not JSON"):
        render_output({1, 2})


def test_a_tool_needs_a_name() -> None:
    with pytest.raises(ValueError, match="non-empty name"):
        Tool(name="", description="", parameters={}, function=print)


def test_a_tool_result_checks_its_contexts_when_made() -> None:
    result = ToolResult(output="ok", additional_contexts="one context")
    assert result.additional_contexts == ("one context",)
    with pytest.raises(ValueError, match="a queued message must be a user message"):
        ToolResult(additional_contexts=[{"role": "assistant"}])


def test_one_tool_result_may_be_returned_by_several_calls() -> None:
    """Text contexts become messages with fresh ids at each commit (no duplicate pending id)."""
    shared = ToolResult(output="ok", additional_contexts=["note"])
    first, second = shared.context_messages(), shared.context_messages()
    assert first[0]["id"] != second[0]["id"]
    assert first[0]["content"] == second[0]["content"]


def test_exclusive_is_a_tool_option() -> None:
    @tool(exclusive=True, name="apply_patch")
    def patch(diff: str) -> str:
        """Apply a patch to the working tree."""
        return diff

    assert patch.exclusive
    assert patch.name == "apply_patch"
    assert not tool(patch.function).exclusive
