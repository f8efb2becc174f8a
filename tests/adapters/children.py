"""Child processes the adapter tests start, read line by line and kill.

A framework takes seconds to import on a loaded machine, so the crash tests start one fork
server per child module (``ForkServer``): it imports once, then forks a fresh worker per
command, reports its pid (``P <pid>``) and, once it is gone, its wait status (``X <status>``).
Child modules implement the server with ``serve(main)``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def say(line: str) -> None:
    """Report one line to the test (one ``write``, so lines of processes never mix)."""
    os.write(1, (line + "\n").encode())


def serve(main: Callable[..., None]) -> None:
    """The fork server: for each JSON list read from stdin, fork a worker running ``main``."""
    for line in sys.stdin:
        args = json.loads(line)
        pid = os.fork()
        if pid == 0:
            try:
                main(*args)
            except BaseException:
                say("E " + traceback.format_exc().replace("\n", " | "))
                os._exit(1)
            os._exit(0)
        say(f"P {pid}")
        _, status = os.waitpid(pid, 0)
        say(f"X {status}")


class Child:
    """A ``python -m <module> args...`` process whose stdout lines the test reads."""

    def __init__(self, module: str, *args: str, stdin: bool = False) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=ROOT,
            stdin=subprocess.PIPE if stdin else None,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: list[str] = []
        """Every line read so far."""
        self._unread: list[str] = []
        self._buffer = b""

    def read_until(self, prefix: str, timeout: float = 120.0) -> str:
        """The first line not returned before that starts with ``prefix`` (waiting for it)."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\n", 1)
                self.lines.append(raw.decode())
                self._unread.append(self.lines[-1])
            for index, line in enumerate(self._unread):
                if line.startswith("E "):
                    raise AssertionError(f"the child failed: {line}")
                if line.startswith(prefix):
                    del self._unread[: index + 1]
                    return line
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(left, 0))
            chunk = os.read(self.process.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                self.kill()
                raise AssertionError(f"no {prefix!r} line from the child: {self.errors()}")
            self._buffer += chunk

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def finish(self, timeout: float = 120.0) -> int:
        self.process.wait(timeout)
        return self.process.returncode

    def errors(self) -> str:
        assert self.process.stderr is not None
        if self.process.poll() is None:
            return "(still running)"
        return self.process.stderr.read().decode()[-3000:]


class ForkServer(Child):
    """``python -m <module> serve``: a worker process per ``start(...)``, forked from it."""

    def __init__(self, module: str) -> None:
        super().__init__(module, "serve", stdin=True)
        self.worker: int | None = None
        self._first = 0

    def start(self, *args: object) -> None:
        """Start a worker running ``main(*args)``."""
        assert self.process.stdin is not None
        self._unread.clear()
        self._first = len(self.lines)
        self.process.stdin.write((json.dumps(list(args)) + "\n").encode())
        self.process.stdin.flush()
        self.worker = int(self.read_until("P ")[2:])

    def kill_worker(self) -> list[str]:
        """SIGKILL the worker; return the lines read since it started."""
        assert self.worker is not None
        os.kill(self.worker, signal.SIGKILL)
        self.read_until("X ")
        return self.lines[self._first :]

    def wait_worker(self) -> int:
        """Wait for the worker to exit; its wait status."""
        return int(self.read_until("X ")[2:])

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.finish()
