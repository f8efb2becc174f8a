"""The demo session is a valid, structurally sound log that exercises every core feature."""

from __future__ import annotations

from agentlog import Session, check_invariants, check_provider_history, fold_surface
from agentlog.cli.demo import build_demo_session


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


def test_demo_is_deterministic() -> None:
    assert build_demo_session().events == build_demo_session().events
