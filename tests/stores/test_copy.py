"""``copy_session``: any store to any store, verbatim, resumable, verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlog import SessionAlreadyExists, open_store, thaw
from agentlog.stores.copy import copy_session
from agentlog.stores.files import open_transcript
from tests.stores.legacy import format_0_log, write_log
from tests.stores.saved import STORE_KINDS, grown, save, store_url


@pytest.mark.parametrize("source_kind", STORE_KINDS)
@pytest.mark.parametrize("target_kind", STORE_KINDS)
def test_a_copy_holds_the_same_stored_log(
    source_kind: str, target_kind: str, tmp_path: Path
) -> None:
    session = grown(events=80)
    source_url = store_url(source_kind, tmp_path / "from")
    target_url = store_url(target_kind, tmp_path / "to")
    save(source_url, session, upto=75)  # ends inside a turn: copied as stored, no closers
    with open_store(source_url, read_only=True) as source, open_store(target_url) as target:
        result = copy_session(source, target, "agent")
        assert (result.events, result.copied) == (75, 75)
        mine, theirs = source.inspection("agent"), target.inspection("agent")
        assert theirs.stored_events == 75
        assert [thaw(e.to_wire()) for e in theirs.session.events[:75]] == [
            thaw(e.to_wire()) for e in mine.session.events[:75]
        ]
        assert theirs.session.derive_messages() == mine.session.derive_messages()
        assert theirs.session.header == mine.session.header


def test_an_interrupted_copy_resumes_after_what_the_target_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agentlog.stores.copy.BATCH_EVENTS", 10)
    session = grown(events=60)
    source_url, target_url = store_url("jsonl", tmp_path / "a"), store_url("sqlite", tmp_path)
    save(source_url, session)

    def interrupt(done: int, total: int) -> None:
        if done == 20:
            raise KeyboardInterrupt

    with open_store(source_url) as source, open_store(target_url) as target:
        with pytest.raises(KeyboardInterrupt):
            copy_session(source, target, "agent", progress=interrupt)
        assert len(target.read_from("agent", 0)) == 20  # two durable batches
        seen: list[tuple[int, int]] = []
        result = copy_session(source, target, "agent", progress=lambda d, t: seen.append((d, t)))
        assert result.copied == session.seq - 20
        assert seen[0] == (30, session.seq)
        assert seen[-1] == (session.seq, session.seq)
        assert copy_session(source, target, "agent").copied == 0
        assert len(target.read_from("agent", 0)) == session.seq


def test_a_different_log_under_the_same_id_is_refused(tmp_path: Path) -> None:
    source_url, target_url = store_url("jsonl", tmp_path / "a"), store_url("sqlite", tmp_path)
    save(source_url, grown(events=30, seed=1))
    save(target_url, grown(events=30, seed=2))
    with open_store(source_url) as source, open_store(target_url) as target:
        before = target.read_from("agent", 0)
        with pytest.raises(SessionAlreadyExists, match="with a different log"):
            copy_session(source, target, "agent")
        assert target.read_from("agent", 0) == before


def test_an_older_format_is_copied_as_format_4(tmp_path: Path) -> None:
    path = write_log(tmp_path / "old", *format_0_log())
    source, session_id = open_transcript(path, read_only=True)
    with source, open_store(store_url("sqlite", tmp_path)) as target:
        copy_session(source, target, session_id)
        assert target.inspection(session_id).stored_version == 4
        assert target.inspect(session_id).derive_messages() == (
            source.inspect(session_id).derive_messages()
        )
