"""Per-type data rules and shape checks, as texts without their subject.

Covers spec/core.md §4 step 7 (``validateSessionEventData``: E49–E58), the request-header
field checks of §7.4 (E34–E38), the settlement fields of §2.5 (E39) and the message shape check
of §9.2 (E40–E48, format 4). Every entry path prefixes these texts with its own subject
(``session event "<type>" at seq <n>``, ``seed <type> at index <i>``,
``session event at seq <n>``); the session and seed tests check the full texts.
``check_event_data`` runs only the data rules (what a fold checks); ``check_event`` runs both.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import messages as m
from agentlog.events import RuleViolation, check_event, check_event_data, event_message
from tests.session.support import TR, A, S, U


def violation(event_type: str, data: Any, *, shape: bool = True) -> str:
    check = check_event if shape else check_event_data
    with pytest.raises(RuleViolation) as info:
        check(event_type, data)
    return str(info.value)


def with_message(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``data`` with ``changes`` applied to ``data["message"]`` (``None`` removes a key)."""
    message = {**data["message"], **changes}
    return {**data, "message": {k: v for k, v in message.items() if v is not None}}


HEADER_CONFIG = {"provider": "mock", "model": "mock"}


def header_data(reason: Any = "initial", **header: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"header": {"config": HEADER_CONFIG, **header}}
    if reason is not None:
        data["reason"] = reason
    return data


# --- valid data passes -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event_type", "data"),
    [
        ("user/message", U("hi")),
        ("assistant/message", A("hi")),
        ("assistant/message", A([m.text("hi"), m.tool_call("c1", "bash", "{}")])),
        ("assistant/message", A([])),
        ("tool/result", TR("c1", "ok")),
        ("tool/result", TR("c1", "failed", err=True) | {"error": {"name": "E", "code": "X"}}),
        ("system/message", S("be brief")),
        ("system/message", S("")),
        ("developer/message", m.developer(turn=1, step=1, removals=["search"])),
        ("developer/message", m.developer(turn=1, step=1, additions=["search"], header_seq=0)),
        ("request/header", header_data()),
        ("request/header", header_data("series", tools=[{"name": "t"}])),
        ("assistant/attempt", {"turn": 1, "step": 1, "stream": []}),
        ("turn/start", {"turn": 1}),
        ("plugin/anything", None),
    ],
)
def test_valid_data_passes_every_rule(event_type: str, data: Any) -> None:
    check_event(event_type, data)
    check_event_data(event_type, data)


def test_user_message_sources_are_producer_owned() -> None:
    """§2.3 [F4]: any nonempty source kind passes (``runtime-context``, ``watcher``, ...)."""
    for kind in ("user", "runtime-context", "compact-checkpoint", "watcher"):
        check_event("user/message", U("x", source={"kind": kind}))


def test_unknown_block_types_pass() -> None:
    check_event("user/message", m.user([{"type": "plugin-block", "anything": [1]}], id="u"))


@pytest.mark.parametrize("block_type", [["tool-addition"], {"kind": "x"}, 1, None])
def test_a_block_whose_type_is_no_string_is_no_tool_change_block(block_type: Any) -> None:
    """Such a type is not hashable (or not a name): it is simply an unknown block."""
    check_event("user/message", m.user([{"type": block_type}], id="u"))
    developer = with_message(m.developer(turn=1, step=1), content=[{"type": block_type}])
    check_event("developer/message", developer)


# --- data rules (E49–E58) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("event_type", "data"),
    [
        ("developer/message", with_message(m.developer(turn=1, step=1), role="user")),
        ("user/message", {**U("x"), "role": "developer"}),
        ("assistant/message", with_message(A("x"), role="developer")),
        ("system/message", with_message(S("x"), role="developer")),
        ("tool/result", with_message(TR("c", "x"), role="developer")),
    ],
)
def test_developer_role_and_type_must_occur_together(event_type: str, data: Any) -> None:
    """E49."""
    assert violation(event_type, data) == "developer/message and developer role must occur together"


