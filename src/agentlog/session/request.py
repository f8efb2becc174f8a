"""Request headers and contexts folded from the log (spec/core.md §7).

Pure functions: ``canonical_header`` (§7.1), ``fold_request_header`` (§7.2) and
``header_equals`` (§7.3). ``Session.request_header()`` is their incremental, memoised form.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from agentlog.values import JsonValue, dumps, json_equal

__all__ = ["canonical_header", "fold_request_header", "header_equals"]

_ABSENT: Final[Any] = object()
_CONFIG_SCALARS: Final = ("provider", "model", "reasoningEffort", "temperature", "maxTokens")


def canonical_header(header: Mapping[str, Any]) -> dict[str, Any]:
    """The canonical form of an epoch header, as compared and folded (spec/core.md §7.1).

    Keeps ``config``, plus ``adapterDefaults`` only when it marks ``reasoningEffort`` or
    ``maxTokens`` as ``true``, plus ``tools`` only when nonempty (format 4: no ``system``).
    Returns a new plain dict whose values are the given objects, not copies;
    ``Session.request_header()`` is its frozen form.
    """
    canonical: dict[str, Any] = {"config": header.get("config")}
    defaults = header.get("adapterDefaults")
    if isinstance(defaults, dict) and (
        defaults.get("reasoningEffort") is True or defaults.get("maxTokens") is True
    ):
        canonical["adapterDefaults"] = defaults
    tools = header.get("tools")
    if isinstance(tools, list) and tools:
        canonical["tools"] = tools
    return canonical


def fold_request_header(events: Iterable[Mapping[str, Any]], start: JsonValue = None) -> JsonValue:
    """The canonical header in force after ``events`` (spec/core.md §7.2).

    That is the last ``request/header``'s, else ``start`` itself (the same object).
    """
    state = start
    for event in events:
        if event["type"] == "request/header":
            state = canonical_header(event["data"]["header"])
    return state


def header_equals(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Tell whether two epoch headers would make the same request (spec/core.md §7.3).

    Compares the call config (provider, model, reasoningEffort, temperature, maxTokens; ``stop``
    lists element-wise), the ``adapterDefaults`` markers, and the tool lists (absent equals
    empty) schema by schema as JSON text, so key order inside a schema matters.
    """
    config_a, config_b = a.get("config") or {}, b.get("config") or {}
    for key in _CONFIG_SCALARS:
        x, y = config_a.get(key, _ABSENT), config_b.get(key, _ABSENT)
        if (x is _ABSENT) != (y is _ABSENT) or (x is not _ABSENT and not json_equal(x, y)):
            return False
    stop_a, stop_b = config_a.get("stop", _ABSENT), config_b.get("stop", _ABSENT)
    if (stop_a is _ABSENT) != (stop_b is _ABSENT):
        return False
    if stop_a is not _ABSENT and not json_equal(stop_a, stop_b):
        return False
    for marker in ("reasoningEffort", "maxTokens"):
        if _marker(a, marker) != _marker(b, marker):
            return False
    tools_a, tools_b = a.get("tools") or [], b.get("tools") or []
    return len(tools_a) == len(tools_b) and all(
        dumps(x) == dumps(y) for x, y in zip(tools_a, tools_b, strict=True)
    )


def _marker(header: Mapping[str, Any], name: str) -> bool:
    defaults = header.get("adapterDefaults")
    return isinstance(defaults, dict) and defaults.get(name) is True
