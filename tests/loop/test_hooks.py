"""The pre-step and turn-stopping hooks (spec/plugins.md §4.3, §4.10; §8 scenarios 50, 51)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentlog import Agent, check_provider_history
from agentlog.loop import Continue, Enter, PreStep, Reject, TurnStopping
from agentlog.loop.hooks import run_pre_step_hooks, run_turn_stopping_hooks
from agentlog.loop.inbox import user_message
from agentlog.providers import Scripted
from tests.loop.support import new_session, of_type, plain, text_of, types


def test_a_rejected_step_ends_the_turn_blocked_without_a_step() -> None:
    """Scenario 51: turn/start, the claim, turn/end {blocked}; the prompt is consumed."""
    model = Scripted(["never"])
    agent = Agent(new_session(), model)
    seen: list[PreStep] = []

    def gate(pre: PreStep) -> Reject:
        seen.append(pre)
        return Reject()

    agent.add_pre_step_hook(gate)
    result = asyncio.run(agent.run("hi"))
    assert types(result.events) == [
        "agent/inbox/spliced", "turn/start", "agent/inbox/spliced", "turn/end",
    ]  # fmt: skip
    assert plain(result.events[-1].data["reason"]) == {"kind": "blocked"}
    assert result.reason == "blocked"
    assert model.requests == []
    ((pre),) = seen
    assert (pre.turn, pre.step) == (1, 1)
    assert [text_of(m) for m in pre.messages] == ["hi"]
    assert asyncio.run(agent.run()).events == ()  # nothing pending: the prompt was consumed


def test_input_queued_during_a_rejected_step_stays_pending_for_the_next_turn() -> None:
    agent = Agent(new_session(), Scripted(["answered"]))
    calls = 0

    def gate(pre: PreStep) -> Reject | None:
        nonlocal calls
        calls += 1
        if calls == 1:
            agent.inject("later")
            return Reject()
        return None

    agent.add_pre_step_hook(gate)
    result = asyncio.run(agent.run("first"))
    ends = [plain(e.data["reason"])["kind"] for e in of_type(result.events, "turn/end")]
    assert ends == ["blocked", "completed"]
    users = [text_of(e.data) for e in of_type(result.events, "user/message")]
    assert users == ["later"]  # the rejected prompt is not re-emitted
    assert result.text == "answered"


def test_hooks_form_a_waterfall_and_may_start_a_request_series() -> None:
    model = Scripted([Scripted.call("noop", {}), "done"])
    agent = Agent(new_session(), model, tools=[lambda: "ok"])
    agent.tools = [agent.tools[0]]
    seen: list[list[str]] = []

    def first(pre: PreStep) -> Enter | None:
        if pre.step == 1:
            return Enter(messages=(*pre.messages, "Remember the rules."))
        return Enter(starts_request_series=True)

    async def second(pre: PreStep) -> None:
        seen.append([text_of(m) for m in pre.messages])

    agent.add_pre_step_hook(first)
    agent.add_pre_step_hook(second)
    result = asyncio.run(agent.run("go"))
    assert seen == [["go", "Remember the rules."], []]
    users = [text_of(e.data) for e in of_type(result.events, "user/message")]
    assert users == ["go", "Remember the rules."]
    reasons = [e.data["reason"] for e in of_type(result.events, "request/header")]
    assert reasons == ["initial", "series"]  # step 2 starts a series on an unchanged header
    assert [text_of(m) for m in model.requests[0].messages if m["role"] == "user"] == [
        "go",
        "Remember the rules.",
    ]
    check_provider_history(agent.session.derive_messages())


def test_a_removed_hook_no_longer_runs() -> None:
    agent = Agent(new_session(), Scripted(["a", "b"]))
    remove = agent.add_pre_step_hook(lambda pre: Reject())
    assert asyncio.run(agent.run("one")).reason == "blocked"
    remove()
    assert asyncio.run(agent.run("two")).text == "a"


def test_a_hook_that_raises_or_returns_nonsense_fails_the_turn() -> None:
    agent = Agent(new_session(), Scripted(["never"]))

    def broken(pre: PreStep) -> Any:
        return "yes"

    agent.add_pre_step_hook(broken)
    result = asyncio.run(agent.run("hi"))
    assert result.reason == "error"
    assert "a pre-step hook returns None, Enter or Reject" in result.error["message"]
    assert "step/start" not in types(result.events)


def test_a_turn_stopping_hook_may_continue_the_turn_with_a_message() -> None:
    model = Scripted(["I am done.", "Checked: all good."])
    agent = Agent(new_session(), model)
    asked: list[TurnStopping] = []

    def stop(stopping: TurnStopping) -> Continue | None:
        asked.append(stopping)
        return Continue(message="Double-check your answer.") if len(asked) == 1 else None

    agent.add_turn_stopping_hook(stop)
    result = asyncio.run(agent.run("hi"))
    assert [(s.turn, s.step, s.reason) for s in asked] == [
        (1, 1, "completed"),
        (1, 2, "completed"),
    ]
    assert types(result.events)[-9:] == [
        "assistant/message", "step/end", "agent/inbox/spliced",
        "agent/inbox/spliced", "step/start", "user/message",
        "assistant/message", "step/end", "turn/end",
    ]  # fmt: skip
    assert text_of(of_type(result.events, "user/message")[-1].data) == "Double-check your answer."
    assert len(of_type(result.events, "turn/start")) == 1
    assert result.text == "Checked: all good."


def test_a_turn_stopping_hook_may_steer_instead() -> None:
    box: list[Agent] = []
    model = Scripted(["first", "second"])
    box.append(Agent(new_session(), model))
    steered: list[bool] = []

    async def stop(stopping: TurnStopping) -> None:
        if not steered:
            steered.append(True)
            box[0].steer("one more thing")

    box[0].add_turn_stopping_hook(stop)
    result = asyncio.run(box[0].run("hi"))
    assert len(model.requests) == 2
    assert [plain(e.data["reason"])["kind"] for e in of_type(result.events, "turn/end")] == [
        "completed"
    ]


def test_the_waterfall_functions_directly() -> None:
    async def scenario() -> tuple[Any, Any, Any]:
        claimed = [user_message("a")]
        kept = await run_pre_step_hooks([lambda pre: None], 1, 1, claimed, user_message)
        rejected = await run_pre_step_hooks(
            [lambda pre: Reject(), lambda pre: pytest.fail("after a reject")],
            1, 2, claimed, user_message,
        )  # fmt: skip
        stopping = TurnStopping(turn=1, step=1, reason="max-tokens")
        first = await run_turn_stopping_hooks(
            [lambda s: None, lambda s: Continue(message="x"), lambda s: pytest.fail("after")],
            stopping,
        )
        return kept, rejected, first

    kept, rejected, first = asyncio.run(scenario())
    assert isinstance(kept, Enter)
    assert kept.messages is not None
    assert [text_of(m) for m in kept.messages] == ["a"]
    assert kept.starts_request_series is False
    assert isinstance(rejected, Reject)
    assert first == Continue(message="x")
