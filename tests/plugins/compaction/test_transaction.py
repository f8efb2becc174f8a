"""One compaction: what it writes, what it refuses, how it fails (spec/plugins.md §2.9)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentlog import CompactionError, Session
from agentlog.events import Event
from agentlog.plugins import TokenMeter, install_compaction_invariants
from agentlog.plugins.compaction import PREAMBLE, run_compaction
from tests.plugins.agent import Agent
from tests.plugins.compaction.summarizers import Hanging, Scripted

LONG = "lorem ipsum dolor sit amet " * 80  # ~2 KB: a summary is always smaller


def history(turns: int = 3) -> Agent:
    agent = Agent()
    install_compaction_invariants(agent.session)
    for turn in range(turns):
        agent.exchange(f"task {turn}: {LONG}", f"answer {turn}: {LONG}", tool_output=LONG)
    return agent


def run(session: Session, start: int, end: int, summarizer: Any, **options: Any) -> Any:
    options.setdefault("manual", True)
    return asyncio.run(
        run_compaction(
            session,
            start,
            end,
            summarizer,
            meter=TokenMeter(),
            max_tokens=512,
            target=("p", "summarizer"),
            **options,
        )
    )


def types(events: Any) -> list[str]:
    return [event.type for event in events]


def test_a_compaction_brackets_a_summary_and_a_replacement_citing_every_shadowed_node() -> None:
    agent = history()
    session = agent.session
    before = [event.to_wire() for event in session.events]
    nodes = session.surface.nodes
    span = nodes[:-4]  # two whole turns; the third stays
    generation = session.surface.replace_generation
    summarizer = Scripted("## Current Work\n- three tasks done")

    result = run(session, span[0], span[-1], summarizer, source_command_id="cmd-1")

    start, summary, replacement, end = session.events[len(before) :]
    assert types([start, summary, replacement, end]) == [
        "compaction/start",
        "compaction/summary",
        "user/message",
        "compaction/end",
    ]
    ids = {"compactionId": result.compaction_id, "sourceCommandId": "cmd-1"}
    assert start.data == {**ids, "turn": None}
    assert end.data == {**ids, "turn": None}
    text = [{"type": "text", "text": "## Current Work\n- three tasks done"}]
    assert summary.data == {
        **ids,
        "summary": text,
        "shadowedRange": {"start": span[0], "end": span[-1]},
        "shadowedSeqs": list(span),
        "shadowedTokenCount": result.shadowed_token_count,
        "provider": "p",
        "model": "summarizer",
        "maxTokens": 512,
        "usage": {"inputTokens": 10, "outputTokens": 5},
        "rawOutput": text,
        "llmStreamCall": True,
    }
    meter_prices = {
        n.seq: n.heuristic_tokens
        for n in TokenMeter().measure(Session.from_events("x", before)).nodes
    }
    assert result.shadowed_token_count == sum(meter_prices[seq] for seq in span)
    assert replacement.surface_op == {"op": "replace", "startSeq": span[0], "endSeq": span[-1]}
    assert replacement.source_event_seqs == [start.seq, summary.seq, *span]
    assert replacement.data["source"] == {"kind": "compact-checkpoint", **ids}
    assert replacement.data["content"] == [
        {"type": "text", "text": PREAMBLE + "\n\n<compacted-summary>"},
        *text,
        {"type": "text", "text": "</compacted-summary>"},
    ]
    # Only the surface changed: every original event is still there, as it was.
    assert [event.to_wire() for event in session.events[: len(before)]] == before
    assert session.surface.nodes == (replacement.seq, *nodes[-4:])
    assert session.surface.replace_generation == generation + 1
    assert session.derive_messages()[0]["id"] == replacement.data["id"]
    assert (result.start_seq, result.summary_seq, result.replacement_seq, result.end_seq) == (
        start.seq,
        summary.seq,
        replacement.seq,
        end.seq,
    )
    assert result.shadowed_range == (span[0], span[-1])


def test_the_summary_request_is_the_span_as_the_model_saw_it_plus_the_instruction() -> None:
    agent = Agent(tools=[{"name": "bash", "description": "run", "parameters": {}}])
    agent.session.append("turn/start", {"turn": 1})
    agent.turn = 1
    agent.start_step()
    agent.session.append(
        "system/message",
        {
            "turn": 1,
            "step": 1,
            "message": {
                "id": "sys",
                "role": "system",
                "content": [{"type": "text", "text": "be brief"}],
                "source": {"kind": "system-prompt"},
            },
        },
        surface_op="append",
    )
    agent.session.append(
        "user/message",
        {
            "id": "u",
            "role": "user",
            "content": [{"type": "text", "text": LONG}],
            "source": {"kind": "user"},
        },
        surface_op="append",
    )
    agent.reply(LONG)
    agent.end_step()
    agent.end_turn()
    agent.exchange("next", "ok")
    nodes = agent.session.surface.nodes
    summarizer = Scripted()
    run(agent.session, nodes[1], nodes[2], summarizer)
    (request,) = summarizer.requests
    assert [m["role"] for m in request.messages] == ["system", "user", "assistant", "user"]
    assert request.messages[-1]["source"] == {"kind": "compact-basic"}
    assert "## Primary Request and Intent" in request.messages[-1]["content"][0]["text"]
    assert request.tools == [{"name": "bash", "description": "run", "parameters": {}}]
    assert (request.provider, request.model, request.max_tokens) == ("p", "summarizer", 512)
    assert request.session_id == "agent"


def test_an_automatic_compaction_belongs_to_the_open_turn() -> None:
    agent = history()
    agent.start_turn("more")
    nodes = agent.session.surface.nodes
    run(agent.session, nodes[0], nodes[-2], Scripted(), manual=False)
    start = next(e for e in reversed(agent.session.events) if e.type == "compaction/start")
    assert start.data["turn"] == 4


@pytest.mark.parametrize(
    ("manual", "open_turn", "message"),
    [
        (True, True, "manual compaction: the session already has an open turn"),
        (
            False,
            False,
            "compactRegion: no open turn — automatic compaction events must be enclosed in a turn",
        ),
    ],
)
def test_the_owner_must_match_the_turn(manual: bool, open_turn: bool, message: str) -> None:
    agent = history()
    if open_turn:
        agent.start_turn("more")
    nodes = agent.session.surface.nodes
    count = len(agent.session.events)
    with pytest.raises(CompactionError) as refused:
        run(agent.session, nodes[0], nodes[3], Scripted(), manual=manual)
    assert (str(refused.value), refused.value.code) == (message, "busy")
    assert len(agent.session.events) == count


def spans(agent: Agent) -> dict[str, int]:
    """Named nodes of the first turn: user, assistant (with a call), tool result, answer."""
    user, call, result, answer = agent.session.surface.nodes[:4]
    return {"user": user, "call": call, "result": result, "answer": answer}


def test_a_span_that_splits_a_tool_call_from_its_result_is_refused_never_widened() -> None:
    agent = history()
    s = spans(agent)
    count = len(agent.session.events)
    with pytest.raises(CompactionError) as refused:
        run(agent.session, s["user"], s["call"], Scripted(), manual=False)
    assert str(refused.value) == (
        f"compactRegion: end seq {s['call']} is not a balanced boundary (would split a step, "
        "or the step is still open)"
    )
    with pytest.raises(CompactionError) as refused:
        run(agent.session, s["result"], s["answer"], Scripted())
    assert str(refused.value) == (
        f"manual compaction: start seq {s['result']} is not a balanced boundary (would split "
        "a step's tool-call/result pair)"
    )
    assert refused.value.code == "invalid"
    assert len(agent.session.events) == count  # not even compaction/start


def test_missing_and_reversed_spans_are_refused() -> None:
    agent = history()
    s = spans(agent)
    with pytest.raises(
        CompactionError, match=r"^manual compaction: start seq 999 not found in surface$"
    ):
        run(agent.session, 999, s["answer"], Scripted())
    with pytest.raises(
        CompactionError, match=r"^manual compaction: end seq 999 not found in surface$"
    ):
        run(agent.session, s["user"], 999, Scripted())
    with pytest.raises(CompactionError) as refused:
        run(agent.session, s["answer"], s["user"], Scripted())
    assert str(refused.value) == (
        f"manual compaction: start seq {s['answer']} (position 3) is after end seq "
        f"{s['user']} (position 0) on the surface"
    )


def test_a_span_after_an_earlier_compaction_is_positional() -> None:
    agent = history(4)
    session = agent.session
    nodes = session.surface.nodes
    first = run(session, nodes[0], nodes[3], Scripted())
    checkpoint, after = session.surface.nodes[0], session.surface.nodes[4]
    assert checkpoint == first.replacement_seq > after  # positions, not seq order
    summarizer = Scripted("## Current Work\n- merged")
    second = run(session, checkpoint, after, summarizer)
    assert second.shadowed_seqs[0] == checkpoint
    assert "<compacted-summary>" in summarizer.requests[0].messages[0]["content"][0]["text"]


def last_end(session: Session) -> Event:
    return next(e for e in reversed(session.events) if e.type == "compaction/end")


@pytest.mark.parametrize("manual", [True, False])
def test_a_summary_not_smaller_than_its_span_is_refused(manual: bool) -> None:
    agent = history()
    if not manual:
        agent.start_turn("more")
    session = agent.session
    nodes, generation = session.surface.nodes, session.surface.replace_generation
    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[3], Scripted(LONG * 10), manual=manual)
    assert refused.value.code == "summary"
    error = last_end(session).data["error"]
    assert error.startswith("summary is not smaller than the shadowed content (")
    assert "estimated framed tokens >= " in error
    assert str(refused.value) == (
        "manual compaction could not produce a smaller summary" if manual else error
    )
    assert "compaction/summary" not in types(session.events)
    assert (session.surface.nodes, session.surface.replace_generation) == (nodes, generation)


def test_a_failing_summarizer_closes_the_bracket_with_its_error() -> None:
    agent = history()
    agent.start_turn("more")
    session = agent.session
    nodes = session.surface.nodes
    failure = RuntimeError("model unavailable")
    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[3], Scripted(error=failure), manual=False)
    assert (str(refused.value), refused.value.code) == ("model unavailable", "summary")
    assert refused.value.__cause__ is failure
    assert types(session.events[-2:]) == ["compaction/start", "compaction/end"]
    assert last_end(session).data["error"] == "model unavailable"
    assert session.surface.nodes == nodes
    # the lock is released: the next attempt runs
    run(session, nodes[0], nodes[3], Scripted(), manual=False)


def test_a_visible_change_during_an_automatic_compaction_aborts_it_a_log_only_one_does_not() -> (
    None
):
    agent = history()
    agent.start_turn("more")
    session = agent.session
    nodes = session.surface.nodes

    def user_speaks() -> None:
        session.append(
            "user/message",
            {
                "id": "late",
                "role": "user",
                "content": [{"type": "text", "text": "hi"}],
                "source": {"kind": "user"},
            },
            surface_op="append",
        )

    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[3], Scripted(meanwhile=user_speaks), manual=False)
    assert refused.value.code == "changed"
    assert last_end(session).data["error"] == (
        "compaction: session surface changed during summarization"
    )
    nodes = session.surface.nodes

    def title() -> None:
        session.append(
            "session/title",
            {"title": "t", "messageSeqs": [nodes[0]], "source": {"kind": "fallback"}},
        )

    run(session, nodes[0], nodes[3], Scripted(meanwhile=title), manual=False)
    assert types(session.events[-5:]) == [
        "compaction/start",
        "session/title",
        "compaction/summary",
        "user/message",
        "compaction/end",
    ]


def test_a_manual_compaction_only_needs_its_span_to_stay() -> None:
    agent = history()
    session = agent.session
    nodes = session.surface.nodes

    def injected(text: str) -> dict[str, Any]:
        return {
            "id": text,
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "runtime-context"},
        }

    def context_arrives() -> None:  # after the span (no turn may start meanwhile): fine
        session.append("user/message", injected("late context"), surface_op="append")

    run(session, nodes[0], nodes[3], Scripted(meanwhile=context_arrives))
    assert session.derive_messages()[-1]["id"] == "late context"  # survives the checkpoint
    nodes = session.surface.nodes
    answer = nodes[4]  # in the middle of the next span
    assert session.event_at(answer).type == "assistant/message"

    def answer_replaced() -> None:  # a node of the span is replaced meanwhile
        session.append(
            "user/message",
            injected("instead"),
            surface_op={"op": "replace", "startSeq": answer, "endSeq": answer},
            source_event_seqs=[answer],
        )

    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[8], Scripted(meanwhile=answer_replaced))
    assert (str(refused.value), refused.value.code) == (
        "the compacted history changed during manual compaction",
        "changed",
    )
    assert last_end(session).data["error"] == (
        "compaction: the selected span changed during summarization"
    )
    nodes = session.surface.nodes
    first = nodes[0]

    def first_replaced() -> None:  # the span's first node leaves the surface meanwhile
        session.append(
            "user/message",
            injected("restated"),
            surface_op={"op": "replace", "startSeq": first, "endSeq": first},
            source_event_seqs=[first],
        )

    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[3], Scripted(meanwhile=first_replaced))
    assert refused.value.code == "changed"
    assert last_end(session).data["error"] == (
        "compaction: the selected span is no longer a valid replacement target"
    )


def test_a_live_lock_makes_every_compaction_busy_until_a_resume_clears_it() -> None:
    agent = history()
    session = agent.session
    session.append("compaction/start", {"compactionId": "crashed", "turn": None})
    nodes = session.surface.nodes
    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[3], Scripted())
    assert (str(refused.value), refused.value.code) == (
        "compaction: compaction already in progress; the session compaction lock is already active",
        "busy",
    )
    # After a crash, the resumed session's end-seed marker shows the holder is gone.
    resumed = Session.from_events(
        "agent", [e.to_wire() for e in session.events], session.header, restore=True
    )
    install_compaction_invariants(resumed)
    assert resumed.events[-1].type == "session/end-seed"
    run(resumed, nodes[0], nodes[3], Scripted())
    assert resumed.events[-1].type == "compaction/end"


def test_a_cancelled_compaction_closes_its_bracket_and_stays_cancelled() -> None:
    agent = history()
    session = agent.session
    nodes = session.surface.nodes
    hanging = Hanging()

    async def cancel_while_summarizing() -> None:
        task = asyncio.create_task(
            run_compaction(
                session,
                nodes[0],
                nodes[3],
                hanging,
                manual=True,
                meter=TokenMeter(),
                max_tokens=100,
                target=None,
            )
        )
        await hanging.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_while_summarizing())
    assert last_end(session).data["error"] == "cancelled"
    assert session.surface.nodes == nodes
    cancel = asyncio.Event()
    cancel.set()
    count = len(session.events)
    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[3], Scripted(), cancel=cancel)
    assert (str(refused.value), refused.value.code) == (
        "manual compaction was cancelled",
        "cancelled",
    )
    assert len(session.events) == count  # cancelled before the lock was taken
    late = asyncio.Event()
    with pytest.raises(CompactionError, match="cancelled"):
        run(session, nodes[0], nodes[3], Scripted(meanwhile=late.set), cancel=late)
    assert last_end(session).data["error"] == "manual compaction was cancelled"


class FailingSink:
    """A store sink that refuses chosen appends, or flushes, the way a full disk would."""

    def __init__(self, refuse: set[str], *, flush_fails: bool = False) -> None:
        self.refuse = refuse
        self.flush_fails = flush_fails
        self.persisted: list[str] = []

    def persist(self, event: Event) -> None:
        if event.type in self.refuse:
            raise OSError(28, "No space left on device")
        self.persisted.append(event.type)

    def hold(self) -> None:
        pass

    def release(self, *, write: bool) -> None:
        if write:
            self.flush()

    def flush(self) -> None:
        if self.flush_fails:
            raise OSError(5, "Input/output error")

    def close(self) -> None:
        pass


def test_a_store_that_refuses_the_summary_leaves_no_replacement_and_releases_the_lock() -> None:
    agent = history()
    session = agent.session
    sink = FailingSink({"compaction/summary"})
    session.attach(sink)
    nodes = session.surface.nodes
    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[3], Scripted())
    assert (str(refused.value), refused.value.code) == (
        "manual compaction did not commit cleanly",
        "commit",
    )
    assert sink.persisted == ["compaction/start", "compaction/end"]
    assert "No space left on device" in last_end(session).data["error"]
    assert session.surface.nodes == nodes
    sink.refuse.clear()
    run(session, nodes[0], nodes[3], Scripted())  # the lock was released


def test_a_close_the_store_refuses_too_leaves_a_detectable_orphan_lock() -> None:
    agent = history()
    session = agent.session
    session.attach(FailingSink({"compaction/summary", "compaction/end"}))
    nodes = session.surface.nodes
    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[3], Scripted())
    assert refused.value.code == "commit"
    assert session.events[-1].type == "compaction/start"
    with pytest.raises(CompactionError) as busy:
        run(session, nodes[0], nodes[3], Scripted())
    assert busy.value.code == "busy"


def test_a_compaction_that_cannot_be_made_durable_says_so() -> None:
    agent = history()
    session = agent.session
    session.attach(FailingSink(set(), flush_fails=True))
    nodes = session.surface.nodes
    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[3], Scripted())
    assert (str(refused.value), refused.value.code) == (
        "manual compaction durability checkpoint failed",
        "persistence",
    )
    assert session.events[-1].type == "compaction/end"  # it landed; it is not durable


@pytest.mark.parametrize(
    ("manual", "text"),
    [
        (True, "manual compaction durability checkpoint failed"),
        (False, "compaction is not durable: [Errno 5] Input/output error"),
    ],
)
def test_a_commit_whose_write_fails_landed_and_is_reported_not_durable(
    manual: bool, text: str
) -> None:
    """The commit is one group commit: when its write fails, the bracket is closed already."""
    agent = history()
    session = agent.session
    if not manual:
        agent.start_turn("more")
    sink = FailingSink(set())
    session.attach(sink)
    nodes = session.surface.nodes
    fail_from_now = Scripted(meanwhile=lambda: setattr(sink, "flush_fails", True))
    with pytest.raises(CompactionError) as refused:
        run(session, nodes[0], nodes[3], fail_from_now, manual=manual)
    assert (str(refused.value), refused.value.code) == (text, "persistence")
    assert types(session.events[-4:]) == [
        "compaction/start",
        "compaction/summary",
        "user/message",
        "compaction/end",
    ]
    assert "error" not in session.events[-1].data
