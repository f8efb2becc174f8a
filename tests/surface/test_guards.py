"""Surface guards: tool-result rewrites, the system head and developer header bindings.

Covers spec/core.md §5.5 (a ``tool/result`` replacement rewrites exactly one current tool
result and may change only its content: E23–E25), §5.6 (node 0 holding a system prompt may be
rewritten only by a one-node ``system/message``: E26), §9.3 (a developer message's
``headerSeq`` names an earlier ``request/header`` that defines every added tool: E59–E62) with
the developer data rules of §4 step 7 (E49–E53), and the check order of §5.4 step 6
(citations, then the tool-result guard, then the system head). §15 scenarios 28–31, 81–83.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import EventRejected, Session, fold_surface, thaw
from agentlog import messages as m
from tests.session.support import (
    TR,
    S,
    U,
    assert_append_rejected,
    begin,
    call,
    new_session,
    raises_exactly,
    rep,
    wire,
)

E25 = "tool/result surface replacement may change only content"
E26 = (
    "surface replace: node 0 holds the system prompt and may be rewritten only by a "
    "system/message over exactly that node"
)


def rewrite(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A plain copy of tool-result ``data`` with top-level ``changes`` and new content."""
    copy: dict[str, Any] = thaw(data)
    copy["message"]["content"] = [m.text("[pruned]")]
    copy.update(changes)
    return copy


def with_tool_result(data: dict[str, Any]) -> Session:
    """A session in turn 1/step 1 whose tool result ``data`` for call c1 is seq 3."""
    session = new_session()
    begin(session)
    call(session, "c1")
    session.append("tool/result", data, surface_op="append")
    return session


# --- tool-result rewrite guard (§5.5) ----------------------------------------------------


def test_a_content_only_rewrite_is_accepted() -> None:
    """§15 scenario 28."""
    original = TR("c1", "original", meta={"tags": ["a"]})
    session = with_tool_result(original)
    event = session.append(
        "tool/result", rewrite(original), surface_op=rep(3, 3), source_event_seqs=[3]
    )
    assert event.seq == 4
    assert session.surface.nodes == (4,)
    [message] = session.derive_messages()
    assert message["id"] == "r-c1"
    assert message["content"] == [m.text("[pruned]")]
    assert session.events[3].data == original


@pytest.mark.parametrize(
    ("original", "changed"),
    [
        (TR("c1", "x"), {"isError": True}),
        (TR("c1", "x"), {"id": "another-id"}),
        (TR("c1", "x"), {"toolCallId": "c2", "source": {"kind": "tool", "callId": "c2"}}),
        (TR("c1", "x"), {"source": {"kind": "tool", "callId": "c1", "extra": 1}}),
    ],
)
def test_a_rewrite_may_not_change_the_message_beyond_content(
    original: dict[str, Any], changed: dict[str, Any]
) -> None:
    """§15 scenario 29 (E25)."""
    session = with_tool_result(original)
    replacement = rewrite(original)
    replacement["message"].update(changed)
    assert_append_rejected(
        session, E25, "tool/result", replacement, surface_op=rep(3, 3), source_event_seqs=[3]
    )


@pytest.mark.parametrize(
    ("meta", "new_meta"),
    [
        ({"tags": ["a"]}, {"tags": ["b"]}),
        ({"left": 1}, {"right": 1}),
        ({"one": 1}, {"one": 1, "two": 2}),
        ({"tags": ["a"]}, {"tags": "a"}),
        ({"flag": 1}, {"flag": True}),
        ({"tags": ["a", "b"]}, {"tags": ["b", "a"]}),
    ],
)
def test_a_rewrite_may_not_change_meta(meta: Any, new_meta: Any) -> None:
    """§15 scenario 29 (E25): JSON equality, so ``1`` is not ``true``."""
    original = TR("c1", "x", meta=meta)
    session = with_tool_result(original)
    assert_append_rejected(
        session,
        E25,
        "tool/result",
        rewrite(original, meta=new_meta),
        surface_op=rep(3, 3),
        source_event_seqs=[3],
    )


@pytest.mark.parametrize(
    "changes", [{"turn": 2}, {"step": 2}, {"meta": {"k": 1}}, {"error": {"name": "E", "code": "Y"}}]
)
def test_a_rewrite_may_not_change_the_settlement_or_error(changes: dict[str, Any]) -> None:
    original = TR("c1", "x", err=True) | {"error": {"name": "E", "code": "X"}}
    session = with_tool_result(original)
    assert_append_rejected(
        session,
        E25,
        "tool/result",
        rewrite(original, **changes),
        surface_op=rep(3, 3),
        source_event_seqs=[3],
    )


