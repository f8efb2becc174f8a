"""``Agent``: an asyncio agent loop that writes every turn into a session as it happens.

Implements spec/plugins.md §4.1 (the agent surface: ``followup`` / ``steer`` / ``inject`` /
``cancel`` over a durable inbox), §4.2 (the driver: idle → running while input waits; turns
numbered on from the log, so a resumed session continues), §4.3 (one turn, in the spec's exact
event order, with the ``agent/pre-step`` and ``agent/turn-stopping`` hooks of
``agentlog.loop.hooks``), §4.7 (cancellation), §4.8 (a failed turn ends ``error`` and the agent
returns to idle), §4.10 (steering claimed at step boundaries) and §4.11 (the system prompt as
surface node 0, a changed prompt replacing only that node); the step, its tools and retries are
in ``step`` and ``dispatch``, durability in ``checkpoint`` (spec/persistence.md §6.1). The agent
runs the invariant companion (spec/core.md §11) on its session.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from agentlog.errors import InvariantError
from agentlog.lifecycle import install_invariants, open_turn
from agentlog.loop.context import ContextSnapshots, RuntimeContext
from agentlog.loop.frames import Frame, RunReason, RunResult
from agentlog.loop.hooks import PreStepHook, TurnStoppingHook
from agentlog.loop.inbox import Inbox, Target, user_message
from agentlog.loop.model import Provider
from agentlog.loop.runtime import Runtime
from agentlog.loop.summarize import ProviderSummarizer
from agentlog.loop.system import SystemPrompt, message_text
from agentlog.loop.tools import Tool, as_tools
from agentlog.loop.turn import last_turn, run_turn
from agentlog.plugins import install_compaction_invariants
from agentlog.plugins.compaction import CompactionConfig, Summarizer
from agentlog.session import Session
from agentlog.values import JsonValue

__all__ = ["Agent", "Message"]

Message = str | Sequence[Mapping[str, Any]] | Mapping[str, Any]
"""User input: text, a list of content blocks, or a whole user message."""

_COMPANIONS: weakref.WeakKeyDictionary[Session, set[str]] = weakref.WeakKeyDictionary()
"""The companions an agent installed on each session, so a second agent does not repeat them."""


def _install(session: Session, name: str, install: Callable[[Session], object]) -> None:
    installed = _COMPANIONS.setdefault(session, set())
    if name not in installed:
        install(session)
        installed.add(name)


class Agent:
    """An agent loop over a session: prompts in, turns of model calls and tools logged.

    Args:
        session: The session to drive, detached or attached to a store (then every turn is
            durable at the checkpoints of spec/persistence.md §6.1). A resumed session goes on
            from its log: turn numbers continue, pending input is kept.
        provider: The model provider (``agentlog.providers``).
        system: The system prompt (surface node 0). ``None`` keeps the session's own (none
            for a new session); a different prompt replaces only that node.
        tools: Functions the model may call: ``@tool``-decorated or plain callables.
        max_parallel_tool_calls: How many calls of one answer run at once.
        compaction: Automatic compaction before each step and after a context-overflow
            refusal: a ``CompactionConfig`` (summaries by ``provider``) or a summarizer
            (``ExtractiveSummarizer()``, ``ModelSummarizer(...)``, with the default policy).
        context_window: The model's context window in tokens, when the provider does not know
            it (compaction needs one; it is also logged in ``request/context``).
        runtime_context: Renders the application's dynamic context (plain or ``async``,
            returning text or ``None``) before each step; the step carries it as a snapshot
            ``user/message`` only when it changed (``agentlog.loop.context``).
        system_prompt_update: How a changed ``system`` reaches the model: ``replace`` rewrites
            surface node 0; ``in-history`` appends the new prompt as a later system message
            (for routes that read system messages anywhere; the history before it, and a
            provider's prompt cache, stay as they were; ``agentlog.loop.system``).

    Raises:
        InvariantError: the session's log ends inside a turn (reopen it through its store,
            which closes the turn, first).
    """

    def __init__(
        self,
        session: Session,
        provider: Provider,
        *,
        system: str | None = None,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        max_parallel_tool_calls: int = 10,
        compaction: CompactionConfig | Summarizer | None = None,
        context_window: int | None = None,
        runtime_context: RuntimeContext | None = None,
        system_prompt_update: Literal["replace", "in-history"] = "replace",
    ) -> None:
        if type(max_parallel_tool_calls) is not int or max_parallel_tool_calls < 1:
            raise ValueError(
                f"max_parallel_tool_calls must be a positive int, got {max_parallel_tool_calls!r}"
            )
        if context_window is not None and (type(context_window) is not int or context_window < 1):
            raise ValueError(f"context_window must be a positive int, got {context_window!r}")
        tool_list = as_tools(tools)
        config, summarizer = _compaction(compaction, provider)
        _install(session, "invariants", install_invariants)
        if summarizer is not None:
            _install(session, "compaction", install_compaction_invariants)
        events = session.events
        turn = open_turn(events)
        if turn is not None:
            raise InvariantError(
                f"session {session.id!r} ends inside turn {turn}: reopen it through its store "
                "(which closes the turn) or append agentlog.open_turn_closers(session.events)",
                session_id=session.id,
            )
        self.session = session
        self.provider = provider
        if system_prompt_update not in ("replace", "in-history"):
            raise ValueError(
                "system_prompt_update must be 'replace' or 'in-history', "
                f"got {system_prompt_update!r}"
            )
        in_history = system_prompt_update == "in-history"
        self._prompt = SystemPrompt(system, in_history=in_history)
        self._rt = Runtime(
            session, provider, tools=tool_list, max_parallel_tool_calls=max_parallel_tool_calls,
            summarizer=summarizer, compaction=config, context_window=context_window,
            system_prompt_update="in-history" if in_history else None,
        )  # fmt: skip
        self._inbox = Inbox(session, self._append_input)
        self._rt.inbox = self._inbox
        if runtime_context is not None:
            self._rt.contexts = ContextSnapshots(runtime_context, session)
        self._last_turn = last_turn(events)
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cause: dict[str, Any] | None = None
        self._aborted = False
        self._wake_latched = False
        self._fatal: BaseException | None = None

    # --- public surface -----------------------------------------------------------------

    @property
    def system(self) -> str | None:
        """The system prompt (``None``: keep the session's); assign to change it."""
        return self._prompt.text

    @system.setter
    def system(self, text: str | None) -> None:
        self._prompt.text = text

    @property
    def running(self) -> bool:
        """Whether a turn is being run (the driver is active)."""
        return self._task is not None

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools the model may call; assign to change them (the next request logs it)."""
        return tuple(self._rt.tools.values())

    @tools.setter
    def tools(self, tools: Iterable[Tool | Callable[..., Any]]) -> None:
        self._rt.set_tools(as_tools(tools))

    def add_pre_step_hook(self, hook: PreStepHook) -> Callable[[], None]:
        """Run ``hook`` before each step, after its input is claimed (``agent/pre-step``).

        The hook gets a ``PreStep`` and returns ``None``, ``Enter(...)`` (other messages, a new
        request series) or ``Reject()`` (the turn ends ``blocked`` without the step); hooks
        run in the order added, each seeing the messages the one before left.

        Returns:
            A function that removes the hook.
        """
        hooks = self._rt.pre_step_hooks
        hooks.append(hook)
        return lambda: hooks.remove(hook) if hook in hooks else None

    def add_turn_stopping_hook(self, hook: TurnStoppingHook) -> Callable[[], None]:
        """Run ``hook`` when a turn would stop (``agent/turn-stopping``).

        The hook gets a ``TurnStopping`` and returns ``None`` (let the turn end) or
        ``Continue(message)``: the message is queued for another step of the turn. Hooks run
        in the order added until one continues.

        Returns:
            A function that removes the hook.
        """
        hooks = self._rt.turn_stopping_hooks
        hooks.append(hook)
        return lambda: hooks.remove(hook) if hook in hooks else None

    async def run(self, prompt: Message | None = None) -> RunResult:
        """Queue ``prompt`` for the next turn and run until the agent is idle.

        Without a prompt, runs whatever input is pending (none: returns at once). If the
        awaiting task is cancelled, the running turn is cancelled and closed in the log
        (``turn/end {aborted}``) before the cancellation propagates.

        Returns:
            How the last turn ended, its last answer, and every event appended meanwhile.

        Raises:
            AgentlogError: the log could not be written (a store failure, a rejected event);
                the turn is closed when that was still possible.
        """
        start = self.session.seq
        if prompt is not None:
            self.followup(prompt)
        self._wake()
        try:
            await self._until_idle()
        except asyncio.CancelledError:
            self.cancel()
            await self._until_idle()
            raise
        return self._result(start)

    async def stream(self, prompt: Message | None = None) -> AsyncIterator[Frame]:
        """Like ``run``, yielding live frames until idle: deltas, tool calls, commits.

        Frames are a view of the run as it happens (see ``agentlog.loop.frames``); the log is
        the durable record. Leaving the iteration early does not stop the agent; cancelling
        the consuming task does (``cancel()``).
        """
        queue: asyncio.Queue[Frame | None] = asyncio.Queue()
        self._rt.listeners.append(queue)
        try:
            if prompt is not None:
                self.followup(prompt)
            self._wake()
            if self._task is None:
                return
            while (frame := await queue.get()) is not None:
                yield frame
        except asyncio.CancelledError:
            self.cancel()
            raise
        finally:
            self._rt.listeners.remove(queue)

    def followup(self, message: Message) -> None:
        """Queue ``message`` as the prompt of a later turn and wake the agent (§4.1)."""
        self._send(message, "next-turn", wake=True)

    def steer(self, message: Message) -> None:
        """Queue ``message`` for the next step of the running turn and wake the agent (§4.10)."""
        self._send(message, "next-step", wake=True)

    def inject(self, message: Message) -> None:
        """Queue context for the next step without waking the agent (idle: one event, no turn)."""
        self._send(message, "next-step", wake=False)

    def cancel(self, cause: Mapping[str, Any] | None = None, *, keep_inbox: bool = False) -> None:
        """Cancel the running turn (``turn/end {aborted, reason: cause}``); idle: a no-op.

        Unless ``keep_inbox``, pending input is discarded first, durably (§4.1, §4.7).

        Args:
            cause: Why (``{"kind": "user"}`` by default; also ``parent``, ``disposed``,
                ``{"kind": "hook", "reason": ...}``).
            keep_inbox: Keep queued input for a later run.
        """
        self._on_loop(lambda: self._cancel(dict(cause or {"kind": "user"}), keep_inbox))

    # --- input --------------------------------------------------------------------------

    def _send(self, message: Message, target: Target, *, wake: bool) -> None:
        frozen = user_message(message)
        self._on_loop(lambda: self._queue(frozen, target, wake))

    def _queue(self, message: JsonValue, target: Target, wake: bool) -> None:
        if self._aborted and wake:
            target = "next-turn"  # a waking message after an abort opens a new turn (§4.2)
            self._wake_latched = True
        self._inbox.insert(target, message)
        if wake:
            self._wake()

    def _append_input(self, event_type: str, data: JsonValue) -> Any:
        # While a turn runs, input joins its group commit; idle, it is written at once.
        if self._task is None:
            return self.session.append(event_type, data)
        return self._rt.append(event_type, data)

    def _cancel(self, cause: dict[str, Any], keep_inbox: bool) -> None:
        if not keep_inbox:
            self._inbox.clear()
        self._wake_latched = False
        task = self._task
        if task is None or self._aborted:
            return
        self._aborted = True
        self._cause = cause
        inside = asyncio.current_task() is task
        if inside:
            # Asked from inside the turn itself (a model callback, say): deliver the cancel at
            # the turn's next await, not after it; a turn that ends first simply completes.
            task.get_loop().call_soon(task.cancel)
        else:
            task.cancel()

    def _on_loop(self, action: Callable[[], None]) -> None:
        """Run ``action`` on the agent's event loop (now, when called from it or idle)."""
        loop = self._loop
        if loop is not None and self._task is not None:
            try:
                current = asyncio.get_running_loop()
            except RuntimeError:
                current = None
            if current is not loop:
                loop.call_soon_threadsafe(action)
                return
        action()

    # --- the driver ---------------------------------------------------------------------

    def _wake(self) -> None:
        if self._task is not None or not self._inbox.has_work:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop: the input waits for the next run()
        self._loop = loop
        self._task = loop.create_task(self._drive(), name=f"agentlog-agent-{self.session.id}")

    async def _until_idle(self) -> None:
        while self._task is not None:
            await asyncio.wait([self._task])  # waiting never cancels the driver
        if self._fatal is not None:
            fatal, self._fatal = self._fatal, None
            raise fatal

    async def _drive(self) -> None:
        try:
            while self._inbox.has_work:
                self._aborted = False
                self._cause = None
                self._wake_latched = False
                await self._turn()
                if self._aborted and not self._wake_latched:
                    break
        except BaseException as exc:  # a turn that could not even be closed: report it
            if not isinstance(exc, asyncio.CancelledError):
                self._fatal = exc
        finally:
            try:
                self._rt.checkpoints.close()
            except Exception as exc:
                self._fatal = self._fatal or exc
            self._rt.overflow_retries = 0
            self._task = None
            self._aborted = False
            for queue in self._rt.listeners:
                queue.put_nowait(None)

    async def _turn(self) -> None:
        self._last_turn += 1
        await run_turn(self._rt, self._inbox, self._last_turn, self._prompt, lambda: self._cause)

    def _result(self, start: int) -> RunResult:
        events = self.session.events[start:]
        reason: RunReason = "completed"
        text: str | None = None
        error: JsonValue = None
        found_end = False
        for event in reversed(events):
            if not found_end and event.type == "turn/end":
                found_end = True
                kind = event.data["reason"]["kind"]
                reason = kind if kind in ("max-tokens", "aborted", "error", "blocked") else reason
                error = event.data["reason"].get("error")
            elif text is None and event.type == "assistant/message":
                text = message_text(event.data["message"])
            if found_end and text is not None:
                break
        return RunResult(reason=reason, text=text or "", events=tuple(events), error=error)


def _compaction(
    compaction: CompactionConfig | Summarizer | None, provider: Provider
) -> tuple[CompactionConfig | None, Summarizer | None]:
    if compaction is None:
        return None, None
    if isinstance(compaction, CompactionConfig):
        return compaction, ProviderSummarizer(provider)
    if callable(compaction):
        return CompactionConfig(), compaction
    raise TypeError(
        f"compaction must be a CompactionConfig or a summarizer, got {type(compaction).__name__}"
    )
