"""``tail``: the last stored events, and ``-f`` following a session another process writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.cli.support import ENV, demo_in, run

WRITER = textwrap.dedent(
    """
    import sys, time
    from agentlog import open_store
    with open_store(sys.argv[1]) as store, store.create("live") as session:
        session.append("turn/start", {"turn": 1})
        print("started", flush=True)
        sys.stdin.readline()  # wait until the follower has begun
        for step in range(1, 6):
            session.append("step/start", {"turn": 1, "step": step})
            session.append("step/end", {"turn": 1, "step": step})
            time.sleep(0.05)
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    """
)


def test_tail_prints_the_last_stored_events(tmp_path: Path) -> None:
    url = str(tmp_path / "store")
    demo_in(url)
    ran = run("tail", "demo", "-n", "3", "--store", url)
    assert ran.code == 0
    lines = ran.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["39", "assistant/message"],
        ["40", "step/end"],
        ["41", "turn/end"],  # only stored events: no view-only end-seed marker
    ]
    as_json = run("tail", "demo", "-n", "2", "--json", "--store", url).json_lines()
    assert [event["seq"] for event in as_json] == [40, 41]


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_tail_follows_a_session_another_process_is_writing(kind: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db" if kind == "sqlite" else f"jsonl:///{tmp_path}/s"
    follow_live(url, interval=0.02)


def test_tail_follows_a_postgresql_session_on_notify(postgres_url: str) -> None:
    """With a 60 s interval, only ``LISTEN``/``NOTIFY`` can show the eleven appends that come
    within a second: each commit wakes the follower at once."""
    elapsed = follow_live(postgres_url, interval=60)
    assert elapsed < 20


def follow_live(url: str, *, interval: float) -> float:
    """Follow the writer's session ``live`` with ``tail -f``; seconds from go to its turn end."""
    env = {**os.environ, **ENV}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert writer.stdout is not None
    assert writer.stdin is not None
    assert writer.stdout.readline() == "started\n"
    follower = subprocess.Popen(
        [sys.executable, "-m", "agentlog", "tail", "live", "-f", "--json", "--interval",
         str(interval), "--store", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip
    assert follower.stdout is not None
    try:
        first = json.loads(follower.stdout.readline())
        assert (first["seq"], first["type"]) == (0, "turn/start")
        time.sleep(0.5)  # the follower is waiting for the next append now
        started = time.monotonic()
        writer.stdin.write("go\n")
        writer.stdin.flush()
        seen = [first]
        while len(seen) < 12:
            seen.append(json.loads(follower.stdout.readline()))
        elapsed = time.monotonic() - started
        assert [event["seq"] for event in seen] == list(range(12))
        assert seen[-1]["type"] == "turn/end"
        assert writer.wait(timeout=30) == 0
        assert follower.poll() is None  # still following
        return elapsed
    finally:
        follower.terminate()
        follower.wait(timeout=30)
        writer.kill()
        writer.wait(timeout=30)