@pytest.mark.parametrize(
    ("meta", "new_meta"),
    [
        ({"tags": ["a"]}, {"tags": ["a"]}),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ({"n": 1}, {"n": 1.0}),
    ],
)
def test_structurally_equal_data_counts_as_unchanged(meta: Any, new_meta: Any) -> None:
    """§15 scenario 29: freshly built equal meta is accepted; key order is irrelevant."""
    original = TR("c1", "x", meta=meta)
    session = with_tool_result(original)
    session.append(
        "tool/result",
        rewrite(original, meta=new_meta),
        surface_op=rep(3, 3),
        source_event_seqs=[3],
    )
    assert session.surface.nodes == (4,)


def test_a_rewrite_must_shadow_exactly_one_node() -> None:
    """§15 scenario 30 (E23)."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    session.append("user/message", U("b"), surface_op="append")
    assert_append_rejected(
        session,
        "tool/result surface replacement must rewrite exactly one current node",
        "tool/result",
        TR("c1", "x"),
        surface_op=rep(0, 1),
        source_event_seqs=[0, 1],
    )


def test_a_rewrite_must_target_a_tool_result() -> None:
    """§15 scenario 31 (E24)."""
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    assert_append_rejected(
        session,
        "tool/result surface replacement must target a current tool/result",
        "tool/result",
        TR("c1", "x"),
        surface_op=rep(0, 0),
        source_event_seqs=[0],
    )


def test_a_rewrite_of_a_rewrite_compares_with_the_current_node() -> None:
    original = TR("c1", "x")
    session = with_tool_result(original)
    session.append("tool/result", rewrite(original), surface_op=rep(3, 3), source_event_seqs=[3])
    again = rewrite(original)
    again["message"]["content"] = []
    session.append("tool/result", again, surface_op=rep(4, 4), source_event_seqs=[4, 3])
    assert session.surface.nodes == (5,)
    assert session.derive_messages()[0]["content"] == []


def test_citations_are_checked_before_the_tool_result_guard() -> None:
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    assert_append_rejected(
        session,
        "surface replace: sourceEventSeqs must include every shadowed surface node; missing 0",
        "tool/result",
        TR("c1", "x"),
        surface_op=rep(0, 0),
    )


# --- system head guard (§5.6) ------------------------------------------------------------


def test_emptying_the_system_head_removes_the_system_message() -> None:
    """§15 scenario 81."""
    session = new_session()
    begin(session)
    session.append("system/message", S("be brief"), surface_op="append")
    session.append("user/message", U("hi"), surface_op="append")
    assert [msg["role"] for msg in session.derive_messages()] == ["system", "user"]
    session.append("system/message", S(""), surface_op=rep(2, 2), source_event_seqs=[2])
    assert [msg["role"] for msg in session.derive_messages()] == ["user"]
    assert session.surface.nodes == (4, 3)


def test_a_new_system_prompt_replaces_the_head() -> None:
    """§15 scenario 82."""
    session = new_session()
    begin(session)
    session.append("system/message", S("v1"), surface_op="append")
    session.append("user/message", U("hi"), surface_op="append")
    session.append("system/message", S("v2"), surface_op=rep(2, 2), source_event_seqs=[2])
    assert session.surface.nodes == (4, 3)
    assert session.derive_messages()[0]["content"] == [m.text("v2")]


@pytest.mark.parametrize("event_type", ["user/message", "system/message", "developer/message"])
def test_the_head_may_not_be_compacted_with_later_nodes(event_type: str) -> None:
    """§15 scenario 82 (E26)."""
    data = {
        "user/message": U("summary"),
        "system/message": S("v2"),
        "developer/message": m.developer(turn=1, step=1, removals=["t"]),
    }[event_type]
    session = new_session()
    begin(session)
    session.append("system/message", S("v1"), surface_op="append")
    session.append("user/message", U("hi"), surface_op="append")
    assert_append_rejected(
        session, E26, event_type, data, surface_op=rep(2, 3), source_event_seqs=[2, 3]
    )


def test_only_a_system_message_may_rewrite_the_head() -> None:
    session = new_session()
    begin(session)
    session.append("system/message", S("v1"), surface_op="append")
    assert_append_rejected(
        session, E26, "user/message", U("x"), surface_op=rep(2, 2), source_event_seqs=[2]
    )


def test_an_empty_system_head_is_protected_too() -> None:
    session = new_session()
    begin(session)
    session.append("system/message", S(""), surface_op="append")
    session.append("user/message", U("hi"), surface_op="append")
    assert session.derive_messages()[0]["role"] == "user"
    assert_append_rejected(
        session, E26, "user/message", U("x"), surface_op=rep(2, 3), source_event_seqs=[2, 3]
    )


def test_later_system_nodes_and_a_non_system_head_can_be_compacted() -> None:
    """§15 scenario 82: only node 0 is protected, and only when it holds a system message."""
    session = new_session()
    begin(session)
    session.append("user/message", U("a"), surface_op="append")
    session.append("system/message", S("later"), surface_op="append")
    session.append("user/message", U("b"), surface_op="append")
    session.append("user/message", U("s1"), surface_op=rep(3, 4), source_event_seqs=[3, 4])
    session.append("user/message", U("s2"), surface_op=rep(2, 5), source_event_seqs=[2, 5])
    assert session.surface.nodes == (6,)


def test_a_system_message_that_became_the_head_is_protected() -> None:
    session = new_session()
    begin(session)
    session.append("user/message", U("a"), surface_op="append")
    session.append("user/message", U("b"), surface_op="append")
    session.append("system/message", S("sys"), surface_op=rep(2, 2), source_event_seqs=[2])
    assert session.surface.nodes == (4, 3)
    assert_append_rejected(
        session, E26, "user/message", U("x"), surface_op=rep(4, 3), source_event_seqs=[4, 3]
    )


def test_the_tool_result_guard_is_checked_before_the_system_head() -> None:
    session = new_session()
    begin(session)
    session.append("system/message", S("sys"), surface_op="append")
    assert_append_rejected(
        session,
        "tool/result surface replacement must target a current tool/result",
        "tool/result",
        TR("c1", "x"),
        surface_op=rep(2, 2),
        source_event_seqs=[2],
    )


@pytest.mark.parametrize(
    ("events", "error"),
    [
        (
            [
                wire("system/message", 0, S("v1"), surfaceOp="append"),
                wire("user/message", 1, U("hi"), surfaceOp="append"),
                wire("user/message", 2, U("s"), surfaceOp=rep(0, 1), sourceEventSeqs=[0, 1]),
            ],
            E26,
        ),
        (
            [
                wire("system/message", 0, S("v1"), surfaceOp="append"),
                wire("user/message", 1, U("hi"), surfaceOp="append"),
                wire("system/message", 2, S("v2"), surfaceOp=rep(0, 1), sourceEventSeqs=[0, 1]),
            ],
            E26,
        ),
    ],
)
def test_a_fold_refuses_a_head_rewrite_too(events: list[dict[str, Any]], error: str) -> None:
    """§15 scenario 82, through ``fold_surface``."""
    with raises_exactly(EventRejected, error):
        fold_surface(events)


# --- developer messages and their header binding (§9.3) -----------------------------------

SEARCH = {"name": "search", "description": "Search the web.", "parameters": {"type": "object"}}


def header_with(*tools: dict[str, Any]) -> dict[str, Any]:
    header: dict[str, Any] = {"config": {"provider": "mock", "model": "mock"}}
    if tools:
        header["tools"] = list(tools)
    return {"header": header, "reason": "initial"}


def with_header(*tools: dict[str, Any]) -> Session:
    """A session in turn 1/step 1 whose seq 2 is a request/header defining ``tools``."""
    session = new_session()
    begin(session)
    session.append("request/header", header_with(*tools))
    return session


def addition(name: str = "search", header_seq: int | None = 2) -> dict[str, Any]:
    return m.developer(turn=1, step=1, additions=[name], header_seq=header_seq, id="d1")


def test_a_tool_addition_bound_to_its_header_is_accepted_and_derived() -> None:
    """§15 scenario 83."""
    session = with_header(SEARCH)
    event = session.append("developer/message", addition(), surface_op="append")
    assert event.data["headerSeq"] == 2
    [message] = session.derive_messages()
    assert message["role"] == "developer"
    assert message["content"] == [{"type": "tool-addition", "toolName": "search"}]


def test_the_binding_is_to_the_historical_header() -> None:
    session = with_header(SEARCH)
    session.append("request/header", header_with({**SEARCH, "name": "other"}))
    session.append("developer/message", addition(header_seq=2), surface_op="append")
    assert session.surface.nodes == (4,)


@pytest.mark.parametrize(
    ("data", "rule"),
    [
        (addition(header_seq=None), "requires headerSeq exactly when tool additions are present"),
        (
            m.developer(turn=1, step=1, removals=["search"], header_seq=2),
            "requires headerSeq exactly when tool additions are present",
        ),
        (addition(name=""), "tool-addition requires a nonempty toolName"),
        (
            m.developer(turn=1, step=1, removals=[""]),
            "tool-removal requires a nonempty toolName",
        ),
    ],
)
def test_developer_data_rules_at_append(data: dict[str, Any], rule: str) -> None:
    """§15 scenario 83 (E51, E53), with the append subject."""
    session = with_header(SEARCH)
    assert_append_rejected(
        session,
        f'session event "developer/message" at seq 3 {rule}',
        "developer/message",
        data,
        surface_op="append",
    )


def test_an_inline_tool_definition_is_refused() -> None:
    """§15 scenario 83 (E52)."""
    session = with_header(SEARCH)
    data = addition()
    data["message"]["content"][0]["tool"] = SEARCH
    assert_append_rejected(
        session,
        'session event "developer/message" at seq 3 tool-addition must omit inline tool '
        "definitions",
        "developer/message",
        data,
        surface_op="append",
    )


def test_tool_change_blocks_and_the_developer_role_belong_together() -> None:
    """§15 scenario 83 (E49, E50)."""
    session = with_header(SEARCH)
    in_user = m.user([{"type": "tool-addition", "toolName": "search"}], id="u1")
    assert_append_rejected(
        session,
        'session event "user/message" at seq 3 tool-change blocks require developer role',
        "user/message",
        in_user,
        surface_op="append",
    )
    developer_role = {**U("x"), "role": "developer"}
    assert_append_rejected(
        session,
        'session event "user/message" at seq 3 developer/message and developer role must '
        "occur together",
        "user/message",
        developer_role,
        surface_op="append",
    )
    user_role = m.developer(turn=1, step=1, removals=["x"])
    user_role["message"]["role"] = "user"
    assert_append_rejected(
        session,
        'session event "developer/message" at seq 3 developer/message and developer role '
        "must occur together",
        "developer/message",
        user_role,
        surface_op="append",
    )


@pytest.mark.parametrize("header_seq", [1, 3, 99])
def test_header_seq_must_name_an_earlier_request_header(header_seq: int) -> None:
    """§15 scenario 83 (E59): a non-header (seq 1, ``step/start``), the event itself (3), the
    future (99)."""
    session = with_header(SEARCH)
    assert_append_rejected(
        session,
        "developer/message headerSeq must reference an earlier request/header",
        "developer/message",
        addition(header_seq=header_seq),
        surface_op="append",
    )


@pytest.mark.parametrize(
    "tools",
    [
        (),
        ({**SEARCH, "name": "other"},),
        (SEARCH, SEARCH),
    ],
)
def test_each_addition_must_name_exactly_one_header_tool(tools: tuple[dict[str, Any], ...]) -> None:
    """§15 scenario 83 (E60): missing, absent from the header, or ambiguous."""
    session = with_header(*tools)
    assert_append_rejected(
        session,
        'developer/message tool-addition "search" must name exactly one tool in headerSeq 2',
        "developer/message",
        addition(),
        surface_op="append",
    )


@pytest.mark.parametrize(
    "definition",
    [
        {"name": "search", "parameters": {}},
        {"name": "search", "description": "d"},
        {"name": "search", "description": 1, "parameters": {}},
        {"name": "search", "description": "d", "parameters": []},
    ],
)
def test_an_added_tool_needs_a_complete_definition(definition: dict[str, Any]) -> None:
    """§15 scenario 83 (E61)."""
    session = with_header(definition)
    assert_append_rejected(
        session,
        'developer/message tool-addition "search" requires a complete tool definition in '
        "headerSeq 2",
        "developer/message",
        addition(),
        surface_op="append",
    )


@pytest.mark.parametrize("defer", [False, None, "true", 1])
def test_defer_loading_must_be_true_when_present(defer: Any) -> None:
    """§15 scenario 83 (E62)."""
    session = with_header({**SEARCH, "deferLoading": defer})
    assert_append_rejected(
        session,
        "developer/message referenced tool deferLoading must be true when present",
        "developer/message",
        addition(),
        surface_op="append",
    )


def test_defer_loading_true_is_accepted() -> None:
    session = with_header({**SEARCH, "deferLoading": True})
    session.append("developer/message", addition(), surface_op="append")
    assert session.surface.nodes == (3,)


def test_the_first_failing_addition_is_reported() -> None:
    session = with_header(SEARCH)
    data = m.developer(turn=1, step=1, additions=["search", "ghost", "phantom"], header_seq=2)
    assert_append_rejected(
        session,
        'developer/message tool-addition "ghost" must name exactly one tool in headerSeq 2',
        "developer/message",
        data,
        surface_op="append",
    )


def test_an_empty_developer_message_stays_a_node_but_derives_nothing() -> None:
    """§15 scenario 83."""
    session = new_session()
    begin(session)
    session.append("developer/message", m.developer(turn=1, step=1), surface_op="append")
    assert session.surface.nodes == (2,)
    assert session.derive_messages() == []


def test_a_fold_checks_the_binding_too() -> None:
    header = wire("request/header", 0, header_with(SEARCH))
    good = wire("developer/message", 1, addition(header_seq=0), surfaceOp="append")
    assert fold_surface([header, good]).nodes == (1,)
    selfish = wire("developer/message", 0, addition(header_seq=0), surfaceOp="append")
    with raises_exactly(
        EventRejected, "developer/message headerSeq must reference an earlier request/header"
    ):
        fold_surface([selfish])
