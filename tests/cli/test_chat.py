"""``agentlog chat`` as a user runs it: a real process, a real terminal loop, a fake model server.

The child is ``python -m agentlog chat`` pointed at the fake Chat Completions server on
loopback; the test types lines on its stdin, reads what it prints, sends SIGINT (Ctrl-C) to
cancel a turn, and then reads the store the chat wrote.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from agentlog import check_provider_history, open_store
from tests.providers.fake_openai import FakeOpenAI
from tests.providers.fake_server import Answer, ToolCall


class Chat:
    """A running ``agentlog chat`` whose output is collected as it comes."""

    def __init__(self, *args: str, cwd: Path, home: Path) -> None:
        env = {
            **os.environ,
            "AGENTLOG_HOME": str(home),
            "AGENTLOG_STORE": "",
            "OPENAI_API_KEY": "sk-test",
            "PYTHONUNBUFFERED": "1",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentlog", "chat", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.output = ""
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        while char := self.process.stdout.read(1):
            with self._lock:
                self.output += char

    def wait_for(self, text: str, after: int = 0) -> int:
        """Wait until ``text`` is printed (after position ``after``); where it ends."""
        deadline = time.monotonic() + 60
        while True:
            with self._lock:
                found = self.output.find(text, after)
            if found >= 0:
                return found + len(text)
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                _, err = self.process.communicate()
                raise AssertionError(f"never printed {text!r}; output {self.output!r}; {err}")
            time.sleep(0.01)

    def type(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def leave(self) -> str:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(60) == 0, self.process.stderr.read() if self.process.stderr else ""
        return self.output


def test_a_chat_streams_answers_shows_tools_and_ctrl_c_cancels_a_turn(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("remember the milk", encoding="utf-8")
    read = ToolCall(id="call_1", name="read_file", arguments='{"path": "notes.txt"}')
    with FakeOpenAI() as server:
        server.script(
            Answer(text=["Hi", " there."]),
            Answer(tool_calls=[read]),
            Answer(text="It says: remember the milk."),
            Answer(text=["Once upon", " a time"], hold=True),
        )
        chat = Chat("--base-url", server.url, "--model", "m1", cwd=workspace, home=tmp_path)
        at = chat.wait_for("> ")
        chat.type("hello")
        at = chat.wait_for("Hi there.\n", at)
        chat.type("what is in notes.txt?")
        at = chat.wait_for("[tool] read_file {'path': 'notes.txt'}\n", at)
        at = chat.wait_for("[tool] read_file returned: remember the milk\n", at)
        at = chat.wait_for("It says: remember the milk.\n", at)
        chat.type("tell me a story")
        at = chat.wait_for("Once upon a time", at)
        chat.process.send_signal(signal.SIGINT)  # Ctrl-C: cancel the running turn
        at = chat.wait_for("[cancelled]\n> ", at)
        assert server.requests[3].disconnected.wait(10)
        output = chat.leave()
        assert all(request.problems == [] for request in server.requests)
    session_id = output.split("Resume with: agentlog chat --resume ")[1].split()[0]
    with open_store(f"sqlite:///{tmp_path}/sessions.db") as store:
        session = store.inspect(session_id)
    ends = [e.data["reason"] for e in session.events if e.type == "turn/end"]
    assert ends == [
        {"kind": "completed"}, {"kind": "completed"},
        {"kind": "aborted", "reason": {"kind": "user"}},
    ]  # fmt: skip
    interrupted = [e for e in session.events if e.data.get("interrupted") is True]
    assert [e.data["message"]["content"][0]["text"] for e in interrupted] == ["Once upon a time"]
    check_provider_history(session.derive_messages())


def test_chat_resume_continues_a_stored_session(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.script(Answer(text="First."), Answer(text="Second."))
        first = Chat("--base-url", server.url, "--no-tools", cwd=tmp_path, home=tmp_path)
        first.wait_for("> ")
        first.type("one")
        first.wait_for("First.")
        output = first.leave()
        session_id = output.split("--resume ")[1].split()[0]
        again = Chat(
            "--base-url", server.url, "--no-tools", "--resume", session_id,
            cwd=tmp_path, home=tmp_path,
        )  # fmt: skip
        again.wait_for(f"session {session_id}")
        again.type("two")
        again.wait_for("Second.")
        again.leave()
        assert [m["role"] for m in server.requests[1].body["messages"]] == [
            "user", "assistant", "user",
        ]  # fmt: skip
    with open_store(f"sqlite:///{tmp_path}/sessions.db") as store:
        session = store.inspect(session_id)
    headers = [e.data["reason"] for e in session.events if e.type == "request/header"]
    assert headers == ["initial", "resume"]
    assert [e.data["turn"] for e in session.events if e.type == "turn/start"] == [1, 2]


def test_chat_without_a_key_says_which_to_set(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    completed = subprocess.run(
        [sys.executable, "-m", "agentlog", "chat", "--store", "memory:"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert completed.returncode == 2
    assert "(set OPENAI_API_KEY)" in completed.stderr
