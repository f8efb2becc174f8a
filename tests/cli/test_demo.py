"""The demo session is a valid, structurally sound log that exercises every core feature."""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from agentlog import Session, check_invariants, check_provider_history, expand, fold_surface
from agentlog.cli.demo import build_demo_session, demo_checkpoint
from tests.cli.support import run, run_process

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def test_demo_session_replays_to_the_same_history() -> None:
    session = build_demo_session()
    replay = Session.from_events("replay", session.events)
    assert replay.derive_messages() == session.derive_messages()


def test_demo_session_passes_the_invariant_companion_and_is_provider_valid() -> None:
    session = build_demo_session()
    check_invariants(session.events)
    check_provider_history(session.derive_messages())


def test_demo_session_shows_a_content_rewrite_and_a_compaction() -> None:
    session = build_demo_session()
    fold = fold_surface(session.events)
    kinds = {session.event_at(r.seq).type for r in fold.replacements}
    assert kinds == {"tool/result", "user/message"}
    compaction = next(
        r for r in fold.replacements if session.event_at(r.seq).type == "user/message"
    )
    # the summary cites every node it shadows, and those events are still in the log
    assert set(compaction.shadowed_seqs) <= set(session.event_at(compaction.seq).source_event_seqs)
    assert all(session.event_at(seq) for seq in compaction.shadowed_seqs)


def test_demo_prunes_and_compacts_with_the_real_plugins() -> None:
    session = build_demo_session()
    types = [event.type for event in session.events]
    prune = types.index("compaction/prune")
    assert types[prune + 1] == "tool/result"  # the price record, then the content rewrite
    start = types.index("compaction/start")
    assert types[start : start + 4] == [
        "compaction/start",
        "compaction/summary",
        "user/message",
        "compaction/end",
    ]
    assert session.event_at(start + 2).data["content"][0]["text"].startswith("This is an")


def test_the_demo_checkpoint_expands_to_the_original_events() -> None:
    session = build_demo_session()
    checkpoint = demo_checkpoint(session)
    originals = expand(session, checkpoint)
    assert [event.type for event in originals][:2] == ["user/message", "assistant/message"]
    # the pruned tool result expands to the full original, not to its rewrite
    pruned = [e for e in originals if e.type == "tool/result" and "def parse" in str(e.data)]
    (original,) = pruned
    assert "line 59 of the parser module" in str(original.data)
    assert all(event.surface_op == "append" for event in originals)


def test_demo_is_deterministic_but_for_the_compaction_ids() -> None:
    def wire(session: Session) -> bytes:
        return UUID.sub(b"<uuid>", orjson.dumps([event.to_wire() for event in session.events]))

    assert wire(build_demo_session()) == wire(build_demo_session())


def test_the_demo_command_saves_the_session_and_says_how_to_see_it_again(tmp_path: Path) -> None:
    store = str(tmp_path / "demo sessions")
    ran = run("demo", "--store", store)
    assert ran.code == 0, ran.stderr
    assert "42 events stored (+1 in this view only)" in ran.stdout
    assert "The summary at seq 34 shadowed 9 nodes (5, 6, 21, 11, 13, 16, 22, 24, 26)" in (
        " ".join(ran.stdout.split())
    )
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
