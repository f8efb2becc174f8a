"""A step's tool calls: capped pool, results in model order, errors, cancellation (§4.6, §4.7)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from agentlog import Agent, check_invariants, check_provider_history, tool
from agentlog.loop import ModelRequest, ToolResult
from agentlog.loop.dispatch import ABORTED_BEFORE_DISPATCH, ABORTED_WHILE_RUNNING
from agentlog.providers import Scripted
from tests.loop.support import new_session, of_type, plain, text_of, types


def calls(*names_and_ids: tuple[str, str, dict[str, Any] | str]) -> list[dict[str, Any]]:
    return [Scripted.call(name, args, id=call_id) for name, call_id, args in names_and_ids]


def test_parallel_calls_are_capped_and_results_committed_in_model_order() -> None:
    running = 0
    peak = 0
    finished: list[str] = []

    @tool
    async def wait(name: str, seconds: float) -> str:
        """Wait a while."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(seconds)
        running -= 1
        finished.append(name)
        return name

    answer = calls(
        ("wait", "a", {"name": "a", "seconds": 0.06}),
        ("wait", "b", {"name": "b", "seconds": 0.01}),
        ("wait", "c", {"name": "c", "seconds": 0.01}),
    )
    agent = Agent(
        new_session(), Scripted([answer, "done"]), tools=[wait], max_parallel_tool_calls=2
    )
    result = asyncio.run(agent.run("go"))
    assert peak == 2
    assert finished[0] == "b"  # b finished first ...
    results = of_type(result.events, "tool/result")
    assert [r.data["message"]["toolCallId"] for r in results] == ["a", "b", "c"]  # ... in order
    sequence = [
        (e.type, e.data["callId"] if e.type == "tool/call" else e.data["message"]["toolCallId"])
        for e in result.events
        if e.type in ("tool/call", "tool/result")
    ]
    # c starts when b frees a slot, before a (and so b) can be committed
    assert sequence == [
        ("tool/call", "a"), ("tool/call", "b"), ("tool/call", "c"),
        ("tool/result", "a"), ("tool/result", "b"), ("tool/result", "c"),
    ]  # fmt: skip
    for r in results:
        call = next(
            e
            for e in result.events
            if e.type == "tool/call" and e.data["callId"] == r.data["message"]["toolCallId"]
        )
        assert r.source_event_seqs == [call.seq]
    check_invariants(agent.session.events)


def test_a_synchronous_tool_runs_in_a_worker_thread() -> None:
    threads: list[int] = []

    def where() -> str:
        """Which thread."""
        threads.append(threading.get_ident())
        return "here"

    agent = Agent(new_session(), Scripted([Scripted.call("where"), "ok"]), tools=[where])
    asyncio.run(agent.run("go"))
    assert threads
    assert threads[0] != threading.get_ident()


def test_a_tool_that_raises_becomes_an_error_result_the_model_sees() -> None:
    def read(path: str) -> str:
        """Read a file."""
        raise FileNotFoundError(path)

    seen: list[Any] = []

    def model(request: ModelRequest) -> Any:
        seen.append(plain(request.messages))
        return Scripted.call("read", {"path": "x.txt"}, id="r1") if len(seen) == 1 else "Sorry."

    agent = Agent(new_session(), Scripted(model), tools=[read])
    result = asyncio.run(agent.run("read x.txt"))
    (failed,) = of_type(result.events, "tool/result")
    assert failed.data["message"]["isError"] is True
    assert plain(failed.data["error"]) == {"name": "FileNotFoundError", "code": "TOOL_ERROR"}
    assert text_of(failed.data["message"]) == "Error: FileNotFoundError: x.txt"
    assert seen[1][-1] == plain(failed.data["message"])  # the next request carries it
    assert result.reason == "completed"


def test_invalid_json_arguments_are_reported_and_the_tool_not_called() -> None:
    called: list[Any] = []

    def read(path: str) -> str:
        """Read a file."""
        called.append(path)
        return ""

    answer = Scripted.call("read", '{"path": "x.t', id="r1")
    agent = Agent(new_session(), Scripted([answer, "ok"]), tools=[read])
    result = asyncio.run(agent.run("go"))
    (call,) = of_type(result.events, "tool/call")
    assert call.data["arguments"] == '{"path": "x.t'  # logged exactly as the model wrote it
    (failed,) = of_type(result.events, "tool/result")
    assert failed.data["error"]["code"] == "INVALID_ARGUMENTS"
    assert "not valid JSON" in text_of(failed.data["message"])
    assert called == []


def test_arguments_that_do_not_fit_the_signature_are_an_error() -> None:
    agent = Agent(
        new_session(),
        Scripted([Scripted.call("add", {"a": 1, "z": 2}), "ok"]),
        tools=[lambda a, b: a + b],
    )
    agent.tools = [tool(name="add")(lambda a, b: a + b)]
    result = asyncio.run(agent.run("go"))
    assert of_type(result.events, "tool/result")[0].data["error"]["code"] == "INVALID_ARGUMENTS"


def test_an_unknown_tool_is_an_error_result() -> None:
    agent = Agent(new_session(), Scripted([Scripted.call("nope", {}), "ok"]))
    result = asyncio.run(agent.run("go"))
    (failed,) = of_type(result.events, "tool/result")
    assert failed.data["error"] == {"name": "UnknownToolError", "code": "UNKNOWN_TOOL"}
    check_provider_history(agent.session.derive_messages())


