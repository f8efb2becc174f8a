"""``fork``, ``compact``, ``prune`` and ``rm``: they append (or, for rm, remove) and say so."""

from __future__ import annotations

from pathlib import Path

from agentlog import messages as m
from agentlog import open_store, thaw
from tests.cli.support import demo_in, files, run
from tests.session.support import TR, A, begin, call, finish


def test_fork_inherits_up_to_and_including_the_boundary(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    demo_in(url)
    ran = run("fork", "demo", "--at", "20", "--id", "child", "--json", "--store", url)
    assert ran.code == 0, ran.stderr
    assert ran.json()["session"] == "child"
    with open_store(url) as store:
        parent, child = store.inspect("demo"), store.inspect("child")
    assert [thaw(e.to_wire()) for e in child.events[:21]] == [
        thaw(e.to_wire()) for e in parent.events[:21]
    ]
    assert child.header["parentSession"] == "demo"
    assert child.events[21].type == "session/end-seed"  # the inherited prefix ends at 20
    assert child.events[22].type == "turn/end"  # the cut left turn 2 open: closed as forked
    assert child.events[22].data["reason"] == {"kind": "forked"}
    text = run("fork", "demo", "--store", url)
    assert text.code == 0
    assert text.stdout.startswith("forked demo into ")


def test_fork_refuses_a_bad_boundary_and_a_session_file(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    demo_in(url)
    bad = run("fork", "demo", "--at", "500", "--store", url)
    assert bad.code == 1
    assert "Error: " in bad.stderr
    (transcript,) = (tmp_path / "store").rglob("session.v4.jsonl")
    refused = run("fork", str(transcript))
    assert refused.code == 2
    assert "Hint: import it first: agentlog import" in refused.stderr


def _long_results(url: str) -> None:
    with open_store(url) as store, store.create("s") as session:
        for turn in (1, 2):
            begin(session, turn)
            session.append(
                "user/message", m.user(f"question {turn}", id=f"u{turn}"), surface_op="append"
            )
            session.append(
                "assistant/message",
                A([m.tool_call(f"c{turn}", "cat", "{}")], turn=turn),
                surface_op="append",
            )
            tool_call = call(session, f"c{turn}", turn=turn)
            session.append(
                "tool/result",
                TR(f"c{turn}", "x" * 3000, turn=turn),
                surface_op="append",
                source_event_seqs=[tool_call.seq],
            )
            session.append(
                "assistant/message", A("done", turn=turn, id=f"a{turn}"), surface_op="append"
            )
            finish(session, turn)


def test_prune_dry_run_writes_nothing_then_prune_appends_a_turn_of_its_own(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    _long_results(url)
    before = files(tmp_path)
    dry = run("prune", "s", "--threshold", "1000", "--dry-run", "--json", "--store", url)
    assert dry.code == 0, dry.stderr
    assert dry.json() == {"session": "s", "pruned": [5, 14], "written": False}
    assert files(tmp_path) == before
    done = run("prune", "s", "--threshold", "1000", "--store", url)
    assert done.stdout == "pruned 2 tool results of s: seqs [5, 14]\n"
    with open_store(url) as store:
        view = store.inspect("s")
    added = [e.type for e in view.events[18:]]
    assert added[:2] == ["session/end-seed", "turn/start"]  # resumed, then a turn to prune in
    assert added.count("tool/result") == 2
    assert "turn/end" in added
    again = run("prune", "s", "--threshold", "1000", "--store", url)
    assert again.stdout.startswith("nothing to prune")


def test_compact_replaces_history_with_a_summary_that_expand_explains(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    _long_results(url)
    ran = run("compact", "s", "--json", "--store", url)
    assert ran.code == 0, ran.stderr
    result = ran.json()
    assert result["compacted"] is True
    expanded = run("expand", "s", str(result["checkpoint"]), "--store", url)
    assert f"Event {result['checkpoint']} (user/message) replaced" in expanded.stdout
    with open_store(url) as store:
        view = store.inspect("s")
    (question,) = [e for e in view.events if e.type == "user/message" and e.data["id"] == "u1"]
    assert question.seq not in view.surface.nodes  # shadowed by the summary, still in the log


def test_rm_asks_and_removes_only_when_confirmed(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    demo_in(url, "a")
    demo_in(url, "b")
    refused = run("rm", "a", "--store", url)  # stdin is not a terminal: no question to answer
    assert refused.code == 2
    assert "pass --yes" in refused.stderr
    removed = run("rm", "a", "--yes", "--store", url)
    assert (removed.code, removed.stdout) == (0, "removed a (42 events)\n")
    assert [s["id"] for s in run("ls", "--json", "--store", url).json()] == ["b"]
    missing = run("rm", "a", "--yes", "--store", url)
    assert missing.code == 1
    assert 'Error: session "a" not found' in missing.stderr