@pytest.mark.parametrize("block", ["tool-addition", "tool-removal"])
@pytest.mark.parametrize("event_type", ["user/message", "assistant/message", "system/message"])
def test_tool_change_blocks_require_the_developer_role(event_type: str, block: str) -> None:
    """E50."""
    base = (
        U("x")
        if event_type == "user/message"
        else (A("x") if "assistant" in event_type else S("x"))
    )
    content = [{"type": block, "toolName": "search"}]
    data = (
        {**base, "content": content}
        if event_type == "user/message"
        else with_message(base, content=content)
    )
    assert violation(event_type, data) == "tool-change blocks require developer role"


@pytest.mark.parametrize("name", ["", None, 1])
@pytest.mark.parametrize("block", ["tool-addition", "tool-removal"])
def test_tool_change_blocks_need_a_nonempty_tool_name(block: str, name: Any) -> None:
    """E51."""
    data = m.developer(turn=1, step=1, header_seq=0)
    data["message"]["content"] = [{"type": block, "toolName": name}]
    assert violation("developer/message", data) == f"{block} requires a nonempty toolName"


def test_a_tool_addition_must_not_inline_its_definition() -> None:
    """E52."""
    data = m.developer(turn=1, step=1, additions=["search"], header_seq=0)
    data["message"]["content"][0]["tool"] = {"name": "search"}
    assert violation("developer/message", data) == "tool-addition must omit inline tool definitions"


@pytest.mark.parametrize(
    "data",
    [
        m.developer(turn=1, step=1, additions=["search"]),
        m.developer(turn=1, step=1, removals=["search"], header_seq=0),
        m.developer(turn=1, step=1, header_seq=0),
        m.developer(turn=1, step=1, additions=["search"]) | {"headerSeq": -1},
        m.developer(turn=1, step=1, additions=["search"]) | {"headerSeq": "0"},
    ],
)
def test_header_seq_is_present_exactly_when_tools_are_added(data: Any) -> None:
    """E53; a headerSeq that is not a seq counts as absent."""
    assert (
        violation("developer/message", data)
        == "requires headerSeq exactly when tool additions are present"
    )


@pytest.mark.parametrize("event_type", ["request/header", "tool/result"])
@pytest.mark.parametrize("data", [None, 1, "x", [], True])
def test_request_header_and_tool_result_data_must_be_objects(event_type: str, data: Any) -> None:
    """E54."""
    assert violation(event_type, data) == "data must be an object"


@pytest.mark.parametrize("header", [None, 1, "x", [], False])
def test_the_request_header_must_be_an_object(header: Any) -> None:
    """E55."""
    assert violation("request/header", {"header": header, "reason": "initial"}) == (
        "header must be an object"
    )


@pytest.mark.parametrize("system", ["", " ", "prompt", None, [], {}])
def test_the_request_header_must_omit_system(system: Any) -> None:
    """E56: any value of ``header.system``, even null or empty."""
    assert violation("request/header", header_data(system=system)) == (
        "must omit header.system; use system/message"
    )


def test_the_request_header_must_omit_empty_optionals() -> None:
    """E57."""
    assert violation("request/header", header_data(tools=[])) == "must omit empty tools"
    assert violation("request/header", header_data(adapterDefaults={})) == (
        "must omit empty adapterDefaults"
    )


@pytest.mark.parametrize(
    "data",
    [
        TR("c", "x") | {"error": {"name": "E", "code": "X"}},
        TR("c", "x") | {"error": None},
        with_message(TR("c", "x"), isError=None) | {"error": {"name": "E", "code": "X"}},
        with_message(TR("c", "x"), isError=1) | {"error": {"name": "E", "code": "X"}},
        {"turn": 1, "step": 1, "error": {"name": "E", "code": "X"}},
        {"turn": 1, "step": 1, "message": "text", "error": {"name": "E", "code": "X"}},
    ],
)
def test_a_tool_error_requires_is_error_true(data: Any) -> None:
    """E58, also when the message is missing or malformed (§15 scenario 84)."""
    assert violation("tool/result", data) == "error requires message.isError === true"


