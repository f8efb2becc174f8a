"""``agentlog chat``: talk to a model in the terminal; every turn is kept in the default store.

The real agent loop over ``OpenAIChat`` (any Chat Completions server: OpenAI, DeepSeek, vLLM,
Ollama, LiteLLM, ...) or ``Anthropic``, configured by flags or environment (``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``, ``OPENAI_BASE_URL``, ...). Tokens are printed as they stream; tool calls
and their results are shown. Ctrl-C cancels the running turn (the log records
``turn/end {aborted}``) and returns to the prompt; Ctrl-D (end of input) leaves.
``--resume ID`` continues a stored session: crash repair first, then a ``resume`` request.

Two read-only tools are offered unless ``--no-tools``: ``list_files`` and ``read_file``, both
confined to the current directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from agentlog.cli.common import StoreOption
from agentlog.errors import AgentlogError
from agentlog.loop import (
    Agent,
    Frame,
    TextDelta,
    Tool,
    ToolFinished,
    ToolStarted,
    TurnFailed,
    tool,
)
from agentlog.loop.model import Provider
from agentlog.plugins import CompactionConfig
from agentlog.session import Session
from agentlog.stores import Store, open_store

__all__ = ["chat", "workspace_tools"]

_DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}
_SHOWN = 200
"""How much of a tool result is echoed."""


def workspace_tools(root: Path) -> list[Tool]:
    """Read-only tools over the files under ``root``."""

    def inside(path: str) -> Path:
        target = (root / path).resolve()
        if target != root and root not in target.parents:
            raise PermissionError(f"{path!r} is outside the workspace {str(root)!r}")
        return target

    @tool
    def list_files(path: str = ".") -> str:
        """List the files and directories in a workspace directory.

        Args:
            path: The directory, relative to the workspace root.
        """
        entries = sorted(inside(path).iterdir())
        return "\n".join(f"{e.name}/" if e.is_dir() else e.name for e in entries) or "(empty)"

    @tool
    def read_file(path: str) -> str:
        """Read a UTF-8 text file of the workspace.

        Args:
            path: The file, relative to the workspace root.
        """
        return inside(path).read_text(encoding="utf-8")

    return [list_files, read_file]


def _provider(kind: str, model: str | None, base_url: str | None) -> Provider:
    model = model or _DEFAULT_MODELS[kind]
    if kind == "anthropic":
        from agentlog.providers.anthropic import Anthropic

        return Anthropic(model, base_url=base_url)
    from agentlog.providers.openai import OpenAIChat

    return OpenAIChat(model, base_url=base_url)


class _Lines:
    """Standard input, line by line, read on a daemon thread (Ctrl-C never waits for it)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = loop
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in sys.stdin:
            self._loop.call_soon_threadsafe(self.queue.put_nowait, line.rstrip("\n"))
        self._loop.call_soon_threadsafe(self.queue.put_nowait, None)


def _out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _show(frame: Frame, state: dict[str, bool]) -> None:
    """Print one live frame: streamed text, tool calls and their results, failures."""
    if isinstance(frame, TextDelta):
        _out(frame.text)
        state["text"] = True
        return
    if isinstance(frame, ToolStarted | ToolFinished | TurnFailed) and state.get("text"):
        _out("\n")
        state["text"] = False
    if isinstance(frame, ToolStarted):
        _out(f"[tool] {frame.name} {frame.arguments}\n")
    elif isinstance(frame, ToolFinished):
        text = " ".join(
            str(block.get("text", "")) for block in frame.content if isinstance(block, dict)
        )
        text = text if len(text) <= _SHOWN else text[:_SHOWN] + "…"
        label = "failed" if frame.is_error else "returned"
        _out(f"[tool] {frame.name} {label}: {text}\n")
    elif isinstance(frame, TurnFailed):
        _out(f"[error] {frame.error.get('message')} ({frame.error.get('code')})\n")