def test_cancel_during_tools_commits_started_calls_and_aborts_the_rest() -> None:
    """§8 scenario 47: the first call's result is kept; the second never started."""
    agent: Agent

    @tool
    async def first() -> str:
        """Runs until cancelled, then reports."""
        agent.cancel()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            return "stopped early"
        return "finished"

    @tool
    async def second() -> str:
        """Never runs."""
        raise AssertionError("must not start")

    answer = calls(("first", "c1", {}), ("second", "c2", {}))
    agent = Agent(
        new_session(), Scripted([answer]), tools=[first, second], max_parallel_tool_calls=1
    )
    result = asyncio.run(agent.run("go"))
    assert types(result.events)[-7:] == [
        "assistant/message", "tool/call", "tool/result", "tool/call", "tool/result",
        "step/end", "turn/end",
    ]  # fmt: skip
    kept, aborted = of_type(result.events, "tool/result")
    assert text_of(kept.data["message"]) == "stopped early"
    assert "error" not in kept.data
    assert plain(aborted.data["error"]) == {"name": "AbortError", "code": ABORTED_BEFORE_DISPATCH}
    assert text_of(aborted.data["message"]) == "Error: tool call aborted before dispatch"
    assert result.reason == "aborted"
    check_provider_history(agent.session.derive_messages())
    check_invariants(agent.session.events)


def test_a_synchronous_tool_running_at_cancel_gets_an_outcome_unknown_result() -> None:
    agent: Agent
    release = threading.Event()

    def block() -> str:
        """Blocks its thread."""
        agent.cancel()  # from the worker thread: handed to the agent's loop
        release.wait(5)
        return "late"

    agent = Agent(new_session(), Scripted([Scripted.call("block", {}, id="b1")]), tools=[block])

    async def main() -> tuple[Any, float]:
        started = time.monotonic()
        result = await agent.run("go")
        elapsed = time.monotonic() - started
        release.set()  # (asyncio.run joins the worker thread on exit)
        return result, elapsed

    result, elapsed = asyncio.run(main())
    assert elapsed < 4  # the turn did not wait for the thread
    (aborted,) = of_type(result.events, "tool/result")
    assert aborted.data["error"]["code"] == ABORTED_WHILE_RUNNING
    assert "Do not retry blindly." in text_of(aborted.data["message"])
    assert result.reason == "aborted"


def test_an_exclusive_call_runs_alone_between_parallel_ones() -> None:
    """§4.6: an exclusive call is a barrier; the parallel calls around it run in the pool."""
    running: set[str] = set()
    overlaps: dict[str, set[str]] = {}

    async def work(name: str) -> str:
        overlaps.setdefault(name, set()).update(running)
        for other in running:
            overlaps.setdefault(other, set()).add(name)
        running.add(name)
        await asyncio.sleep(0.02)
        running.discard(name)
        return name

    @tool
    async def shared(name: str) -> str:
        """Run beside others."""
        return await work(name)

    @tool(exclusive=True)
    async def alone(name: str) -> str:
        """Run alone."""
        return await work(name)

    answer = calls(
        ("shared", "a", {"name": "a"}),
        ("shared", "b", {"name": "b"}),
        ("alone", "x", {"name": "x"}),
        ("shared", "c", {"name": "c"}),
        ("alone", "y", {"name": "y"}),
    )
    assert alone.exclusive
    assert not shared.exclusive
    agent = Agent(new_session(), Scripted([answer, "done"]), tools=[shared, alone])
    result = asyncio.run(agent.run("go"))
    assert overlaps == {"a": {"b"}, "b": {"a"}, "x": set(), "c": set(), "y": set()}
    results = of_type(result.events, "tool/result")
    assert [r.data["message"]["toolCallId"] for r in results] == ["a", "b", "x", "c", "y"]
    started = [e.data["callId"] for e in of_type(result.events, "tool/call")]
    assert started == ["a", "b", "x", "c", "y"]
    check_invariants(result.events)


def test_a_tool_result_may_queue_contexts_for_the_next_step() -> None:
    """§4.6: additionalContexts go to the next-step inbox once the result is committed."""

    @tool
    def save(path: str) -> ToolResult:
        """Save a file."""
        return ToolResult(output=f"saved {path}", additional_contexts=["The linter now runs."])

    model = Scripted([Scripted.call("save", {"path": "a.py"}), "ok"])
    agent = Agent(new_session(), model, tools=[save])
    result = asyncio.run(agent.run("go"))
    assert types(result.events)[-10:] == [
        "tool/call", "tool/result", "agent/inbox/spliced", "step/end",
        "agent/inbox/spliced", "step/start", "user/message",
        "assistant/message", "step/end", "turn/end",
    ]  # fmt: skip
    inserted = of_type(result.events, "agent/inbox/spliced")[-2]
    assert inserted.data["target"] == "next-step"
    assert text_of(of_type(result.events, "tool/result")[0].data["message"]) == "saved a.py"
    second = model.requests[1].messages
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "user"]
    assert text_of(second[-1]) == "The linter now runs."
    check_provider_history(agent.session.derive_messages())


def test_a_tool_result_may_conclude_the_turn() -> None:
    """§4.3: a result with concludesTurn ends the turn after its step, no second request."""

    @tool
    def finish(summary: str) -> ToolResult:
        """Hand the work in."""
        return ToolResult(output="handed in", concludes_turn=True)

    model = Scripted([Scripted.call("finish", {"summary": "s"})])
    agent = Agent(new_session(), model, tools=[finish])
    result = asyncio.run(agent.run("go"))
    assert len(model.requests) == 1
    assert types(result.events)[-5:] == [
        "assistant/message", "tool/call", "tool/result", "step/end", "turn/end",
    ]  # fmt: skip
    assert plain(result.events[-1].data["reason"]) == {"kind": "completed"}
    check_provider_history(agent.session.derive_messages())
