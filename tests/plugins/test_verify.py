"""``verify_session``: load, history and structure, with every problem reported."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentlog import SessionNotFound, open_store
from agentlog import messages as m
from agentlog.plugins.verify import verify_session
from agentlog.stores.files import open_transcript
from tests.session.support import TR, A, begin, call, finish
from tests.stores.saved import grown, save, store_url


def test_a_loop_shaped_session_passes_every_check(tmp_path: Path) -> None:
    url = store_url("sqlite", tmp_path)
    with open_store(url) as store, store.create("s1") as session:
        begin(session)
        session.append("assistant/message", A([m.tool_call("c1", "ls", "{}")]), surface_op="append")
        tool_call = call(session, "c1")
        session.append(
            "tool/result", TR("c1", "a.txt"), surface_op="append", source_event_seqs=[tool_call.seq]
        )
        finish(session)
    with open_store(url, read_only=True) as store:
        verdict = verify_session(store, "s1", strict=True)
    assert verdict.ok
    assert verdict.problems == verdict.warnings == ()
    assert verdict.events == 7
    assert verdict.to_json()["ok"] is True


def test_a_grown_agent_session_passes(tmp_path: Path) -> None:
    url = store_url("jsonl", tmp_path)
    save(url, grown(events=150))
    with open_store(url, read_only=True) as store:
        assert verify_session(store, "agent").ok


def test_a_log_that_does_not_load_fails_with_the_reason(tmp_path: Path) -> None:
    url = store_url("jsonl", tmp_path)
    save(url, grown(events=20))
    (transcript,) = (tmp_path / "s").rglob("session.v4.jsonl")
    lines = transcript.read_bytes().splitlines(keepends=True)
    lines[3] = b'{"type": "turn/start", "seq": \n'  # corruption before well-formed records
    transcript.write_bytes(b"".join(lines))
    with open_store(url, read_only=True) as store:
        verdict = verify_session(store, "agent")
    assert not verdict.ok
    (problem,) = verdict.problems
    assert problem.check == "load"
    assert f'"{transcript}" line 4' in problem.message


@pytest.mark.structure_free("the log breaks turn structure on purpose")
def test_structure_problems_warn_unless_strict(tmp_path: Path) -> None:
    store_path = tmp_path / "s"
    with open_store(str(store_path)) as store, store.create("loose", strict=False) as session:
        session.append("user/message", m.user("hi", id="u1"), surface_op="append")
        session.append(
            "assistant/message",
            m.assistant("hello", provider="p", model="m", turn=1, step=1, id="a1"),
            surface_op="append",
        )
    with open_store(str(store_path), read_only=True) as store:
        lenient = verify_session(store, "loose")
        strict = verify_session(store, "loose", strict=True)
    assert lenient.ok
    (warning,) = lenient.warnings
    assert warning.check == "structure"
    assert "assistant/message names turn 1/step 1 but open is turn null" in warning.message
    assert not strict.ok
    assert strict.problems == lenient.warnings


@pytest.mark.structure_free("the log leaves a tool call unanswered on purpose")
def test_an_unanswered_tool_call_fails_the_history_check(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    header = (
        '{"type":"session","version":4,"id":"t","createdAt":1,"isSeeded":false,'
        '"delegationDepth":0}\n'
    )
    reply = m.assistant([m.tool_call("c1", "ls", "{}")], provider="p", model="m", turn=1, step=1)
    event = {"type": "assistant/message", "seq": 0, "time": 1, "data": reply, "surfaceOp": "append"}
    path.write_bytes(header.encode() + orjson.dumps(event) + b"\n")
    store, session_id = open_transcript(path, read_only=True)
    with store:
        verdict = verify_session(store, session_id)
    assert [p.check for p in verdict.problems] == ["history"]
    assert "tool call 'c1' is never answered" in verdict.problems[0].message


def test_a_missing_session_is_an_error_not_a_verdict() -> None:
    with open_store("memory:") as store, pytest.raises(SessionNotFound):
        verify_session(store, "nope")