def test_data_rules_run_before_shape_checks() -> None:
    """A tool-change block in a user message without an id reports the data rule."""
    data = {"role": "user", "content": [{"type": "tool-addition", "toolName": "t"}]}
    assert violation("user/message", data) == "tool-change blocks require developer role"


# --- shape checks (E34–E48) --------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        {"config": {"model": "old"}},
        {"config": {"provider": "mock"}},
        {"config": {"provider": "", "model": "m"}},
        {"config": {"provider": "p", "model": 1}},
        {"config": None},
        {},
    ],
)
def test_a_request_header_needs_provider_and_model(header: dict[str, Any]) -> None:
    """E34."""
    assert violation("request/header", {"header": header, "reason": "initial"}) == (
        "lacks provider/model"
    )


@pytest.mark.parametrize("effort", ["", 1, None, True])
def test_reasoning_effort_must_be_a_nonempty_string(effort: Any) -> None:
    """E35."""
    data = {"header": {"config": {**HEADER_CONFIG, "reasoningEffort": effort}}, "reason": "change"}
    assert violation("request/header", data) == "has an invalid reasoningEffort"


@pytest.mark.parametrize(
    "defaults",
    [
        None,
        [],
        {"unknown": True},
        {"maxTokens": False},
        {"reasoningEffort": True},
        {"maxTokens": 1},
    ],
)
def test_adapter_defaults_are_true_markers_backed_by_config(defaults: Any) -> None:
    """E36."""
    assert violation("request/header", header_data(adapterDefaults=defaults)) == (
        "has invalid adapterDefaults"
    )


def test_adapter_default_markers_backed_by_config_pass() -> None:
    config = {**HEADER_CONFIG, "maxTokens": 100, "reasoningEffort": "high"}
    check_event(
        "request/header",
        {
            "header": {
                "config": config,
                "adapterDefaults": {"maxTokens": True, "reasoningEffort": True},
            },
            "reason": "resume",
        },
    )


@pytest.mark.parametrize("reason", ["fallback", "unknown", None, 1, "", ["initial"], {}])
def test_the_header_reason_must_be_one_of_four(reason: Any) -> None:
    """E37; ``None`` here means the key is absent."""
    assert violation("request/header", header_data(reason)) == "has an invalid reason"


@pytest.mark.parametrize("marker", [False, 1, "true", None])
def test_starts_series_must_be_exactly_true(marker: Any) -> None:
    """E38."""
    data = header_data() | {"startsSeries": marker}
    assert violation("request/header", data) == "has an invalid startsSeries marker"


@pytest.mark.parametrize("event_type", ["assistant/attempt", "assistant/message"])
@pytest.mark.parametrize(
    "fields",
    [
        {"turn": None},
        {"step": -1},
        {"turn": True},
        {"step": -0.0},
        {"turn": 0.5},
        {"turn": 2**53},
        {"stream": None},
        {"stream": {}},
    ],
)
def test_settlement_fields_are_counters_and_a_stream_list(
    event_type: str, fields: dict[str, Any]
) -> None:
    """E39."""
    base = A("x") if event_type == "assistant/message" else {"turn": 1, "step": 1, "stream": []}
    data = {k: v for k, v in (base | fields).items() if v is not None}
    assert violation(event_type, data) == "has invalid settlement fields"


@pytest.mark.parametrize(
    ("event_type", "data"),
    [
        ("user/message", None),
        ("user/message", "text"),
        ("user/message", {"role": "user", "content": [], "source": {"kind": "user"}}),
        ("user/message", {**U("x"), "id": ""}),
        ("user/message", {**U("x"), "id": 7}),
        ("assistant/message", A("x") | {"message": None}),
        ("assistant/message", with_message(A("x"), id="")),
        ("tool/result", {"turn": 1, "step": 1}),
        ("system/message", with_message(S("x"), id=None)),
    ],
)
def test_a_message_needs_a_nonempty_string_id(event_type: str, data: Any) -> None:
    """E40."""
    assert violation(event_type, data) == "lacks an identified message"


