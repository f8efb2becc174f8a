"""Payload constructors build exactly the data the loop's structural events carry."""

from __future__ import annotations

import pytest

from agentlog import Session, check_invariants
from agentlog import messages as m
from agentlog import payloads as p


def test_a_hand_written_turn_with_the_constructors_passes_the_invariant_companion() -> None:
    s = Session.create("s", clock=lambda: 0)
    s.append("turn/start", p.turn_start(1))
    s.append("user/message", m.user("go"), surface_op="append")
    s.append("step/start", p.step_start(1, 1))
    s.append(
        "request/header",
        p.request_header({"config": {"provider": "p", "model": "x"}}, "initial"),
    )
    s.append("request/context", p.request_context("p", "x", 1000))
    s.append("assistant/attempt", p.assistant_attempt(1, 1, []))
    call = m.tool_call("c1", "bash", "{}")
    s.append(
        "assistant/message",
        m.assistant([call], provider="p", model="x", turn=1, step=1),
        surface_op="append",
    )
    c = s.append("tool/call", p.tool_call(1, 1, "c1", "bash", "{}"))
    s.append(
        "tool/result",
        m.tool_result("c1", "ok", turn=1, step=1),
        surface_op="append",
        source_event_seqs=[c.seq],
    )
    s.append("step/end", p.step_end(1, 1))
    s.append("turn/end", p.turn_end(1, "error", error={"message": "boom", "code": "SERVER"}))
    check_invariants(s.events)
    assert s.event_at(s.seq - 1).data == {
        "turn": 1,
        "reason": {"kind": "error", "error": {"message": "boom", "code": "SERVER"}},
    }
    assert s.request_context() == {"provider": "p", "model": "x", "contextWindow": 1000}


def test_an_aborted_turn_end_names_its_cause() -> None:
    assert p.turn_end(3, "aborted", cause={"kind": "hook", "reason": "policy"}) == {
        "turn": 3,
        "reason": {"kind": "aborted", "reason": {"kind": "hook", "reason": "policy"}},
    }


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: p.turn_start(0), "turn must be a positive int"),
        (lambda: p.turn_start(True), "turn must be a positive int"),
        (lambda: p.step_end(1, -1), "step must be a positive int"),
        (lambda: p.turn_end(1, "done"), "turn/end kind must be one of"),  # type: ignore[arg-type]
        (lambda: p.turn_end(1, "error"), "an error turn/end needs error"),
        (lambda: p.turn_end(1, cause={"kind": "user"}), "only an aborted turn/end"),
        (lambda: p.tool_call(1, 1, "", "bash", "{}"), "call_id must be a non-empty string"),
        (lambda: p.tool_call(1, 1, "c", "bash", {}), "arguments must be the raw JSON"),  # type: ignore[arg-type]
    ],
)
def test_bad_fields_are_refused_naming_the_field(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


def test_retry_payloads_carry_the_specs_fields_in_order() -> None:
    data = p.llm_retry(
        retry_id="r1", turn=1, step=2, provider="openai", mode="normal", policy_key="default",
        retry=1, max_retries=5, delay_ms=480, failure={"message": "busy", "code": "SERVER"},
    )  # fmt: skip
    assert list(data) == [
        "retryId", "turn", "step", "provider", "mode", "policyKey", "retry", "maxRetries",
        "delayMs", "failure",
    ]  # fmt: skip
    assert "maxRetries" not in p.llm_retry(
        retry_id="r1", turn=1, step=1, provider="x", mode="always", policy_key="k", retry=9,
        max_retries=None, delay_ms=1, failure={"message": "m", "code": "UNKNOWN"},
    )  # fmt: skip
    assert p.llm_retry_started(retry_id="r1", turn=1, step=2, retry=1) == {
        "retryId": "r1", "turn": 1, "step": 2, "retry": 1,
    }  # fmt: skip


def test_an_inbox_splice_says_what_it_inserts_or_removes() -> None:
    message = m.user("hi", id="u1")
    assert p.inbox_spliced("next-turn", 0, inserted=[message]) == {
        "target": "next-turn", "start": 0, "inserted": [message],
    }  # fmt: skip
    assert p.inbox_spliced("next-step", 1, removed=2, canceled=True) == {
        "target": "next-step", "start": 1, "removedCount": 2, "inserted": [], "outcome": "canceled",
    }  # fmt: skip
