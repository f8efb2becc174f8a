"""Request headers and contexts folded from the log.

Covers spec/core.md §7: ``canonical_header`` (§7.1), ``fold_request_header`` (§7.2) and its
memoised form ``Session.request_header()``, ``header_equals`` (§7.3), ``request_context()``
(§7.5), and the format-4 request-header data rules at append (E54–E57), whose refusal leaves
the folded header untouched. §15 scenarios 52–56.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agentlog import Session, canonical_header, fold_request_header, header_equals
from tests.session.support import assert_append_rejected, clock, new_session, wire

CONFIG = {"provider": "mock", "model": "mock"}
SEARCH = {"name": "search", "description": "Search.", "parameters": {"type": "object"}}


def header_data(header: dict[str, Any], reason: str = "initial") -> dict[str, Any]:
    return {"header": header, "reason": reason}


# --- canonical_header --------------------------------------------------------------------


def test_canonical_header_drops_empty_optionals_and_system() -> None:
    """§15 scenario 52."""
    canonical = canonical_header(
        {"config": CONFIG, "adapterDefaults": {}, "system": "", "tools": []}
    )
    assert canonical == {"config": CONFIG}


def test_canonical_header_keeps_true_markers_and_tools_as_given() -> None:
    defaults = {"maxTokens": True, "reasoningEffort": False}
    tools = [SEARCH]
    canonical = canonical_header({"config": CONFIG, "adapterDefaults": defaults, "tools": tools})
    assert canonical == {"config": CONFIG, "adapterDefaults": defaults, "tools": tools}
    assert canonical["adapterDefaults"] is defaults
    assert canonical["tools"] is tools
    assert canonical_header({"config": CONFIG, "adapterDefaults": {"maxTokens": False}}) == {
        "config": CONFIG
    }


def test_canonical_header_is_a_new_top_level_object() -> None:
    """spec/core.md §7.1: not deep-copied, but a new object: editing it leaves the input alone."""
    header = {"config": CONFIG, "system": "retired in format 4"}
    canonical = canonical_header(header)
    canonical["config"] = {}
    assert header["config"] is CONFIG
    assert "system" not in canonical


# --- header_equals -----------------------------------------------------------------------

BASE: dict[str, Any] = {
    "config": {**CONFIG, "maxTokens": 100, "stop": ["\n"]},
    "tools": [SEARCH, {"name": "read", "description": "Read.", "parameters": {}}],
}


def changed(**changes: Any) -> dict[str, Any]:
    value = copy.deepcopy(BASE)
    value.update(changes)
    return value


@pytest.mark.parametrize(
    "other",
    [
        copy.deepcopy(BASE),
        changed(config={"maxTokens": 100, "stop": ["\n"], **CONFIG}),
    ],
)
def test_equal_headers(other: dict[str, Any]) -> None:
    """§15 scenario 53: a deep copy; key order inside ``config`` is irrelevant."""
    assert header_equals(BASE, other)
    assert header_equals(other, BASE)


def test_empty_tools_equal_absent_tools() -> None:
    """§15 scenario 53."""
    assert header_equals({"config": CONFIG, "tools": []}, {"config": CONFIG})


@pytest.mark.parametrize(
    "other",
    [
        changed(config={**BASE["config"], "model": "other"}),
        changed(config={**BASE["config"], "reasoningEffort": "high"}),
        changed(config={**BASE["config"], "temperature": 0.5}),
        changed(config={**BASE["config"], "maxTokens": True}),
        changed(config={**BASE["config"], "stop": ["\n", "x"]}),
        changed(config={k: v for k, v in BASE["config"].items() if k != "stop"}),
        changed(adapterDefaults={"maxTokens": True}),
        changed(tools=list(reversed(BASE["tools"]))),
        changed(tools=[{**SEARCH, "description": "Find."}, BASE["tools"][1]]),
        changed(
            tools=[
                {"description": "Search.", "name": "search", "parameters": {"type": "object"}},
                BASE["tools"][1],
            ]
        ),
        changed(tools=BASE["tools"][:1]),
    ],
)
def test_unequal_headers(other: dict[str, Any]) -> None:
    """§15 scenario 53: model, added reasoningEffort, a maxTokens marker, tool order, a changed
    description, and key order inside a tool schema all make a different request."""
    assert not header_equals(BASE, other)
    assert not header_equals(other, BASE)


# --- fold_request_header and Session.request_header ---------------------------------------


def test_fold_request_header() -> None:
    """§15 scenario 54."""
    turn = wire("turn/start", 0, {"turn": 1})
    assert fold_request_header([turn]) is None
    start = {"config": CONFIG}
    assert fold_request_header([turn], start) is start
    events = [
        wire("request/header", 0, header_data({"config": CONFIG, "tools": [SEARCH]})),
        wire(
            "request/header", 1, header_data({"config": {**CONFIG, "model": "other"}, "tools": []})
        ),
    ]
    assert fold_request_header(events, start) == {"config": {**CONFIG, "model": "other"}}


def test_request_header_is_folded_memoised_and_immutable() -> None:
    session = new_session()
    assert session.request_header() is None
    session.append("turn/start", {"turn": 1})
    config = {**CONFIG, "maxTokens": 64}
    defaults = {"maxTokens": True}
    session.append(
        "request/header",
        header_data({"config": config, "adapterDefaults": defaults, "tools": [SEARCH]}),
    )
    first = session.request_header()
    assert first == {"config": config, "adapterDefaults": defaults, "tools": [SEARCH]}
    session.append("request/context", {"provider": "mock", "model": "mock"})
    assert session.request_header() is first
    with pytest.raises(TypeError):
        first["tools"].append({})
    session.append("request/header", header_data({"config": {**CONFIG, "model": "next"}}, "change"))
    assert session.request_header() == {"config": {**CONFIG, "model": "next"}}
    assert first == {"config": config, "adapterDefaults": defaults, "tools": [SEARCH]}
    assert session.request_header() == fold_request_header(session.events)


def test_request_header_is_folded_from_a_seed() -> None:
    seed = [
        wire("turn/start", 0, {"turn": 1}),
        wire("request/header", 1, header_data({"config": CONFIG})),
        wire("request/header", 2, header_data({"config": {**CONFIG, "model": "b"}}, "change")),
    ]
    session = Session.from_events("s", seed, clock=clock)
    assert session.request_header() == {"config": {**CONFIG, "model": "b"}}


@pytest.mark.parametrize("system", ["", " ", "prompt", None, [], {}])
def test_a_header_with_system_is_refused(system: Any) -> None:
    """§15 scenario 56 (E56): any value, even empty or null."""
    session = new_session()
    session.append("turn/start", {"turn": 1})
    session.append("request/header", header_data({"config": CONFIG}))
    before = session.request_header()
    assert_append_rejected(
        session,
        'session event "request/header" at seq 2 must omit header.system; use system/message',
        "request/header",
        header_data({"config": CONFIG, "system": system}),
    )
    assert session.request_header() is before


@pytest.mark.parametrize(
    ("data", "rule"),
    [
        (header_data({"config": CONFIG, "tools": []}), "must omit empty tools"),
        (header_data({"config": CONFIG, "adapterDefaults": {}}), "must omit empty adapterDefaults"),
        (None, "data must be an object"),
        ([header_data({"config": CONFIG})], "data must be an object"),
        ({"header": None, "reason": "initial"}, "header must be an object"),
        ({"header": [CONFIG], "reason": "initial"}, "header must be an object"),
    ],
)
def test_header_data_rules_at_append(data: Any, rule: str) -> None:
    """§15 scenario 56 (E54, E55, E57); ``request_header()`` stays as it was."""
    session = new_session()
    session.append("turn/start", {"turn": 1})
    session.append("request/header", header_data({"config": CONFIG}))
    assert_append_rejected(
        session, f'session event "request/header" at seq 2 {rule}', "request/header", data
    )


# --- request_context ---------------------------------------------------------------------


def test_request_context_folds_seeds_and_appends() -> None:
    """§15 scenario 55."""
    seed = [
        wire("turn/start", 0, {"turn": 1}),
        wire("request/context", 1, {"provider": "a", "model": "a", "contextWindow": 1000}),
        wire("request/context", 2, {"provider": "b", "model": "b", "contextWindow": 2000}),
        wire("turn/end", 3, {"turn": 1, "reason": {"kind": "completed"}}),
    ]
    session = Session.from_events("s", seed, clock=clock)
    assert session.request_context() == {"provider": "b", "model": "b", "contextWindow": 2000}
    session.append("turn/start", {"turn": 2})
    assert session.request_context()["contextWindow"] == 2000
    session.append(
        "request/context", {"provider": "c", "model": "c", "systemPromptUpdate": "in-history"}
    )
    context = session.request_context()
    assert context == {"provider": "c", "model": "c", "systemPromptUpdate": "in-history"}
    assert "contextWindow" not in context
    with pytest.raises(TypeError):
        context["contextWindow"] = 5


def test_request_context_is_none_before_the_first_record() -> None:
    session = new_session()
    session.append("turn/start", {"turn": 1})
    assert session.request_context() is None
