"""``session_stats``: counts, estimated tokens with and without replacements, bytes."""

from __future__ import annotations

from agentlog import Session, thaw
from agentlog import messages as m
from agentlog.plugins.stats import session_stats
from agentlog.plugins.tokens import estimate_message
from agentlog.values import dumps
from tests.session.support import TR, A, begin, call, finish


def test_counts_and_prices_a_session_with_a_pruned_result() -> None:
    s = Session.create("s")
    begin(s)
    s.append("assistant/message", A([m.tool_call("c1", "ls", "{}")]), surface_op="append")
    tool_call = call(s, "c1")
    result = s.append(
        "tool/result",
        TR("c1", "x" * 400, id="r1", err=True),
        surface_op="append",
        source_event_seqs=[tool_call.seq],
    )
    finish(s)
    before = session_stats(s)
    s.append("turn/start", {"turn": 2})  # a pruner runs inside the next turn
    pruned = s.append(
        "tool/result",
        TR("c1", "[pruned]", id="r1", err=True),
        surface_op={"op": "replace", "startSeq": result.seq, "endSeq": result.seq},
        source_event_seqs=[result.seq],
    )
    after = session_stats(s)

    assert after.events == s.seq
    assert after.by_type["tool/result"] == 2
    assert (after.turns, after.steps, after.tool_calls, after.tool_errors) == (2, 1, 1, 2)
    assert (after.replacements, after.shadowed) == (1, 1)
    assert after.surface_nodes == len(s.surface.nodes) == after.messages
    assert after.estimated_tokens == sum(estimate_message(x) for x in s.derive_messages())
    assert after.estimated_tokens_unreplaced == before.estimated_tokens
    saved = estimate_message(result.data["message"]) - estimate_message(pruned.data["message"])
    assert after.estimated_savings == saved > 90
    assert after.json_bytes == sum(len(dumps(e.to_wire())) for e in s.events)
    assert after.usage == {}
    assert after.to_json()["estimatedSavings"] == saved


def test_stored_events_count_only_the_logs_own_events() -> None:
    s = Session.create("s")
    s.append("user/message", m.user("hi", id="u1"), surface_op="append")
    begin(s)
    s.append("assistant/message", A("hello", id="a1"), surface_op="append")
    stats = session_stats(s, stored_events=1)
    assert stats.events == 1
    assert stats.by_type == {"user/message": 1}
    assert stats.messages == 2  # the surface figures are the whole view's
    assert thaw(stats.to_json()["byType"]) == {"user/message": 1}
