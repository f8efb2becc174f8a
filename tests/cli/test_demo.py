"""The demo is the real agent loop with a scripted model: tool calls, a compaction, a resume."""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from agentlog import Session, check_invariants, check_provider_history, expand
from agentlog.cli.demo import build_demo_session, demo_checkpoint
from tests.cli.support import run, run_process

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


def test_the_demo_command_saves_the_session_and_says_how_to_see_it_again(tmp_path: Path) -> None:
    store = str(tmp_path / "demo sessions")
    ran = run("demo", "--store", store)
    assert ran.code == 0, ran.stderr
    assert "62 events stored (+1 in this view only) · 7 on the surface" in ran.stdout
    assert "Surface (7 nodes)" in ran.stdout
    assert "replace 5-38" in ran.stdout  # the compaction summary and its range
    assert "resume: read_file, run_tests" in ran.stdout  # the header after the resume
    prose = " ".join(ran.stdout.split())
    assert re.search(r"The summary at seq 45 shadowed 11 nodes \(5, 8, 10, .*\)", prose)
    assert "agentlog.expand(session, 45) gives back the original events 5, 8," in prose
    (session,) = run("ls", "--json", "--store", store).json()
    hint = f"See it again with: agentlog show {session['id']} --store '{store}'"
    assert hint in ran.stdout
    again = run_process(*hint.split(": ", 1)[1].split()[1:3], "--store", store)
    assert again.code == 0, again.stderr


def test_the_demo_runs_on_the_default_store_as_a_console_script(tmp_path: Path) -> None:
    ran = run_process("demo", env={"AGENTLOG_HOME": str(tmp_path)})
    assert ran.code == 0, ran.stderr
    assert "nothing was deleted" in ran.stdout
    assert f"sqlite:///{tmp_path}/sessions.db" in ran.stdout
    assert "See it again with: agentlog show demo-" in ran.stdout
    assert "--store" not in ran.stdout.split("See it again with:")[1]  # the default needs none
    assert (tmp_path / "sessions.db").is_file()


def test_the_demo_help_suggests_no_store_url_trap() -> None:
    ran = run("demo", "--help")
    assert "jsonl:///tmp" not in ran.stdout  # three slashes: a path relative to the cwd
    assert "Example: agentlog demo --store ./demo-sessions" in ran.stdout
