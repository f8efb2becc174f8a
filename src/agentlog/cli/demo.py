"""``agentlog demo``: a small coding session played by the real agent loop, offline, in seconds.

An ``Agent`` with two tools (``read_file``, ``run_tests``, canned and deterministic) and the
``Scripted`` provider (STYLE.md 21) runs three turns: tool calls and their results, an
automatic compaction before the third turn's step (the ``ExtractiveSummarizer``: the context
window is set small on purpose), then the session is closed and resumed — reopened through its
store, the crash-repair path — and a new agent answers a fourth turn (its request header says
``resume``). Deterministic but for message and compaction ids (a fixed clock).
"""

from __future__ import annotations

import asyncio
import shlex
import uuid
from collections.abc import Callable, Mapping

from rich.text import Text

from agentlog.cli.common import StoreOption, opened, reported, stdout
from agentlog.cli.render import render_session
from agentlog.loop import Agent, Tool, tool
from agentlog.plugins import ExtractiveSummarizer, expand
from agentlog.providers.scripted import Scripted
from agentlog.session import Session
from agentlog.surface import fold_surface

__all__ = [
    "DEMO_SESSION_ID",
    "build_demo_session",
    "demo",
    "demo_checkpoint",
    "demo_clock",
    "demo_model",
    "demo_tools",
]

DEMO_SESSION_ID = "demo"
CONTEXT_WINDOW = 1400
"""Small on purpose: the third turn starts above 80% of it, so the loop compacts first."""
SYSTEM = "You are a careful coding agent. Read before you write."
_PARSER_SOURCE = "\n".join(
    [
        "def parse(text):",
        "    tokens = text.split()",
        "    return tokens[:-1]  # drops the last token",
    ]
    + [f"# ... line {n} of the parser module" for n in range(4, 60)]
)
_TOKENIZER_SOURCE = "\n".join(
    ["def tokenize(line):", "    return line.split()"]
    + [f"# ... line {n} of the tokenizer" for n in range(3, 30)]
)
_PROMPTS = (
    "tests/test_parser.py fails. Please fix it.",
    "Great. Add a test for empty input.",
    "Now make the tokenizer skip comments.",
)
_RESUMED_PROMPT = "What did we change overall?"


class _Clock:
    """A deterministic clock: one second per call."""

    def __init__(self) -> None:
        self.now = 1_767_225_600_000  # 2026-01-01T00:00:00Z

    def __call__(self) -> int:
        self.now += 1000
        return self.now


def demo_clock() -> _Clock:
    """The demo's deterministic clock (2026-01-01T00:00:00Z, one second per event)."""
    return _Clock()


def demo_tools() -> list[Tool]:
    """The demo's tools: canned file contents and test runs."""

    @tool
    def read_file(path: str) -> str:
        """Read a file of the workspace.

        Args:
            path: The file, relative to the workspace root.
        """
        files = {"parser.py": _PARSER_SOURCE, "tokenizer.py": _TOKENIZER_SOURCE}
        if path not in files:
            raise FileNotFoundError(path)
        return files[path]

    @tool
    def run_tests(target: str) -> str:
        """Run the test suite.

        Args:
            target: A test file or test id.
        """
        return "1 passed in 0.01s" if "::" in target else "3 passed in 0.04s"

    return [read_file, run_tests]


def demo_model() -> Scripted:
    """The scripted model: what it answers to each request of the demo, in order."""
    call = Scripted.call
    return Scripted(
        [
            ["Let me read the parser.", call("read_file", {"path": "parser.py"})],
            [
                "parse() drops the last token. Fixed it; running the tests.",
                call("run_tests", {"target": "tests/test_parser.py"}),
            ],
            "Fixed: parse() no longer drops the last token. All 3 tests pass.",
            [
                "Adding test_empty_input.",
                call("run_tests", {"target": "tests/test_parser.py::test_empty_input"}),
            ],
            "Added test_empty_input; it passes.",
            ["Reading the tokenizer.", call("read_file", {"path": "tokenizer.py"})],
            "Done: tokenize() now drops everything after a #.",
            "We fixed parse(), added a regression test for empty input, and made the tokenizer "
            "skip comments.",
        ],
        model="demo-model",
    )


def _agent(session: Session, model: Scripted) -> Agent:
    return Agent(
        session,
        model,
        system=SYSTEM,
        tools=demo_tools(),
        compaction=ExtractiveSummarizer(),
        context_window=CONTEXT_WINDOW,
    )


def _restored(session: Session) -> Session:
    """A detached session's resume: rebuilt from its log as a store's ``open`` does."""
    return Session.from_events(
        session.id, session.events, session.header, restore=True, clock=session.clock
    )


def build_demo_session(
    session: Session | None = None, *, reopen: Callable[[Session], Session] = _restored
) -> Session:
    """Play the demo into ``session`` (a fresh in-memory one by default); the resumed session.

    Args:
        session: Where the first three turns go.
        reopen: How the session is resumed before the fourth turn (a store: close it and
            ``store.open`` it again).
    """
    session = session or Session.create(DEMO_SESSION_ID, clock=_Clock())
    model = demo_model()
    agent = _agent(session, model)
    for prompt in _PROMPTS:
        asyncio.run(agent.run(prompt))
    resumed = reopen(session)
    asyncio.run(_agent(resumed, model).run(_RESUMED_PROMPT))
    return resumed


def demo_checkpoint(session: Session) -> int:
    """The seq of the demo's compaction checkpoint (the summary that replaced history)."""
    return next(
        event.seq
        for event in reversed(session.events)
        if event.type == "user/message" and isinstance(event.surface_op, Mapping)
    )


def demo(store: StoreOption = None) -> None:
    """Run a scripted coding agent (offline): tool calls, a compaction, a resume.

    The real agent loop with a scripted model: three turns with tool calls, an automatic
    compaction before the third, then the session is closed, resumed from the store and
    continued — all kept in the log. Remove it again with agentlog rm.

    Example: agentlog demo --store ./demo-sessions
    """
    console = stdout()
    with opened(store, read_only=False) as opened_store, reported(store):
        session_id = f"demo-{uuid.uuid4().hex[:8]}"
        first = opened_store.create(session_id, cwd="/demo/project")

        def reopen(session: Session) -> Session:
            session.close()
            return opened_store.open(session.id)

        build_demo_session(first, reopen=reopen).close()
        inspection = opened_store.inspection(session_id)
        view = inspection.session
        console.print(render_session(inspection, list(view.events), session_id, console.width))
        checkpoint = demo_checkpoint(view)
        shadowed = next(
            r.shadowed_seqs
            for r in fold_surface(view.events, view.projections).replacements
            if r.seq == checkpoint
        )
        originals = ", ".join(str(event.seq) for event in expand(view, checkpoint))
        console.print(
            Text(
                f"\n{inspection.stored_events} events in the log, {len(view.surface.nodes)} on "
                f"the surface, {len(view.derive_messages())} messages for the model; nothing "
                f"was deleted. The summary at seq {checkpoint} shadowed {len(shadowed)} nodes "
                f"({', '.join(map(str, shadowed))}); any of them that replaced earlier events "
                f"is followed in turn, so agentlog.expand(session, {checkpoint}) gives back the "
                f"original events {originals}."
            )
        )
        again = f"agentlog show {session_id}"
        if store is not None:
            again += f" --store {shlex.quote(store)}"
        console.print(
            Text(
                f"Saved as session {session_id!r} in {opened_store.url}\nSee it again with: {again}"
            )
        )
