"""The agent loop writes turns in the spec's order (spec/plugins.md §4.3, §8 scenarios 44–53).

Every test drives a real ``Agent`` with the ``Scripted`` provider over a real session (the
invariant companion on, as for every test session) and reads the log it wrote.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentlog import (
    Agent,
    InvariantError,
    Session,
    check_invariants,
    check_provider_history,
    open_store,
    tool,
)
from agentlog import messages as m
from agentlog.loop import ModelRequest, ProviderError
from agentlog.providers import Scripted
from tests.loop.support import FAST_RETRIES, new_session, of_type, plain, text_of, types


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


def weather_agent(session: Session | None = None, *replies: Any, **options: Any) -> Agent:
    script = list(replies) or [Scripted.call("weather", {"city": "Oslo"}), "Sunny."]
    return Agent(session or new_session(), Scripted(script), tools=[weather], **options)


def test_a_tool_turn_writes_the_canonical_event_order() -> None:
    """§8 scenario 44: prompt → tool call → text, with one ``initial`` header."""
    agent = weather_agent(system="Be brief.")
    result = asyncio.run(agent.run("Weather in Oslo?"))
    events = agent.session.events
    assert types(events) == [
        "agent/inbox/spliced",  # the prompt queued
        "turn/start",
        "agent/inbox/spliced",  # the prompt claimed
        "step/start",
        "system/message",
        "user/message",
        "request/header",
        "request/context",
        "assistant/message",
        "tool/call",
        "tool/result",
        "step/end",
        "step/start",
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    queued, claim = of_type(events, "agent/inbox/spliced")
    assert queued.data["target"] == "next-turn"
    assert plain(queued.data["inserted"]) == [plain(events[5].data)]
    assert plain(claim.data) == {
        "target": "next-turn", "start": 0, "removedCount": 1, "inserted": [],
    }  # fmt: skip
    assert events[3].data == {"turn": 1, "step": 1}
    assert events[4].data["message"]["content"] == [{"type": "text", "text": "Be brief."}]
    assert events[6].data["reason"] == "initial"
    assert "startsSeries" not in events[6].data
    assert plain(events[6].data["header"]) == {
        "config": {"provider": "scripted", "model": "scripted"},
        "tools": [weather.schema()],
    }
    answer, call, output = events[8], events[9], events[10]
    assert answer.source_event_seqs is None  # assistant/message embeds its stream instead
    assert answer.data["stream"]  # the compact stream records of the attempt
    (block,) = [b for b in answer.data["message"]["content"] if b["type"] == "tool-call"]
    assert plain(call.data) == {
        "turn": 1, "step": 1, "callId": block["id"], "name": "weather",
        "arguments": '{"city":"Oslo"}',
    }  # fmt: skip
    assert output.source_event_seqs == [call.seq]
    assert output.data["message"]["toolCallId"] == block["id"]
    assert text_of(output.data["message"]) == "sunny in Oslo"
    assert plain(events[-1].data) == {"turn": 1, "reason": {"kind": "completed"}}
    assert (result.reason, result.text, result.error) == ("completed", "Sunny.", None)
    assert result.events == tuple(events)
    check_invariants(events)
    check_provider_history(agent.session.derive_messages())


def test_later_turns_log_no_header_while_nothing_changed() -> None:
    agent = weather_agent(None, "one", "two")
    asyncio.run(agent.run("first"))
    second = asyncio.run(agent.run("second"))
    assert "request/header" not in types(second.events)
    assert [e.data["turn"] for e in of_type(agent.session.events, "turn/start")] == [1, 2]
    assert second.text == "two"


def test_a_new_agent_on_the_session_logs_resume_and_continues_turn_numbers() -> None:
    """§8 scenario 45: the first request of a new loop instance over a logged header."""
    session = new_session()
    asyncio.run(weather_agent(session, "a").run("first"))
    result = asyncio.run(weather_agent(session, "b").run("second"))
    (header,) = of_type(result.events, "request/header")
    assert header.data["reason"] == "resume"
    assert of_type(result.events, "turn/start")[0].data == {"turn": 2}
    assert "system/message" not in types(result.events)  # node 0 is already the prompt


def test_a_session_reopened_from_its_store_resumes(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path}/s.db") as store:
        with store.create("chat") as session:
            asyncio.run(weather_agent(session).run("Weather?"))
        with store.open("chat") as resumed:
            result = asyncio.run(weather_agent(resumed, "Still sunny.").run("And now?"))
            assert result.text == "Still sunny."
            assert of_type(result.events, "request/header")[0].data["reason"] == "resume"
            assert of_type(result.events, "turn/start")[0].data["turn"] == 2
        with store.open("chat") as again:
            assert [e.type for e in again.events][-1] == "session/end-seed"
            check_provider_history(again.derive_messages())


def test_changing_the_tools_logs_change_and_a_developer_message() -> None:
    @tool
    def clock() -> str:
        """The time."""
        return "noon"

    agent = weather_agent(None, "a", "b")
    asyncio.run(agent.run("first"))
    agent.tools = [clock]
    result = asyncio.run(agent.run("second"))
    header, developer = (
        of_type(result.events, "request/header")[0],
        of_type(result.events, "developer/message")[0],
    )
    assert header.data["reason"] == "change"
    assert developer.seq == header.seq + 1
    assert developer.data["headerSeq"] == header.seq
    assert plain(developer.data["message"]["content"]) == [
        {"type": "tool-addition", "toolName": "clock"},
        {"type": "tool-removal", "toolName": "weather"},
    ]


def test_a_changed_system_prompt_replaces_only_node_0_and_starts_a_series() -> None:
    session = new_session()
    asyncio.run(weather_agent(session, "a", system="Be brief.").run("first"))
    agent = weather_agent(session, "b", "c", system="Be brief.")
    asyncio.run(agent.run("second"))  # the same prompt: nothing rewritten
    agent.system = "Be thorough."
    result = asyncio.run(agent.run("third"))
    (prompt,) = of_type(result.events, "system/message")
    head = session.surface.nodes[0]
    assert head == prompt.seq
    assert prompt.source_event_seqs == [of_type(session.events, "system/message")[0].seq]
    assert of_type(result.events, "request/header")[0].data["reason"] == "series"
    assert session.derive_messages()[0]["content"] == [{"type": "text", "text": "Be thorough."}]


def test_every_request_is_the_derived_history_at_dispatch() -> None:
    """§4.4 reconstruction invariant (§8 scenario 53), for every request of a tool turn."""
    session = new_session()
    seen: list[tuple[Any, Any, Any]] = []

    def model(request: ModelRequest) -> Any:
        header = session.request_header()
        seen.append((plain(request.messages), plain(session.derive_messages()), header))
        assert plain(list(request.tools)) == plain(header.get("tools") or [])
        assert (request.provider, request.model) == (
            header["config"]["provider"],
            header["config"]["model"],
        )
        return Scripted.call("weather", {"city": "Rome"}) if len(seen) == 1 else "Done."

    agent = Agent(session, Scripted(model), tools=[weather])
    asyncio.run(agent.run("Weather?"))
    assert len(seen) == 2
    for sent, derived, _header in seen:
        assert sent == derived
        check_provider_history(sent)


def test_an_idle_inject_writes_one_event_and_starts_nothing() -> None:
    agent = weather_agent()
    agent.inject("The user is in Norway.")
    assert types(agent.session.events) == ["agent/inbox/spliced"]
    assert not agent.running
    result = asyncio.run(agent.run("Weather?"))
    user_messages = [text_of(e.data) for e in of_type(result.events, "user/message")]
    assert user_messages == ["The user is in Norway.", "Weather?"]  # injected context first


def test_steering_is_claimed_at_the_next_step_boundary() -> None:
    """§8 scenario 50: a steer during a step becomes a user message after the next step/start."""
    agent: Agent

    @tool
    async def slow_lookup(city: str) -> str:
        """Look a city up."""
        agent.steer("Use Celsius.")
        return "12"

    script = [Scripted.call("slow_lookup", {"city": "Oslo"}), "12 °C."]
    agent = Agent(new_session(), Scripted(script), tools=[slow_lookup])
    result = asyncio.run(agent.run("Temperature?"))
    sequence = types(result.events)
    step2 = sequence.index("step/start", sequence.index("step/end"))
    assert sequence[step2 + 1] == "user/message"
    assert text_of(result.events[step2 + 1].data) == "Use Celsius."
    claim = result.events[step2 - 1]
    assert claim.type == "agent/inbox/spliced"
    assert claim.data["target"] == "next-step"


def test_steering_when_the_turn_would_stop_forces_another_step() -> None:
    agent: Agent

    def model(request: ModelRequest) -> str:
        if len(model_requests) == 0:
            agent.steer("One more thing.")
        model_requests.append(request)
        return f"answer {len(model_requests)}"

    model_requests: list[ModelRequest] = []
    agent = Agent(new_session(), Scripted(model))
    result = asyncio.run(agent.run("Hello"))
    assert [e.data["step"] for e in of_type(result.events, "step/start")] == [1, 2]
    assert result.text == "answer 2"
    assert len(of_type(result.events, "turn/start")) == 1


def test_a_followup_during_a_run_becomes_the_next_turn() -> None:
    agent: Agent

    def model(request: ModelRequest) -> str:
        if not asked:
            asked.append(True)
            agent.followup("And tomorrow?")
        return "ok"

    asked: list[bool] = []
    agent = Agent(new_session(), Scripted(model))
    result = asyncio.run(agent.run("Today?"))
    assert [e.data["turn"] for e in of_type(result.events, "turn/end")] == [1, 2]


def test_a_refused_request_ends_the_turn_error_and_the_agent_is_idle() -> None:
    failure = ProviderError.of("bad key", "AUTHENTICATION", status=401)
    agent = Agent(new_session(), Scripted([failure]))
    result = asyncio.run(agent.run("hi"))
    assert types(result.events)[-4:] == [
        "request/context",
        "assistant/attempt",
        "step/end",
        "turn/end",
    ]
    error = {"message": "bad key", "code": "AUTHENTICATION", "status": 401}
    assert plain(result.events[-1].data["reason"]) == {"kind": "error", "error": error}
    assert (result.reason, plain(result.error)) == ("error", error)
    assert not agent.running


def test_any_other_provider_exception_is_an_unknown_failure() -> None:
    agent = Agent(new_session(), Scripted([KeyError("boom")], retry_policy=FAST_RETRIES))
    result = asyncio.run(agent.run("hi"))
    assert result.reason == "error"
    assert result.error["code"] == "UNKNOWN"
    assert "boom" in result.error["message"]
    assert "llm/retry" not in types(result.events)  # UNKNOWN is not retryable


def test_max_tokens_drops_the_cut_tool_call_and_sticks_to_the_turn() -> None:
    """§8 scenario 49: a truncated call is not run; the turn ends max-tokens after steering."""
    agent: Agent
    cut = Scripted.reply("Let me", Scripted.call("weather", '{"ci'), finish="max-tokens")

    def model(request: ModelRequest) -> Any:
        requests.append(request)
        if len(requests) == 1:
            agent.steer("Go on.")
            return cut
        return "Done."

    requests: list[ModelRequest] = []
    agent = Agent(new_session(), Scripted(model), tools=[weather])
    result = asyncio.run(agent.run("Weather?"))
    first = of_type(result.events, "assistant/message")[0]
    assert plain(first.data["message"]["content"]) == [{"type": "text", "text": "Let me"}]
    assert "tool/call" not in types(result.events)
    assert result.events[-1].data["reason"] == {"kind": "max-tokens"}
    assert result.reason == "max-tokens"
    check_provider_history(agent.session.derive_messages())


def test_an_agent_refuses_a_session_that_ends_inside_a_turn() -> None:
    session = new_session()
    session.append("turn/start", {"turn": 1})
    session.append("user/message", m.user("hi"), surface_op="append")
    with pytest.raises(InvariantError, match="ends inside turn 1"):
        Agent(session, Scripted([]))


def test_run_without_input_returns_at_once() -> None:
    agent = weather_agent()
    result = asyncio.run(agent.run())
    assert (result.reason, result.text, result.events) == ("completed", "", ())


def test_a_second_agent_does_not_install_the_invariant_companion_again() -> None:
    session = new_session()
    Agent(session, Scripted([]))
    once = len(session._hooks.validators)  # counting the installed checks
    Agent(session, Scripted([]))
    assert len(session._hooks.validators) == once


@pytest.mark.structure_free("the agent itself must install the companion")
def test_an_agent_installs_the_invariant_companion_on_its_session() -> None:
    session = new_session()
    Agent(session, Scripted([]))
    with pytest.raises(InvariantError, match="step/start in turn 1 but open turn is null"):
        session.append("step/start", {"turn": 1, "step": 1})


def test_the_companion_vetoes_what_breaks_structure_while_the_agent_runs() -> None:
    agent = weather_agent()
    asyncio.run(agent.run("hi"))
    with pytest.raises(InvariantError, match="step/start in turn 1 but open turn is null"):
        agent.session.append("step/start", {"turn": 1, "step": 9})


def test_a_followup_after_a_cancel_opens_a_new_turn() -> None:
    """§4.2: a waking message sent after an abort is latched and re-targeted to next-turn."""
    agent: Agent

    async def model(request: ModelRequest) -> Any:
        if len(provider.requests) == 1:
            agent.cancel()
            agent.steer("Start over: say hi.")  # after the abort: a new turn, not this step
            await asyncio.sleep(30)  # the cancel lands here
        return "hi"

    provider = Scripted(model)
    agent = Agent(new_session(), provider)
    result = asyncio.run(agent.run("Say something long."))
    ends = [e.data["reason"]["kind"] for e in of_type(result.events, "turn/end")]
    assert ends == ["aborted", "completed"]
    assert (result.reason, result.text) == ("completed", "hi")


def test_cancelling_the_awaiting_task_closes_the_turn_then_propagates() -> None:
    started = asyncio.Event()

    async def slow(request: ModelRequest) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    agent = Agent(new_session(), Scripted(slow))

    async def main() -> None:
        task = asyncio.ensure_future(agent.run("hi"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    last = agent.session.events[-1]
    assert plain(last.data) == {
        "turn": 1,
        "reason": {"kind": "aborted", "reason": {"kind": "user"}},
    }
    assert not agent.running


def test_input_queued_without_an_event_loop_runs_on_the_next_run(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path}/s.db") as store:
        with store.create("s") as session:
            Agent(session, Scripted([])).followup("Queued before a crash.")
        with store.open("s") as session:  # a new process: the inbox is replayed
            result = asyncio.run(Agent(session, Scripted(["Got it."])).run())
            assert result.text == "Got it."
            (prompt,) = of_type(result.events, "user/message")
            assert text_of(prompt.data) == "Queued before a crash."
