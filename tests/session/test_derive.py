"""Derived messages: the history the model sees, projected from the surface.

Covers spec/core.md §6: ``derive_event_message`` (user data itself; ``data.message`` for tool
results; ``None`` for empty assistant, system and developer messages and for log-only events)
and ``derive_messages`` (a fresh list of shared, immutable messages in surface order; its cache
always equals a replay; log-only events never influence it). §15 scenarios 33–39.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from agentlog import Session, derive_event_message
from agentlog import messages as m
from tests.session.support import (
    TC,
    TR,
    A,
    S,
    U,
    begin,
    begin_wire,
    call,
    clock,
    new_session,
    rep,
    wire,
)


def test_a_turn_with_a_tool_call_derives_user_assistant_tool() -> None:
    """§15 scenario 33."""
    session = new_session()
    session.append("turn/start", {"turn": 1})
    session.append("user/message", U("hello"), surface_op="append")
    session.append("step/start", {"turn": 1, "step": 1})
    blocks = [m.text("let me look"), m.tool_call("c1", "read", '{"path": "a"}')]
    session.append("assistant/message", A(blocks), surface_op="append")
    session.append("tool/call", TC("c1", "read", '{"path": "a"}'))
    session.append("tool/result", TR("c1", "ok"), surface_op="append")
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    messages = session.derive_messages()
    assert [msg["role"] for msg in messages] == ["user", "assistant", "tool"]
    assert messages[1]["content"] == blocks
    assert messages[2]["toolCallId"] == "c1"
    assert messages[2]["source"] == {"kind": "tool", "callId": "c1"}


def test_an_empty_assistant_message_is_a_node_without_a_message() -> None:
    """§15 scenario 34."""
    seed = [
        *begin_wire(),
        wire(
            "assistant/message",
            2,
            A([]) | {"usage": {"inputTokens": 5, "outputTokens": 0}},
            surfaceOp="append",
        ),
    ]
    session = Session.from_events("s", seed, clock=clock)
    assert session.surface.nodes == (2,)
    assert session.derive_messages() == []
    assert derive_event_message(session.events[2]) is None
    assert derive_event_message(session.events[1]) is None


@pytest.mark.parametrize(
    ("event_type", "data"),
    [
        ("system/message", S("")),
        ("developer/message", m.developer(turn=1, step=1)),
        ("assistant/message", A([])),
    ],
)
def test_empty_content_means_no_message(event_type: str, data: dict[str, Any]) -> None:
    session = new_session()
    begin(session)
    event = session.append(event_type, data, surface_op="append")
    assert derive_event_message(event) is None
    assert session.derive_messages() == []


def test_a_user_message_derives_its_data_itself() -> None:
    """§15 scenario 35."""
    session = new_session()
    event = session.append("user/message", U("hi"), surface_op="append")
    assert derive_event_message(event) is event.data
    assert session.derive_messages()[0] is event.data


def test_other_surface_types_derive_their_data_message() -> None:
    session = new_session()
    begin(session)
    call(session, "c1")
    result = session.append("tool/result", TR("c1", "x"), surface_op="append")
    reply = session.append("assistant/message", A("x"), surface_op="append")
    assert derive_event_message(result) is result.data["message"]
    assert derive_event_message(reply) is reply.data["message"]


def test_derivation_does_not_look_at_the_surface_op() -> None:
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    replacement = session.append(
        "user/message", U("b"), surface_op=rep(0, 0), source_event_seqs=[0]
    )
    assert derive_event_message(session.events[0]) is session.events[0].data
    assert derive_event_message(replacement) is replacement.data


def test_an_empty_tool_result_still_derives() -> None:
    session = new_session()
    begin(session)
    call(session, "c1")
    event = session.append("tool/result", TR("c1", []), surface_op="append")
    assert derive_event_message(event) is event.data["message"]


def test_log_only_events_derive_nothing() -> None:
    session = new_session()
    for event in (
        session.append("turn/start", {"turn": 1}),
        session.append("step/start", {"turn": 1, "step": 1}),
        session.append("todo/write", {"todos": []}),
    ):
        assert derive_event_message(event) is None


def test_the_derived_list_is_fresh_and_its_messages_shared_and_immutable() -> None:
    """§15 scenario 36."""
    session = new_session()
    begin(session)
    session.append("user/message", U("a"), surface_op="append")
    session.append("assistant/message", A("b"), surface_op="append")
    first = session.derive_messages()
    first.reverse()
    second = session.derive_messages()
    assert [msg["role"] for msg in second] == ["user", "assistant"]
    assert second is not first
    assert second[0] is first[1]
    with pytest.raises(TypeError):
        second[0]["content"][0]["text"] = "changed"
    with pytest.raises(TypeError):
        second[1]["content"].append(m.text("more"))


def test_the_cache_always_equals_a_replay() -> None:
    """§15 scenario 37: after every append, including an empty assistant and a replace."""
    session = new_session()
    begin(session)
    steps: list[tuple[str, Any, dict[str, Any]]] = [
        ("user/message", U("a"), {"surface_op": "append"}),
        ("assistant/message", A("b"), {"surface_op": "append"}),
        (
            "assistant/message",
            A([]) | {"usage": {"inputTokens": 1, "outputTokens": 0}},
            {"surface_op": "append"},
        ),
        ("user/message", U("c"), {"surface_op": "append"}),
        ("user/message", U("summary"), {"surface_op": rep(2, 4), "source_event_seqs": [2, 3, 4]}),
        ("user/message", U("d"), {"surface_op": "append"}),
    ]
    for index, (event_type, data, options) in enumerate(steps):
        session.append(event_type, data, **options)
        cached = session.derive_messages()
        replayed = Session.from_events(f"replay-{index}", session.events, clock=clock)
        assert cached == replayed.derive_messages()
    assert [msg["content"][0]["text"] for msg in session.derive_messages()] == [
        "summary",
        "c",
        "d",
    ]


def test_the_cache_is_rebuilt_after_a_replace_inside_already_derived_nodes() -> None:
    session = new_session()
    for text in "abc":
        session.append("user/message", U(text), surface_op="append")
    assert len(session.derive_messages()) == 3
    session.append("user/message", U("b2"), surface_op=rep(1, 1), source_event_seqs=[1])
    assert [msg["id"] for msg in session.derive_messages()] == ["u-a", "u-b2", "u-c"]


LOG_ONLY = [
    ("turn/start", {"turn": 1}),
    ("step/start", {"turn": 1, "step": 1}),
    ("assistant/attempt", {"turn": 1, "step": 1, "stream": []}),
    ("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "t", "arguments": "{}"}),
    ("step/end", {"turn": 1, "step": 1}),
    ("request/context", {"provider": "p", "model": "m"}),
]
MESSAGES = [
    ("user/message", U("q")),
    ("assistant/message", A([m.tool_call("c1", "t", "{}")])),
    ("tool/result", TR("c1", "r")),
    ("assistant/message", A("done")),
]


@pytest.mark.structure_free(
    "§15 scenario 38 compares the messages alone (a log that cannot be turn/step-structured) with "
    "the same messages among turn/step/attempt/tool-call/context events cycled in at arbitrary "
    "positions; their free placement, structure-breaking included, is what is varied"
)
@pytest.mark.parametrize("spacing", [(0, 0, 0, 0), (1, 0, 2, 0), (3, 1, 0, 2), (6, 6, 6, 6)])
def test_log_only_events_never_change_the_derived_messages(spacing: tuple[int, ...]) -> None:
    """§15 scenario 38."""
    plain = new_session("plain")
    for event_type, data in MESSAGES:
        plain.append(event_type, data, surface_op="append")
    mixed = new_session("mixed")
    filler = itertools.cycle(LOG_ONLY)
    for count, (event_type, data) in zip(spacing, MESSAGES, strict=True):
        for _ in range(count):
            mixed.append(*next(filler))
            mixed.derive_messages()
        mixed.append(event_type, data, surface_op="append")
    assert mixed.derive_messages() == plain.derive_messages()


def test_user_messages_of_any_source_derive_verbatim() -> None:
    """§15 scenario 39: no framing is added to injected context."""
    session = new_session()
    watcher = U("file changed", source={"kind": "watcher"})
    person = U("hi")
    session.append("user/message", watcher, surface_op="append")
    session.append("user/message", person, surface_op="append")
    derived = session.derive_messages()
    assert [msg["role"] for msg in derived] == ["user", "user"]
    assert derived == [watcher, person]


def test_extra_keys_of_a_user_message_are_part_of_the_message() -> None:
    """§2.3: for ``user/message`` the data is the message, extra keys included."""
    session = new_session()
    data = {**U("hi"), "meta": {"tag": 1}}
    session.append("user/message", data, surface_op="append")
    assert session.derive_messages()[0]["meta"] == {"tag": 1}
