"""``ls``, ``show``, ``messages`` and ``expand``: readable at 80 columns, exact as JSON."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentlog import expand, open_store, thaw
from agentlog.providers import to_anthropic, to_chat_completions
from tests.cli.coding import checkpoint
from tests.cli.support import demo_in, run
from tests.stores.saved import grown, save


def _store(tmp_path: Path) -> str:
    url = str(tmp_path / "store")
    demo_in(url)
    return url


@pytest.mark.parametrize("name", ["s.db", "store"])
def test_ls_lists_the_last_updated_first_with_limit_and_json(name: str, tmp_path: Path) -> None:
    url = str(tmp_path / name)
    demo_in(url, "first")
    demo_in(url, "second")
    # File stores date an update by the file's mtime, which the kernel keeps at a coarse
    # granularity (a few ms): let it move past the second session's last write.
    time.sleep(0.05)
    with open_store(url) as store, store.open("first") as first:  # first is updated last
        first.append("turn/start", {"turn": 4})
        first.append("turn/end", {"turn": 4, "reason": {"kind": "completed"}})
    ran = run("ls", "--store", url)
    assert ran.code == 0
    lines = ran.stdout.splitlines()
    assert lines[0].split() == ["session", "updated", "format", "cwd", "parent"]
    assert [line.split()[0] for line in lines[1:]] == ["first", "second"]
    (latest,) = run("ls", "--json", "--limit", "1", "--store", url).json()
    assert latest["id"] == "first"
    assert latest["version"] == 4
    assert latest["cwd"] == "/demo"
    assert latest["updatedAt"] >= latest["createdAt"]


def test_show_keeps_seq_type_and_role_readable_at_80_columns(tmp_path: Path) -> None:
    ran = run("show", "demo", "--store", _store(tmp_path))
    assert ran.code == 0, ran.stderr
    lines = ran.stdout.splitlines()
    table = lines[lines.index("seq  type                surface          content") :]
    assert all(len(line) <= 80 for line in table[:44])
    assert " 34  user/message        replace 5-26 ●   cites 32 33 5 6 21 11" in ran.stdout
    assert "  5  user/message        append ○34       tests/test_parser.py fails." in ran.stdout
    assert "system     s-1             You are a careful coding agent." in ran.stdout
    assert "assistant  a-6" in ran.stdout


def test_show_marks_the_virtual_end_seed_marker_of_a_read_only_view(tmp_path: Path) -> None:
    ran = run("show", "demo", "--store", _store(tmp_path))
    assert "42 events stored (+1 in this view only)" in ran.stdout
    assert "42*  session/end-seed" in ran.stdout
    assert "* not stored: added by this read-only view" in ran.stdout
    shown = run("show", "demo", "--json", "--store", _store(tmp_path / "again")).json()
    assert shown["storedEvents"] == 42
    assert [e["stored"] for e in shown["events"]][-2:] == [True, False]
    assert shown["events"][-1]["event"]["type"] == "session/end-seed"


def test_show_as_json_is_the_log_surface_and_messages(tmp_path: Path) -> None:
    url = _store(tmp_path)
    shown = run("show", "demo", "--json", "--store", url).json()
    with open_store(url) as store:
        view = store.inspect("demo")
    stored = [thaw(e.to_wire()) for e in view.events[:42]]
    assert [e["event"] for e in shown["events"]][:42] == stored
    assert shown["events"][42]["event"]["type"] == "session/end-seed"  # the view's own marker
    assert [node["seq"] for node in shown["surface"]] == list(view.surface.nodes)
    assert shown["messages"] == thaw(view.derive_messages())
    summary = next(node for node in shown["surface"] if node["replaced"])
    assert summary["seq"] == checkpoint(view)
    assert shown["events"][5]["shadowedBy"] == summary["seq"]
    assert shown["events"][5]["onSurface"] is False


def test_show_tail_and_turn_select_events(tmp_path: Path) -> None:
    url = _store(tmp_path)
    tail = run("show", "demo", "--tail", "3", "--json", "--store", url).json()
    assert [e["event"]["seq"] for e in tail["events"]] == [40, 41, 42]
    turn = run("show", "demo", "--turn", "2", "--json", "--store", url).json()
    types = [e["event"]["type"] for e in turn["events"]]
    assert (types[0], types[-1]) == ("turn/start", "turn/end")
    assert all(e["event"]["seq"] in range(19, 32) for e in turn["events"])
    text = run("show", "demo", "--turn", "2", "--store", url).stdout
    assert "Log (events 19-31)" in text
    missing = run("show", "demo", "--turn", "9", "--store", url)
    assert (missing.code, missing.stderr.splitlines()[0]) == (
        2,
        "Error: session 'demo' has no turn 9",
    )


def test_show_of_a_long_session_pages_through_the_pager_on_a_terminal(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    save(url, grown(events=300))
    paged = tmp_path / "paged.txt"
    leader, follower = pty.openpty()
    env = {
        **os.environ,
        "PAGER": f"tee {paged}",
        "COLUMNS": "80",
        "LINES": "24",
        "AGENTLOG_STORE": "",
        "NO_COLOR": "1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "agentlog", "show", "agent", "--store", url],
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert process.wait(timeout=60) == 0
    os.close(leader)
    text = paged.read_text()
    assert text.count("\n") > 300  # the whole session went to the pager
    assert "Messages the model sees" in text


def test_show_never_pages_when_not_a_terminal(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    save(url, grown(events=300))
    ran = run("show", "agent", "--store", url, env={"PAGER": "false"})
    assert ran.code == 0
    assert ran.stdout.count("\n") > 300


def test_messages_prints_the_derived_history(tmp_path: Path) -> None:
    url = _store(tmp_path)
    table = run("messages", "demo", "--store", url)
    assert table.code == 0
    assert table.stdout.splitlines()[0].split() == ["role", "id", "content"]
    as_json = run("messages", "demo", "--format", "json", "--store", url)
    with open_store(url) as store:
        assert as_json.json() == thaw(store.inspect("demo").derive_messages())
    assert run("messages", "demo", "--json", "--store", url).json() == as_json.json()
    assert run("messages", "demo", "--format", "yaml", "--store", url).code == 2


def test_expand_explains_cited_nodes_and_the_originals_behind_them(tmp_path: Path) -> None:
    url = _store(tmp_path)
    ran = run("expand", "demo", "34", "--store", url)
    assert ran.code == 0, ran.stderr
    assert ran.stdout.startswith("Event 34 (user/message) replaced 9 nodes\n")
    assert "    21  tool/result        replaced 1: def parse(text):" in ran.stdout
    assert "    └    8  tool/result" in ran.stdout  # the pruned result's original, nested
    assert "The 9 original events:" in ran.stdout
    with open_store(url) as store:
        originals = expand(store.inspect("demo"), 34)
    lines = run("expand", "demo", "34", "--json", "--store", url).json_lines()
    assert lines == [thaw(e.to_wire()) for e in originals]


def test_expand_of_an_event_that_replaced_nothing_or_of_no_event(tmp_path: Path) -> None:
    url = _store(tmp_path)
    ran = run("expand", "demo", "5", "--store", url)
    assert (ran.code, ran.stdout) == (0, "event 5 (user/message) replaced nothing\n")
    ran = run("expand", "demo", "999", "--store", url)
    assert ran.code == 2
    assert ran.stderr.startswith(
        "Error: session 'demo' has no event at seq 999 (it holds seqs 0-42)"
    )


def test_messages_in_the_shape_of_each_provider(tmp_path: Path) -> None:
    url = _store(tmp_path)
    with open_store(url) as store:
        derived = store.inspect("demo").derive_messages()
    openai = run("messages", "demo", "--format", "openai", "--model", "demo-model", "--store", url)
    assert openai.code == 0, openai.stderr
    assert openai.json() == to_chat_completions(derived, model="demo-model")
    assert [message["role"] for message in openai.json()] == [
        "system", "user", "assistant", "user", "assistant"
    ]  # fmt: skip
    anthropic = run("messages", "demo", "--format", "anthropic", "--store", url)
    assert anthropic.json() == to_anthropic(derived)
    assert anthropic.json()["system"].startswith("You are a careful coding agent.")
