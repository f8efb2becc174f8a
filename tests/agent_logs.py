"""Realistic agent logs for property tests: what an agent loop would append, at random.

``grow_agent_session`` plays turns of an agent — user prompts, a system prompt, request
headers, steps with assistant messages that call tools, ``tool/call`` and ``tool/result``
pairs, attempts, content-only tool-result rewrites and compactions over pairing-balanced
ranges — until the log reaches a target length. Every event is appended through the public
API, so the log is valid by construction; cutting it anywhere gives the logs a crash or a fork
can leave behind.
"""

from __future__ import annotations

import random
from typing import Any

from agentlog import Session, tool_pairing_balanced_after, tool_pairing_balanced_before
from agentlog import messages as m

PROVIDER, MODEL = "scripted", "test-model"


class _Agent:
    def __init__(self, session: Session, rng: random.Random) -> None:
        self.s = session
        self.rng = rng
        self.turn = 0
        self.ids = 0

    def new_id(self, prefix: str) -> str:
        self.ids += 1
        return f"{prefix}-{self.ids}"

    def play_turn(self) -> None:
        s, rng = self.s, self.rng
        self.turn += 1
        turn = self.turn
        s.append("turn/start", {"turn": turn})
        if rng.random() < 0.3:
            self.maybe_rewrite_tool_result()
        for step in range(1, rng.randint(1, 3) + 1):
            self.play_step(turn, step, first=step == 1)
        s.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        if rng.random() < 0.25:
            self.maybe_compact()

    def play_step(self, turn: int, step: int, *, first: bool) -> None:
        s, rng = self.s, self.rng
        s.append("step/start", {"turn": turn, "step": step})
        if first:
            s.append(
                "request/header",
                {
                    "header": {"config": {"provider": PROVIDER, "model": MODEL}},
                    "reason": "initial" if turn == 1 else "resume",
                },
            )
            if turn == 1:
                s.append(
                    "system/message",
                    m.system("be brief", turn=turn, step=step, id=self.new_id("s")),
                    surface_op="append",
                )
            s.append(
                "user/message", m.user(f"prompt {turn}", id=self.new_id("u")), surface_op="append"
            )
        if rng.random() < 0.2:
            s.append("assistant/attempt", {"turn": turn, "step": step, "stream": []})
        calls = [
            (self.new_id("call"), rng.choice(["bash", "read"])) for _ in range(rng.randint(0, 3))
        ]
        content: list[dict[str, Any]] = [m.text(f"reply {turn}.{step}")]
        content += [m.tool_call(call_id, name, "{}") for call_id, name in calls]
        s.append(
            "assistant/message",
            m.assistant(
                content, provider=PROVIDER, model=MODEL, turn=turn, step=step, id=self.new_id("a")
            ),
            surface_op="append",
        )
        for call_id, name in calls:
            call = s.append(
                "tool/call",
                {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": "{}"},
            )
            s.append(
                "tool/result",
                m.tool_result(
                    call_id, f"output of {call_id}", turn=turn, step=step, id=self.new_id("r")
                ),
                surface_op="append",
                source_event_seqs=[call.seq],
            )
        s.append("step/end", {"turn": turn, "step": step})

    def maybe_rewrite_tool_result(self) -> None:
        """A content-only rewrite of a visible tool result (what the pruner appends)."""
        s = self.s
        results = [seq for seq in s.surface.nodes if s.event_at(seq).type == "tool/result"]
        if not results:
            return
        target = s.event_at(self.rng.choice(results))
        data = dict(target.data)
        data["message"] = {**target.data["message"], "content": [m.text("[pruned]")]}
        s.append(
            "tool/result",
            data,
            surface_op={"op": "replace", "startSeq": target.seq, "endSeq": target.seq},
            source_event_seqs=[target.seq],
        )

    def maybe_compact(self) -> None:
        """Replace a pairing-balanced range after the system head with a summary."""
        s, rng = self.s, self.rng
        nodes = s.surface.nodes
        candidates = [i for i in range(1, len(nodes)) if tool_pairing_balanced_before(s, nodes[i])]
        if not candidates:
            return
        start = rng.choice(candidates)
        ends = [j for j in range(start, len(nodes)) if tool_pairing_balanced_after(s, nodes[j])]
        end = rng.choice(ends)
        shadowed = list(nodes[start : end + 1])
        s.append(
            "user/message",
            m.user(
                f"summary of {len(shadowed)} messages",
                id=self.new_id("sum"),
                source={"kind": "compact-checkpoint"},
            ),
            surface_op={"op": "replace", "startSeq": nodes[start], "endSeq": nodes[end]},
            source_event_seqs=shadowed,
        )


def grow_agent_session(seed: int, events: int, session_id: str = "agent") -> Session:
    """A session of at least ``events`` events, played by a random but well-behaved agent."""
    session = Session.create(session_id, clock=lambda: 1_700_000_000_000)
    agent = _Agent(session, random.Random(seed))
    while session.seq < events:
        agent.play_turn()
    return session
