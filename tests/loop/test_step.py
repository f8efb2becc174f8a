"""One step's model call: settlement, retries, recoveries, cancellation (plugins.md §4.5–§4.9).

Failures are scripted as the exceptions and raw chunk streams a provider produces; the retry
policy is the spec's default with millisecond waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agentlog import IMAGE_OFFLOAD, Agent, ExtractiveSummarizer, check_provider_history
from agentlog import messages as m
from agentlog.errors import AgentlogError, EventRejected, SettlementRejected
from agentlog.loop import AttemptEnded, Chunk, ModelRequest, ProviderError, RetryPolicy
from agentlog.providers import Scripted
from tests.loop.support import FAST_RETRIES, new_session, of_type, plain, types


def test_a_server_error_is_retried_in_the_same_step() -> None:
    """§8 scenario 48: attempt, llm/retry, llm/retry-started, then the answer."""
    failure = ProviderError.of("overloaded", "SERVER", status=500)
    agent = Agent(new_session(), Scripted([failure, "Fine."], retry_policy=FAST_RETRIES))
    result = asyncio.run(agent.run("hi"))
    assert types(result.events)[8:] == [
        "assistant/attempt",
        "llm/retry",
        "llm/retry-started",
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    attempt, retry, started = result.events[8:11]
    assert attempt.data["stream"] == []  # the call failed before any chunk
    assert plain(retry.data) == {
        "retryId": retry.data["retryId"], "turn": 1, "step": 1, "provider": "scripted",
        "mode": "normal", "policyKey": "default", "retry": 1, "maxRetries": 5, "delayMs": 1,
        "failure": {"message": "overloaded", "code": "SERVER", "status": 500},
    }  # fmt: skip
    assert plain(started.data) == {
        "retryId": retry.data["retryId"], "turn": 1, "step": 1, "retry": 1,
    }  # fmt: skip
    assert "request/header" not in types(result.events[8:])  # noqa: RUF100  # a retry inherits the header
    assert result.text == "Fine."


def test_retries_stop_at_the_budget_and_the_turn_ends_error() -> None:
    failures = [ProviderError.of("busy", "RATE_LIMIT", status=429)] * 3
    policy = RetryPolicy(max_retries=2, initial_delay_ms=1, jitter_ratio=0.0)
    agent = Agent(new_session(), Scripted(failures, retry_policy=policy))
    result = asyncio.run(agent.run("hi"))
    retries = of_type(result.events, "llm/retry")
    assert [r.data["retry"] for r in retries] == [1, 2]
    assert [r.data["delayMs"] for r in retries] == [1, 2]  # doubling backoff
    assert len(of_type(result.events, "assistant/attempt")) == 3
    assert result.reason == "error"
    assert result.error["code"] == "RATE_LIMIT"


def test_the_retry_budget_is_per_step() -> None:
    policy = RetryPolicy(max_retries=1, initial_delay_ms=1, jitter_ratio=0.0)
    busy = ProviderError.of("busy", "SERVER")
    script = [busy, Scripted.call("nothing"), busy, "done"]
    agent = Agent(new_session(), Scripted(script, retry_policy=policy), tools=[lambda: "ok"])
    agent.tools = []  # the call fails as an unknown tool: still a step with a result
    result = asyncio.run(agent.run("hi"))
    assert [r.data["step"] for r in of_type(result.events, "llm/retry")] == [1, 2]
    assert result.text == "done"


def test_retry_after_within_the_cap_is_the_wait() -> None:
    failure = ProviderError.of("slow down", "RATE_LIMIT", status=429, providerRetryAfterMs=15)
    agent = Agent(new_session(), Scripted([failure, "ok"], retry_policy=FAST_RETRIES))
    result = asyncio.run(agent.run("hi"))
    assert of_type(result.events, "llm/retry")[0].data["delayMs"] == 15


def test_retry_after_beyond_the_cap_ends_a_normal_policys_retries() -> None:
    failure = ProviderError.of("later", "RATE_LIMIT", status=429, providerRetryAfterMs=60_000)
    agent = Agent(new_session(), Scripted([failure, "ok"], retry_policy=FAST_RETRIES))
    result = asyncio.run(agent.run("hi"))
    assert "llm/retry" not in types(result.events)
    assert result.error["providerRetryAfterMs"] == 60_000


def _chunks(*chunks: Chunk, then: BaseException | None = None) -> Any:
    async def stream() -> AsyncIterator[Chunk]:
        for chunk in chunks:
            yield chunk
        if then is not None:
            raise then

    return stream()


def test_a_stream_that_ends_without_a_finish_is_transport_never_a_short_answer() -> None:
    dropped = _chunks(
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": "The answer is"},
    )
    agent = Agent(new_session(), Scripted([dropped, "The answer is 4."], retry_policy=FAST_RETRIES))
    result = asyncio.run(agent.run("2+2?"))
    attempt = of_type(result.events, "assistant/attempt")[0]
    assert attempt.data["stream"][1]["texts"] == ["The answer is"]  # kept, off the surface
    assert of_type(result.events, "llm/retry")[0].data["failure"]["code"] == "TRANSPORT"
    assert [e.data["message"]["content"][0]["text"] for e in of_type(
        result.events, "assistant/message")] == ["The answer is 4."]  # fmt: skip


def test_an_empty_answer_is_empty_response_and_retried() -> None:
    agent = Agent(new_session(), Scripted([[], "Now with text."], retry_policy=FAST_RETRIES))
    result = asyncio.run(agent.run("hi"))
    assert of_type(result.events, "llm/retry")[0].data["failure"]["code"] == "EMPTY_RESPONSE"
    assert result.text == "Now with text."


def test_a_finish_with_an_error_settles_an_attempt() -> None:
    errored = _chunks(
        {
            "type": "finish",
            "reason": {"kind": "error", "failure": {"message": "x", "code": "BAD_REQUEST"}},
        }
    )
    agent = Agent(new_session(), Scripted([errored], retry_policy=FAST_RETRIES))
    result = asyncio.run(agent.run("hi"))
    assert result.error == {"message": "x", "code": "BAD_REQUEST"}
    assert (
        of_type(result.events, "assistant/attempt")[0].data["stream"][0]["chunk"]["type"]
        == "finish"
    )


def test_usage_reasoning_and_the_replay_envelope_are_kept_on_the_message() -> None:
    envelope = {
        "response": {"kind": "test", "version": 1},
        "blocks": [{"type": "reasoning", "signature": "sig"}, {"type": "text"}],
    }
    reply = Scripted.reply(
        Scripted.reasoning("Think."), "Answer.", usage={"inputTokens": 10, "outputTokens": 3},
        replay_state=envelope,
    )  # fmt: skip
    agent = Agent(new_session(), Scripted([reply]))
    result = asyncio.run(agent.run("hi"))
    message = of_type(result.events, "assistant/message")[0]
    assert plain(message.data["usage"]) == {"inputTokens": 10, "outputTokens": 3}
    assert plain(message.data["message"]["content"]) == [
        {"type": "reasoning", "text": "Think."},
        {"type": "text", "text": "Answer."},
    ]
    assert plain(message.data["message"]["source"]) == {
        "kind": "model", "provider": "scripted", "model": "scripted", "replayState": envelope,
    }  # fmt: skip


def _stalled(agent_box: list[Agent], *chunks: Chunk) -> Any:
    async def stream() -> AsyncIterator[Chunk]:
        for chunk in chunks:
            yield chunk
        agent_box[0].cancel()
        await asyncio.sleep(30)  # the cancel interrupts this wait
        yield {"type": "finish", "reason": {"kind": "stop"}}

    return stream()


def test_cancel_mid_stream_keeps_the_visible_text_as_an_interrupted_message() -> None:
    """§8 scenario 46: only the text prefix, no tool calls, then step/end and turn/end."""
    box: list[Agent] = []
    stalled = _stalled(
        box,
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": "Half an"},
        {"type": "block-start", "index": 1, "blockType": "tool-call"},
        {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "x", "argumentsDelta": "{"},
    )
    box.append(Agent(new_session(), Scripted([stalled])))
    result = asyncio.run(box[0].run("hi"))
    assert types(result.events)[-3:] == ["assistant/message", "step/end", "turn/end"]
    message = result.events[-3]
    assert message.data["interrupted"] is True
    assert plain(message.data["message"]["content"]) == [{"type": "text", "text": "Half an"}]
    assert plain(result.events[-1].data["reason"]) == {
        "kind": "aborted",
        "reason": {"kind": "user"},
    }
    assert result.reason == "aborted"
    check_provider_history(box[0].session.derive_messages())


def test_cancel_before_any_visible_text_settles_an_attempt() -> None:
    box: list[Agent] = []
    stalled = _stalled(box, {"type": "block-start", "index": 0, "blockType": "text"})
    box.append(Agent(new_session(), Scripted([stalled])))
    result = asyncio.run(box[0].run("hi"))
    assert types(result.events)[-3:] == ["assistant/attempt", "step/end", "turn/end"]
    assert "assistant/message" not in types(result.events)


def test_cancel_during_the_retry_wait_ends_the_turn_aborted() -> None:
    box: list[Agent] = []

    def model(request: ModelRequest) -> Any:
        asyncio.get_running_loop().call_later(0.05, box[0].cancel)
        return ProviderError.of("busy", "SERVER")

    policy = RetryPolicy(initial_delay_ms=5_000, jitter_ratio=0.0)
    box.append(Agent(new_session(), Scripted(model, retry_policy=policy)))
    result = asyncio.run(box[0].run("hi"))
    assert types(result.events)[-4:] == ["assistant/attempt", "llm/retry", "step/end", "turn/end"]
    assert result.reason == "aborted"


def test_context_overflow_compacts_and_retries_the_step_with_a_series_header() -> None:
    """§8 scenario 31: attempt, compaction bracket, then a ``series`` request, same step."""
    overflow = ProviderError.of("too long", "CONTEXT_WINDOW_EXCEEDED", status=400)
    session = new_session()
    long = "history " * 200
    agent = Agent(
        session, Scripted([long, long, overflow, "Short now."], retry_policy=FAST_RETRIES),
        compaction=ExtractiveSummarizer(), context_window=100_000,
    )  # fmt: skip
    asyncio.run(agent.run("first " * 50))
    asyncio.run(agent.run("second " * 50))
    result = asyncio.run(agent.run("third"))
    sequence = types(result.events)
    attempt = sequence.index("assistant/attempt")
    assert sequence[attempt + 1 : attempt + 5] == [
        "compaction/start", "compaction/summary", "user/message", "compaction/end",
    ]  # fmt: skip
    assert "llm/retry" not in sequence  # recovery spends no retry budget
    header = result.events[attempt + 5]
    assert (header.type, header.data["reason"]) == ("request/header", "series")
    assert [e.data["step"] for e in of_type(result.events, "step/start")] == [1]
    assert result.text == "Short now."
    check_provider_history(session.derive_messages())


def test_a_second_overflow_in_a_row_ends_the_turn_error() -> None:
    overflow = ProviderError.of("too long", "CONTEXT_WINDOW_EXCEEDED", status=400)
    session = new_session()
    long = "history " * 200
    agent = Agent(
        session, Scripted([long, long, overflow, overflow], retry_policy=FAST_RETRIES),
        compaction=ExtractiveSummarizer(), context_window=100_000,
    )  # fmt: skip
    asyncio.run(agent.run("first " * 50))
    asyncio.run(agent.run("second " * 50))
    result = asyncio.run(agent.run("third"))
    assert len(of_type(result.events, "compaction/start")) == 1
    assert result.error["code"] == "CONTEXT_WINDOW_EXCEEDED"


def test_without_compaction_an_overflow_ends_the_turn() -> None:
    overflow = ProviderError.of("too long", "CONTEXT_WINDOW_EXCEEDED", status=400)
    agent = Agent(new_session(), Scripted([overflow], retry_policy=FAST_RETRIES))
    assert asyncio.run(agent.run("hi")).error["code"] == "CONTEXT_WINDOW_EXCEEDED"


def test_image_offload_required_offloads_and_retries_without_a_retry_event() -> None:
    """§8 scenario 42: one ``image/offload`` of the oldest images, then the retry."""
    session = new_session(projections=(IMAGE_OFFLOAD,))
    picture = m.image("att-1", "image/png", size=10, width=1, height=1)
    need = ProviderError.of("too many images", "IMAGE_OFFLOAD_REQUIRED")
    need.failure["offloadImages"] = 1  # type: ignore[index]  # the provider asks for one
    agent = Agent(session, Scripted([need, "I see it."], retry_policy=FAST_RETRIES))
    result = asyncio.run(agent.run([m.text("Look:"), picture]))
    sequence = types(result.events)
    assert sequence[sequence.index("assistant/attempt") + 1] == "image/offload"
    assert "llm/retry" not in sequence
    assert of_type(result.events, "request/header")[-1].data["reason"] == "series"
    assert session.derive_messages()[0]["content"][1]["offloaded"] is True
    assert result.text == "I see it."


def _refuse(event_type: str) -> Any:
    def validator(session: Any, event: Any) -> None:
        if event.type == event_type:
            raise EventRejected(f"refused {event_type} for the test")

    return validator


def test_a_failed_stream_whose_settlement_is_refused_raises_the_specs_error() -> None:
    """§4.5: "Assistant stream failed and its durable settlement was rejected"."""
    session = new_session()
    session.add_validator(_refuse("assistant/attempt"))
    agent = Agent(session, Scripted([ProviderError.of("down", "SERVER")], retry_policy=None))
    result = asyncio.run(agent.run("hi"))
    assert result.reason == "error"
    assert result.error["code"] == "UNKNOWN"
    assert result.error["message"] == (
        "Assistant stream failed and its durable settlement was rejected; "
        "caused by: refused assistant/attempt for the test"
    )
    assert "assistant/attempt" not in types(result.events)


def test_a_cancelled_stream_whose_settlement_is_refused_raises_the_specs_error() -> None:
    box: list[Agent] = []
    stalled = _stalled(box, {"type": "block-start", "index": 0, "blockType": "text"})
    session = new_session()
    session.add_validator(_refuse("assistant/attempt"))
    box.append(Agent(session, Scripted([stalled])))
    frames: list[Any] = []

    async def watch() -> None:
        async for frame in box[0].stream("hi"):
            frames.append(frame)

    asyncio.run(watch())
    end = of_type(box[0].session.events, "turn/end")[-1]
    assert end.data["reason"]["error"]["message"].startswith(
        "Assistant stream failed and its durable settlement was rejected"
    )
    ended = [f for f in frames if isinstance(f, AttemptEnded)]
    assert [f.outcome for f in ended] == ["abandoned"]


def test_the_error_carries_the_stream_failure_and_the_refusal() -> None:
    stream, refusal = ProviderError.of("down", "SERVER"), EventRejected("no")
    error = SettlementRejected.of(stream, refusal)
    assert str(error) == "Assistant stream failed and its durable settlement was rejected"
    assert error.errors == (stream, refusal)
    assert isinstance(error, AgentlogError)


def test_a_refused_settlement_of_an_answer_is_the_refusal_itself() -> None:
    session = new_session()
    session.add_validator(_refuse("assistant/message"))
    result = asyncio.run(Agent(session, Scripted(["hello"])).run("hi"))
    assert result.error["message"] == "refused assistant/message for the test"
