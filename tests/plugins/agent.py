"""A scripted agent loop for plugin tests: turns, steps, tool calls, as a real loop logs them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentlog import IMAGE_OFFLOAD, Session
from agentlog import messages as m

PROVIDER, MODEL = "deepseek", "deepseek-chat"


class Agent:
    """Appends what an agent loop would, one turn and one step at a time.

    Texts are sized in characters, so the token meter's heuristic prices are predictable
    (``ceil(len / 4) + 4`` per block, ``+ 4`` per message).
    """

    def __init__(self, session: Session | None = None, *, tools: Sequence[Any] = ()) -> None:
        self.session = session or Session.create(
            "agent", projections=(IMAGE_OFFLOAD,), clock=lambda: 1_700_000_000_000
        )
        self.tools = list(tools)
        self.turn = 0
        self.step = 0
        self.calls = 0
        self.header_sent = False

    def start_turn(self, prompt: str | list[Any]) -> None:
        self.turn += 1
        self.step = 0
        self.session.append("turn/start", {"turn": self.turn})
        self.session.append("user/message", m.user(prompt), surface_op="append")

    def start_step(self) -> None:
        self.step += 1
        self.session.append("step/start", {"turn": self.turn, "step": self.step})
        if not self.header_sent:
            header: dict[str, Any] = {"config": {"provider": PROVIDER, "model": MODEL}}
            if self.tools:
                header["tools"] = self.tools
            self.session.append("request/header", {"header": header, "reason": "initial"})
            self.header_sent = True

    def reply(
        self,
        text: str = "",
        *,
        calls: Sequence[tuple[str, Any]] = (),
        usage: dict[str, int] | None = None,
    ) -> list[int]:
        """The assistant message of the open step, with its calls answered; their result seqs."""
        ids = []
        content: list[Any] = [m.text(text)] if text else []
        for _ in calls:
            self.calls += 1
            ids.append(f"call{self.calls}")
        named = zip(ids, (name for name, _ in calls), strict=True)
        content += [m.tool_call(call_id, name, "{}") for call_id, name in named]
        data = m.assistant(
            content, provider=PROVIDER, model=MODEL, turn=self.turn, step=self.step, usage=usage
        )
        self.session.append("assistant/message", data, surface_op="append")
        results = []
        for call_id, (name, output) in zip(ids, calls, strict=True):
            self.session.append(
                "tool/call",
                {
                    "turn": self.turn,
                    "step": self.step,
                    "callId": call_id,
                    "name": name,
                    "arguments": "{}",
                },
            )
            event = self.session.append(
                "tool/result",
                m.tool_result(call_id, output, turn=self.turn, step=self.step),
                surface_op="append",
            )
            results.append(event.seq)
        return results

    def end_step(self) -> None:
        self.session.append("step/end", {"turn": self.turn, "step": self.step})

    def end_turn(self) -> None:
        self.session.append("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})

    def exchange(self, prompt: str, answer: str, *, tool_output: str | None = None) -> None:
        """A whole turn: the prompt, an optional tool step, the answer."""
        self.start_turn(prompt)
        if tool_output is not None:
            self.start_step()
            self.reply(calls=[("bash", tool_output)])
            self.end_step()
        self.start_step()
        self.reply(answer)
        self.end_step()
        self.end_turn()
