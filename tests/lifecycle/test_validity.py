"""Provider validity of derived histories: every tool call answered exactly once, in place."""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import InvalidHistory, check_provider_history, history_problems
from agentlog import messages as m


def assistant(*calls: str) -> dict[str, Any]:
    data = m.assistant(
        [m.text("x"), *(m.tool_call(c, "t", "{}") for c in calls)],
        provider="p",
        model="x",
        turn=1,
        step=1,
    )
    return data["message"]  # type: ignore[no-any-return]  # a message mapping


def result(call: str) -> dict[str, Any]:
    return m.tool_result(call, "ok", turn=1, step=1)["message"]  # type: ignore[no-any-return]


def test_answered_calls_are_valid() -> None:
    history = [m.user("go"), assistant("a", "b"), result("b"), result("a"), assistant()]
    assert history_problems(history) == []
    check_provider_history(history)


@pytest.mark.parametrize(
    ("history", "problem"),
    [
        ([assistant("a")], "message 0: tool call 'a' is never answered"),
        (
            [assistant("a"), m.user("hi"), result("a")],
            "message 0: tool call 'a' is not answered before message 1",
        ),
        (
            [result("a")],
            "message 0: tool result for 'a' answers no tool call of the assistant "
            "message before it",
        ),
        ([assistant("a"), result("a"), result("a")], "message 2: tool call 'a' is answered twice"),
        ([assistant("a", "a"), result("a")], "message 0: tool call id 'a' appears twice"),
    ],
)
def test_broken_histories_are_reported(history: list[dict[str, Any]], problem: str) -> None:
    assert problem in history_problems(history)
    with pytest.raises(InvalidHistory) as raised:
        check_provider_history(history)
    assert raised.value.problems == tuple(history_problems(history))