async def _converse(agent: Agent, banner: str) -> None:
    loop = asyncio.get_running_loop()
    lines = _Lines(loop)
    turn: dict[str, bool] = {"running": False}

    def interrupt() -> None:
        if turn["running"]:
            agent.cancel()
        else:
            lines.queue.put_nowait(None)  # Ctrl-C at the prompt leaves

    loop.add_signal_handler(signal.SIGINT, interrupt)
    _out(banner + "\n")
    try:
        while True:
            _out("> ")
            line = await lines.queue.get()
            if line is None:
                _out("\n")
                return
            if not line.strip():
                continue
            state: dict[str, bool] = {}
            turn["running"] = True
            try:
                async for frame in agent.stream(line):
                    _show(frame, state)
            finally:
                turn["running"] = False
            last = agent.session.events[-1] if agent.session.seq else None
            reason = last.data.get("reason", {}).get("kind") if last is not None else None
            _out("\n[cancelled]\n" if reason == "aborted" else "\n")
    finally:
        loop.remove_signal_handler(signal.SIGINT)


@contextlib.contextmanager
def _session(store: Store, resume: str | None) -> Iterator[Session]:
    session = store.open(resume) if resume else store.create(f"chat-{uuid.uuid4().hex[:8]}")
    with session:
        yield session


def chat(
    resume: Annotated[
        str | None, typer.Option("--resume", help="Continue this stored session.")
    ] = None,
    provider: Annotated[
        str,
        typer.Option(
            "--provider", envvar="AGENTLOG_PROVIDER", help="The wire API: openai or anthropic."
        ),
    ] = "openai",
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            envvar="AGENTLOG_MODEL",
            help="The model (default: gpt-4o-mini / claude-sonnet-4-5).",
            show_default=False,
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="The server's API root (default: $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL, else "
            "the provider's).",
            show_default=False,
        ),
    ] = None,
    system: Annotated[
        str | None, typer.Option("--system", help="The system prompt.", show_default=False)
    ] = None,
    context_window: Annotated[
        int | None,
        typer.Option(
            "--context-window",
            help="The model's context window in tokens; turns on automatic compaction.",
            show_default=False,
        ),
    ] = None,
    no_tools: Annotated[bool, typer.Option("--no-tools", help="Offer the model no tools.")] = False,
    store: StoreOption = None,
) -> None:
    """Chat with a model in the terminal; every turn is kept in the store.

    Streams the answer as it comes and shows tool calls. Ctrl-C cancels the running turn;
    Ctrl-D leaves. Keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY.

    Example: agentlog chat --base-url https://api.deepseek.com --model deepseek-chat
    """
    if provider not in _DEFAULT_MODELS:
        raise typer.BadParameter("must be openai or anthropic", param_hint="--provider")
    try:
        model_provider = _provider(provider, model, base_url)
    except ImportError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(1) from None
    except Exception as exc:  # the client refused its configuration (no API key, ...)
        key = f"{provider.upper()}_API_KEY"
        typer.echo(f"Error: {exc} (set {key})", err=True)
        raise typer.Exit(2) from None
    tools: list[Any] = [] if no_tools else workspace_tools(Path.cwd().resolve())
    compaction = CompactionConfig() if context_window else None
    try:
        with open_store(store) as opened, _session(opened, resume) as session:
            agent = Agent(
                session,
                model_provider,
                system=system,
                tools=tools,
                compaction=compaction,
                context_window=context_window,
            )
            banner = (
                f"agentlog chat: session {session.id} ({model_provider.model} via "
                f"{model_provider.name}, {opened.url}). Ctrl-C cancels a turn, Ctrl-D leaves."
            )
            asyncio.run(_converse(agent, banner))
            where = "" if store is None else f" --store {shlex.quote(store)}"
            typer.echo(f"Resume with: agentlog chat --resume {session.id}{where}")
    except AgentlogError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(1) from None
