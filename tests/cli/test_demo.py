"""The demo is the real agent loop with a scripted model: tool calls, a compaction, a resume."""

from __future__ import annotations

import re

import orjson

from agentlog import Session, check_invariants, check_provider_history, expand
from agentlog.cli.demo import build_demo_session, demo_checkpoint

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def types(session: Session) -> list[str]:
    return [event.type for event in session.events]


def test_the_demo_runs_four_turns_with_tool_calls() -> None:
    session = build_demo_session()
    assert [e.data["turn"] for e in session.events if e.type == "turn/end"] == [1, 2, 3, 4]
    assert all(
        e.data["reason"] == {"kind": "completed"} for e in session.events if e.type == "turn/end"
    )
    calls = [e.data["name"] for e in session.events if e.type == "tool/call"]
    assert calls == ["read_file", "run_tests", "run_tests", "read_file"]


def test_the_loop_compacts_before_a_step_of_the_third_turn() -> None:
    session = build_demo_session()
    sequence = types(session)
    start = sequence.index("compaction/start")
    assert sequence[start : start + 5] == [
        "compaction/start", "compaction/summary", "user/message", "compaction/end", "step/start",
    ]  # fmt: skip
    assert session.event_at(start).data["turn"] == 3
    assert session.event_at(start + 5).data["reason"] == "series"  # the next request header


def test_the_session_is_resumed_before_the_fourth_turn() -> None:
    session = build_demo_session()
    sequence = types(session)
    marker = sequence.index("session/end-seed")
    assert session.event_at(marker + 2).data == {"turn": 4}
    headers = [e.data["reason"] for e in session.events if e.type == "request/header"]
    assert headers == ["initial", "series", "resume"]


def test_the_demo_log_passes_the_invariants_and_is_provider_valid() -> None:
    session = build_demo_session()
    check_invariants(session.events)
    check_provider_history(session.derive_messages())
    replay = Session.from_events("replay", session.events)
    assert replay.derive_messages() == session.derive_messages()


def test_the_demo_checkpoint_expands_to_the_original_events() -> None:
    session = build_demo_session()
    originals = expand(session, demo_checkpoint(session))
    assert [event.type for event in originals][:2] == ["user/message", "assistant/message"]
    assert "tests/test_parser.py fails" in str(originals[0].data)
    assert any("line 59 of the parser module" in str(e.data) for e in originals)


def test_demo_is_deterministic_but_for_ids() -> None:
    def wire(session: Session) -> bytes:
        return UUID.sub(b"<uuid>", orjson.dumps([event.to_wire() for event in session.events]))

    assert wire(build_demo_session()) == wire(build_demo_session())
