"""What one agent's turns share: the session, the provider, tools, frames, and request state.

Implements request building and the ``request/header`` reason logic of spec/plugins.md §4.4
(with spec/core.md §7.4): the first request of an agent logs ``initial`` (no header in the log
yet) or ``resume``; later requests log ``change`` when the header differs from the one in force
(``startsSeries: true`` when a new series begins with it), ``series`` when only the surface
content changed since the previous request (a compaction, a pruned result, an image offload, a
rewritten system prompt), and nothing otherwise. ``request/context`` is appended when provider,
model, context window or ``systemPromptUpdate`` differ from the last one logged. When a
``resume`` or ``change`` header changes the tool names, a ``developer/message`` (source
``tool-registry``) lists the additions (citing the header) and removals (spec/core.md §7.4
[F4]). The request's messages are the session's derived history at dispatch — the reconstruction
invariant of §4.4.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from agentlog.events import Event, messages, payloads
from agentlog.loop.checkpoint import Checkpoints
from agentlog.loop.context import ContextSnapshots
from agentlog.loop.frames import Committed, Frame
from agentlog.loop.hooks import PreStepHook, TurnStoppingHook
from agentlog.loop.inbox import Inbox, Target
from agentlog.loop.model import ModelRequest, Provider, ToolSchema
from agentlog.loop.tools import Tool
from agentlog.plugins.compaction import CompactionConfig, Summarizer
from agentlog.session import Session, canonical_header, header_equals
from agentlog.values import JsonValue

__all__ = ["Runtime"]


class Runtime:
    """The state an agent's turns, steps and tool calls share (one per ``Agent``)."""

    def __init__(
        self,
        session: Session,
        provider: Provider,
        *,
        tools: Sequence[Tool],
        max_parallel_tool_calls: int,
        summarizer: Summarizer | None,
        compaction: CompactionConfig | None,
        context_window: int | None,
        rand: Callable[[], float] = random.random,
        system_prompt_update: Literal["in-history"] | None = None,
    ) -> None:
        self.session = session
        self.provider = provider
        self.checkpoints = Checkpoints(session)
        self.tools = {t.name: t for t in tools}
        self.schemas: list[ToolSchema] = [t.schema() for t in tools]
        self.max_parallel_tool_calls = max_parallel_tool_calls
        self.summarizer = summarizer
        self.compaction = compaction
        self.context_window_option = context_window
        self.rand = rand
        self.system_prompt_update = system_prompt_update
        """``in-history`` when the route reads system messages anywhere (``request/context``)."""
        self.listeners: list[asyncio.Queue[Frame | None]] = []
        self.attempts = 0
        self.step_retries = 0
        """Retries spent in the open step (the budget of spec/plugins.md §4.9 is per step)."""
        self.overflow_retries = 0
        """Context-overflow recoveries in a row (reset by an answer or when idle)."""
        self.inbox: Inbox | None = None
        """The agent's inbox (set by the agent): where tool results queue their contexts."""
        self.pre_step_hooks: list[PreStepHook] = []
        self.contexts: ContextSnapshots | None = None
        """The runtime-context snapshots, when the agent has a runtime context."""
        self.turn_stopping_hooks: list[TurnStoppingHook] = []
        self._first_request = True
        self._request_generation: int | None = None
        self._header = self._build_header()
        self._compared: tuple[Any, bool] | None = None

    # --- appending and frames ------------------------------------------------------------

    def append(
        self,
        event_type: str,
        data: JsonValue,
        *,
        surface_op: JsonValue = None,
        source_event_seqs: JsonValue = None,
    ) -> Event:
        """Append inside the open group commit; tell listeners."""
        event = self.checkpoints.append(
            event_type, data, surface_op=surface_op, source_event_seqs=source_event_seqs
        )
        if self.listeners:
            self.emit(Committed(event=event))
        return event

    def queue(self, target: Target, message: JsonValue) -> None:
        """Queue a user message in the agent's inbox (durably, inside the group commit)."""
        assert self.inbox is not None, "the agent sets its inbox"
        self.inbox.insert(target, message)

    def announce(self, since: int) -> None:
        """Tell listeners of the events a plugin appended since seq ``since`` (compaction)."""
        if self.listeners:
            for event in self.session.events[since:]:
                self.emit(Committed(event=event))

    def emit(self, frame: Frame) -> None:
        """Hand ``frame`` to every live listener (``Agent.stream()``)."""
        for queue in self.listeners:
            queue.put_nowait(frame)

    @property
    def clock(self) -> Callable[[], int]:
        """The session's epoch-ms clock (stream record times)."""
        return self.session.clock

    # --- requests -----------------------------------------------------------------------

    @property
    def model(self) -> str:
        """The model requests go to."""
        return self.provider.model

    def context_window(self) -> int | None:
        """The routed model's window: the agent's option, else what the provider knows."""
        if self.context_window_option is not None:
            return self.context_window_option
        return self.provider.context_window(self.model)

    def set_tools(self, tools: Sequence[Tool]) -> None:
        """Replace the tools (the next request logs a ``change`` header)."""
        self.tools = {t.name: t for t in tools}
        self.schemas = [t.schema() for t in tools]
        self._header = self._build_header()
        self._compared = None

    def _build_header(self) -> dict[str, Any]:
        header: dict[str, Any] = {
            "config": {"provider": self.provider.name, "model": self.provider.model}
        }
        if self.schemas:
            header["tools"] = [dict(schema) for schema in self.schemas]
        return canonical_header(header)

    def log_request(self, turn: int, step: int, *, starts_series: bool) -> None:
        """Append the ``request/header`` (and context, tool changes) this request needs."""
        session = self.session
        header = self._header
        series = self.new_series(starts_series)
        baseline = session.request_header()
        data: dict[str, Any] | None = None
        if self._first_request:
            data = payloads.request_header(header, "initial" if baseline is None else "resume")
        elif baseline is None or not self._equals(baseline):
            data = payloads.request_header(header, "change", starts_series=series)
        elif series:
            data = payloads.request_header(header, "series")
        if data is not None:
            event = self.append("request/header", data)
            if data["reason"] in ("resume", "change") and baseline is not None:
                self._log_tool_changes(turn, step, baseline, event.seq)
        context = payloads.request_context(
            self.provider.name, self.model, self.context_window(),
            system_prompt_update=self.system_prompt_update,
        )  # fmt: skip
        if session.request_context() != context:
            self.append("request/context", context)
        self._first_request = False
        self._request_generation = session.surface.content_generation

    def new_series(self, starts_series: bool) -> bool:
        """Whether the next request begins a new series (spec/plugins.md §4.4).

        It does when the step declares it, or when the surface content changed since the
        previous request of this agent.
        """
        generation = self.session.surface.content_generation
        return starts_series or (
            self._request_generation is not None and self._request_generation != generation
        )

    def _equals(self, baseline: Mapping[str, Any]) -> bool:
        # The header in force is the same frozen object until a new one is logged: compare once.
        compared = self._compared
        if compared is not None and compared[0] is baseline:
            return compared[1]
        equal = header_equals(baseline, self._header)
        self._compared = (baseline, equal)
        return equal

    def _log_tool_changes(
        self, turn: int, step: int, baseline: Mapping[str, Any], header_seq: int
    ) -> None:
        before = [tool["name"] for tool in baseline.get("tools") or ()]
        after = [tool["name"] for tool in self._header.get("tools") or ()]
        additions = [name for name in after if name not in before]
        removals = [name for name in before if name not in after]
        if not additions and not removals:
            return
        self.append(
            "developer/message",
            messages.developer(
                turn=turn,
                step=step,
                additions=additions,
                removals=removals,
                header_seq=header_seq if additions else None,
            ),
            surface_op="append",
        )

    def request(self) -> ModelRequest:
        """The request for the session as it is now: its derived history at dispatch."""
        return ModelRequest(
            provider=self.provider.name,
            model=self.model,
            messages=self.session.messages(),
            tools=self.schemas,
            session_id=self.session.id,
        )
