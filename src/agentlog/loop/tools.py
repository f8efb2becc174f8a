"""Tools the model may call: ``@tool``, plain callables, and how one call is run.

Implements the per-call part of spec/plugins.md §4.6: arguments are parsed from the raw JSON
text the model produced (empty → ``{}``; invalid JSON → the raw string, which the loop reports
to the model as an error result); a tool's exception becomes an error result the model sees;
a synchronous tool runs in a worker thread so the loop stays responsive (and can be cancelled),
an ``async`` tool runs on the loop. The schema shown to the model comes from the type hints and
the docstring (``agentlog.loop.schema``), or is given explicitly.

Example:
    >>> @tool
    ... def add(a: int, b: int = 1) -> int:
    ...     '''Add two numbers.'''
    ...     return a + b
    >>> add.name, add.description, add.parameters["required"]
    ('add', 'Add two numbers.', ['a'])
    >>> add(2, 3)  # still a plain function for its own callers
    5
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import orjson

from agentlog.errors import NotLosslessJson
from agentlog.loop.inbox import user_message
from agentlog.loop.model import ToolSchema
from agentlog.loop.schema import function_schema
from agentlog.values import JsonValue, dumps, snapshot, thaw

__all__ = [
    "Tool",
    "ToolArgumentsError",
    "ToolResult",
    "as_tool",
    "as_tools",
    "parse_arguments",
    "render_output",
    "tool",
]


class ToolArgumentsError(ValueError):
    """The model's arguments for a tool call cannot be passed to the tool."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A function the model may call, with the schema it is shown (``ToolSchema``)."""

    name: str
    description: str
    parameters: Mapping[str, JsonValue]
    """The JSON schema of the arguments object."""
    function: Callable[..., Any] = field(repr=False)
    """What a call runs: sync (in a worker thread) or ``async`` (on the loop)."""
    exclusive: bool = False
    """Whether a call runs alone: the calls before it finish first, and the calls after it
    start only once it has finished (spec/plugins.md §4.6, the *exclusive* mode)."""
    is_async: bool = field(init=False, repr=False)
    """Whether calls are awaited on the loop (else run in a worker thread)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a tool needs a non-empty name, got {self.name!r}")
        if not callable(self.function):
            raise TypeError(f"tool {self.name!r}: function must be callable")
        object.__setattr__(self, "parameters", thaw(snapshot(dict(self.parameters))))
        object.__setattr__(self, "is_async", _is_async(self.function))

    def schema(self) -> ToolSchema:
        """The tool as the model sees it and ``request/header.tools`` logs it."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
        }

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function directly, as if it were not a tool."""
        return self.function(*args, **kwargs)

    async def run(self, arguments: JsonValue) -> Any:
        """Run one call with the parsed arguments; return what the function returned.

        Raises:
            ToolArgumentsError: the arguments are not a JSON object, or do not fit the
                function's signature.
            Exception: whatever the function raised.
        """
        if isinstance(arguments, str):
            raise ToolArgumentsError(f"arguments are not valid JSON: {arguments!r}")
        if not isinstance(arguments, dict):
            raise ToolArgumentsError(
                f"arguments must be a JSON object, got {type(arguments).__name__}"
            )
        plain = thaw(arguments)
        if not _fits(self.function, plain):
            try:
                _signature(self.function).bind(**plain)
            except TypeError as exc:
                raise ToolArgumentsError(f"arguments do not fit {self.name}: {exc}") from None
        if self.is_async:
            return await self.function(**plain)
        return await asyncio.to_thread(self.function, **plain)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What a tool may return to do more than answer (spec/plugins.md §4.6).

    Example:
        >>> ToolResult(output="saved", concludes_turn=True).concludes_turn
        True
    """

    output: Any = None
    """The result the model sees, as a plain return value would give it (``render_output``)."""
    additional_contexts: Sequence[Any] = ()
    """User messages queued for the next step (the ``next-step`` inbox, like ``steer``): text,
    content blocks or whole user messages; the turn takes another step to deliver them."""
    concludes_turn: bool = False
    """End the turn after this step instead of asking the model again (unless input waits)."""

    def __post_init__(self) -> None:
        contexts = self.additional_contexts
        if isinstance(contexts, (str, Mapping)):
            contexts = (contexts,)
        for context in contexts:
            user_message(context)  # refused now, not when the result is committed
        object.__setattr__(self, "additional_contexts", tuple(contexts))

    def context_messages(self) -> list[JsonValue]:
        """The additional contexts as user messages.

        Text and blocks get fresh ids each time, so one ``ToolResult`` may be returned by
        several calls.
        """
        return [user_message(context) for context in self.additional_contexts]