@pytest.mark.parametrize(
    ("event_type", "data", "role"),
    [
        ("user/message", {**U("x"), "role": "assistant"}, "user"),
        ("assistant/message", with_message(A("x"), role="user"), "assistant"),
        ("tool/result", with_message(TR("c", "x"), role="user"), "tool"),
        ("system/message", with_message(S("x"), role="user"), "system"),
        ("user/message", {k: v for k, v in U("x").items() if k != "role"}, "user"),
    ],
)
def test_the_role_must_match_the_event_type(event_type: str, data: Any, role: str) -> None:
    """E41."""
    assert violation(event_type, data) == f'message must have role "{role}"'


@pytest.mark.parametrize("source", [None, "user", {}, {"kind": ""}, {"kind": 1}])
def test_a_message_needs_a_source_with_a_kind(source: Any) -> None:
    """E42."""
    assert violation("user/message", {**U("x"), "source": source}) == "message has invalid source"


@pytest.mark.parametrize("content", ["x", None, {}])
def test_message_content_must_be_a_list(content: Any) -> None:
    """E43."""
    assert violation("user/message", {**U("x"), "content": content}) == (
        "message has invalid content"
    )


@pytest.mark.parametrize(
    "source",
    [
        {"kind": "user"},
        {"kind": "model", "provider": "mock"},
        {"kind": "model", "model": "mock"},
        {"kind": "model", "provider": "", "model": "mock"},
    ],
)
def test_an_assistant_message_needs_a_model_source(source: dict[str, Any]) -> None:
    """E44."""
    assert violation("assistant/message", with_message(A("x"), source=source)) == (
        "message must have model source"
    )


@pytest.mark.parametrize(
    "source", [{"kind": "user"}, {"kind": "tool"}, {"kind": "tool", "callId": ""}]
)
def test_a_tool_result_needs_a_tool_source(source: dict[str, Any]) -> None:
    """E45."""
    assert violation("tool/result", with_message(TR("c", "x"), source=source)) == (
        "message must have tool source"
    )


@pytest.mark.parametrize("tool_call_id", ["other", None])
def test_tool_call_ids_must_match(tool_call_id: Any) -> None:
    """E47: ``toolCallId`` equals ``source.callId`` (format 4, on the message)."""
    data = with_message(TR("c1", "x"), toolCallId=tool_call_id)
    assert violation("tool/result", data) == "message has mismatched tool call ids"


@pytest.mark.parametrize("kind", ["runtime-context", "user", "model"])
def test_a_system_message_needs_a_system_prompt_source(kind: str) -> None:
    """E48."""
    assert violation("system/message", with_message(S("x"), source={"kind": kind})) == (
        "message must have system-prompt source"
    )


def test_data_rules_alone_skip_the_shape_checks() -> None:
    """What a fold checks: E49–E58 only; an unidentified message or a bare header passes."""
    check_event_data("user/message", {"content": "not a list"})
    check_event_data("request/header", {"header": {"config": {}}})
    check_event_data("assistant/attempt", None)
    assert violation("request/header", 1, shape=False) == "data must be an object"
    assert violation("user/message", {"role": "developer"}, shape=False) == (
        "developer/message and developer role must occur together"
    )


# --- event_message ------------------------------------------------------------------------


def test_event_message_finds_the_message_of_each_surface_type() -> None:
    user = U("x")
    assert event_message("user/message", user) is user
    assistant = A("x")
    assert event_message("assistant/message", assistant) is assistant["message"]
    assert event_message("tool/result", {"turn": 1}) is None
    assert event_message("tool/result", None) is None
    assert event_message("user/message", None) is None
