"""Tool-call/result pairing balance of the surface (spec/plugins.md §2.4)."""

from __future__ import annotations

import pytest

from agentlog import (
    Session,
    ToolPairingError,
    tool_pairing_balanced_after,
    tool_pairing_balanced_before,
)
from agentlog import messages as m
from agentlog.lifecycle import pairing_counters
from tests.session.support import begin, call, next_step


def conversation() -> tuple[Session, list[int]]:
    """user, assistant(2 calls), result, result, assistant — as surface seqs.

    Turn 1 is well formed: step 1 logs both tool calls, the last assistant is step 2.
    """
    s = Session.create("s", clock=lambda: 0)
    begin(s)
    seqs = [s.append("user/message", m.user("go", id="u"), surface_op="append").seq]
    seqs.append(
        s.append(
            "assistant/message",
            m.assistant(
                [m.tool_call("c1", "a", "{}"), m.tool_call("c2", "b", "{}")],
                provider="p",
                model="x",
                turn=1,
                step=1,
                id="a1",
            ),
            surface_op="append",
        ).seq
    )
    call(s, "c1")
    call(s, "c2")
    for call_id in ("c1", "c2"):
        seqs.append(
            s.append(
                "tool/result", m.tool_result(call_id, "ok", turn=1, step=1), surface_op="append"
            ).seq
        )
    next_step(s, 2)
    seqs.append(
        s.append(
            "assistant/message",
            m.assistant("done", provider="p", model="x", turn=1, step=2, id="a2"),
            surface_op="append",
        ).seq
    )
    return s, seqs


def test_cuts_inside_a_step_are_unbalanced() -> None:
    s, (user, call, r1, r2, done) = conversation()
    assert tool_pairing_balanced_before(s, user)
    assert tool_pairing_balanced_before(s, call)
    assert not tool_pairing_balanced_after(s, call)
    assert not tool_pairing_balanced_after(s, r1)
    assert tool_pairing_balanced_after(s, r2)
    assert tool_pairing_balanced_after(s, done)


def test_cache_follows_appends_and_replaces() -> None:
    s, (user, call, r1, r2, done) = conversation()
    assert tool_pairing_balanced_after(s, done)
    next_step(s, 3)
    extra = s.append(
        "assistant/message",
        m.assistant(
            [m.tool_call("c3", "a", "{}")], provider="p", model="x", turn=1, step=3, id="a3"
        ),
        surface_op="append",
    )
    assert not tool_pairing_balanced_after(s, extra.seq)  # tail growth extends the cache
    summary = s.append(
        "user/message",
        m.user("summary", id="sum"),
        surface_op={"op": "replace", "startSeq": user, "endSeq": done},
        source_event_seqs=[user, call, r1, r2, done],
    )
    assert tool_pairing_balanced_after(s, summary.seq)  # a replace rebuilds it
    assert not tool_pairing_balanced_after(s, extra.seq)


def test_a_seq_not_on_the_surface_is_reported() -> None:
    s, _ = conversation()
    with pytest.raises(ToolPairingError, match="tool-pairing balance: surface seq 99 not found"):
        tool_pairing_balanced_before(s, 99)


def test_a_result_without_a_call_is_a_corrupt_surface() -> None:
    events = {0: {"type": "tool/result", "data": {}}}
    with pytest.raises(
        ToolPairingError,
        match=r"tool/result at surface seq 0 has no matching tool-call \(corrupt surface\)",
    ):
        pairing_counters([0], events.get)
    with pytest.raises(ToolPairingError, match=r"surface seq 5 has no matching session event"):
        pairing_counters([5], events.get)