_signature = functools.lru_cache(maxsize=1024)(inspect.signature)
"""A function's signature, computed once (``inspect.signature`` is slow)."""

_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


@functools.lru_cache(maxsize=1024)
def _keywords(function: Callable[..., Any]) -> tuple[frozenset[str], frozenset[str], bool] | None:
    """Names taken by keyword, names required, whether ``**kwargs``; ``None``: positional-only.

    (A positional-only parameter makes ``_fits`` unsure: the caller then binds.)
    """
    names: set[str] = set()
    required: set[str] = set()
    var_keyword = False
    for parameter in _signature(function).parameters.values():
        if parameter.kind in _KEYWORD:
            names.add(parameter.name)
            if parameter.default is inspect.Parameter.empty:
                required.add(parameter.name)
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            var_keyword = True
        elif parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            return None
    return frozenset(names), frozenset(required), var_keyword


def _fits(function: Callable[..., Any], arguments: Mapping[str, Any]) -> bool:
    """Whether ``Signature.bind(**arguments)`` surely succeeds, found without binding.

    Binding builds an ``OrderedDict`` and walks every parameter, on every tool call; ``False``
    only means "bind to find out": the caller then binds, for the exact error.
    """
    keywords = _keywords(function)
    if keywords is None:
        return False
    names, required, var_keyword = keywords
    given = arguments.keys()
    return required <= given and (var_keyword or given <= names)


def _is_async(function: Callable[..., Any]) -> bool:
    while isinstance(function, functools.partial):
        function = function.func
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None)  # noqa: B004  # an object with async __call__
    )


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: Mapping[str, JsonValue] | None = None,
    exclusive: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: Mapping[str, JsonValue] | None = None,
    exclusive: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a function a tool: ``@tool`` or ``@tool(name=..., description=..., parameters=...)``.

    The name defaults to the function's, the description to its docstring (up to the first
    section such as ``Args:``), the parameters schema to one built from its type hints, with
    each argument described by its ``Args:`` entry. ``exclusive=True`` makes each call run
    alone, never beside another call of the same answer (``Tool.exclusive``).

    Raises:
        TypeError: when a type hint has no JSON schema and no ``parameters`` were given.
    """

    def make(fn: Callable[..., Any]) -> Tool:
        if parameters is not None:
            summary = inspect.getdoc(fn) or ""
            schema: Mapping[str, JsonValue] = parameters
            summary = summary.split("\n\n", 1)[0].strip()
        else:
            summary, schema = function_schema(fn)
        return Tool(
            name=name or str(getattr(fn, "__name__", type(fn).__name__)),
            description=description if description is not None else summary,
            parameters=schema,
            function=fn,
            exclusive=exclusive,
        )

    return make if function is None else make(function)


def as_tool(value: Tool | Callable[..., Any]) -> Tool:
    """A ``Tool`` as given, or a plain callable made one with ``tool``."""
    return value if isinstance(value, Tool) else tool(value)


def as_tools(values: Iterable[Tool | Callable[..., Any]]) -> list[Tool]:
    """Each value ``as_tool``.

    Raises:
        ValueError: two tools have the same name.
    """
    tools = [as_tool(value) for value in values]
    names = [t.name for t in tools]
    if len(set(names)) != len(names):
        raise ValueError(f"tool names must be unique, got {names}")
    return tools


def parse_arguments(raw: str) -> JsonValue:
    """The arguments of a call, per spec/plugins.md §4.6: empty → ``{}``; invalid → ``raw``."""
    if not raw.strip():
        return {}
    try:
        return snapshot(orjson.loads(raw))
    except (orjson.JSONDecodeError, NotLosslessJson):
        return raw


def render_output(value: Any) -> list[dict[str, Any]]:
    """A tool's return value as the content blocks of its result.

    A string is one text block; a list of content blocks (dicts with a ``type``) is kept as
    given; ``None`` is an empty text; anything else JSON-serializable is its JSON text.

    Raises:
        TypeError: for a value that is not lossless JSON (the call then fails).
    """
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if value is None:
        return [{"type": "text", "text": ""}]
    if (
        isinstance(value, list)
        and value
        and all(isinstance(block, dict) and isinstance(block.get("type"), str) for block in value)
    ):
        return [dict(block) for block in value]
    try:
        text = dumps(snapshot(value)).decode("utf-8", "surrogatepass")
    except NotLosslessJson as exc:
        raise TypeError(f"tool output is not JSON: {exc}") from None
    return [{"type": "text", "text": text}]
