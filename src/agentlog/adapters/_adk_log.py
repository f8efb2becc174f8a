"""An ADK session laid out as an agentlog session, and folded back.

Each ADK session is the agentlog session ``adk:<app>:<user>:<id>`` (components percent-encoded).
It opens with ``adk/session`` ``{appName, userId, sessionId, state, createTime}`` (the initial
state, all scopes); then every
appended ADK event becomes, in one durable batch, the events ``plan`` lists (see
``_adk_codec.classify``): a model reply opens a turn and a step (``assistant/message`` plus a
``tool/call`` per function call), the function responses that answer it are ``tool/result``
events, and the turn closes as soon as no call is pending — so a session at rest has no open
turn, and one killed while a tool runs is closed by agentlog's repair closers on reopen. A new
user message or model reply while calls are still pending closes them the same way (their
results read "interrupted"). Everything else is the log-only, ignorable ``adk/event``.

App and user state live in their own sessions, ``adk-app:<app>`` and ``adk-user:<app>:<user>``,
as ``adk/state`` ``{delta, source}`` events (``source``: the session and seq that set it).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, unquote

from agentlog.adapters._adk_codec import (
    Kind,
    blocks,
    carried,
    response_text,
    strip,
    summary_text,
)
from agentlog.events import SURFACE_EVENT_TYPES, Event
from agentlog.lifecycle import (
    open_turn_closers,
    tool_pairing_balanced_after,
    tool_pairing_balanced_before,
)
from agentlog.session import Session

__all__ = [
    "EVENT",
    "SESSION_RECORD",
    "STATE",
    "Spec",
    "Trace",
    "app_key",
    "compaction_span",
    "compaction_spec",
    "parse_session_key",
    "plan",
    "scoped_delta",
    "session_key",
    "session_state",
    "user_key",
    "visible_carriers",
]

SESSION_RECORD: Final = "adk/session"
EVENT: Final = "adk/event"
STATE: Final = "adk/state"
_SCOPES: Final = ("app:", "user:", "temp:")


@functools.lru_cache(maxsize=1024)
def _q(text: str) -> str:
    # Cached: every append names its session, and percent-encoding is most of that cost.
    return quote(text, safe="")


def session_key(app: str, user: str, session: str) -> str:
    """The agentlog session id of an ADK session."""
    return f"adk:{_q(app)}:{_q(user)}:{_q(session)}"


def parse_session_key(key: str) -> tuple[str, str, str] | None:
    """``(app, user, session)`` of an id made by ``session_key``, else ``None``."""
    parts = key.split(":")
    if len(parts) != 4 or parts[0] != "adk":
        return None
    return unquote(parts[1]), unquote(parts[2]), unquote(parts[3])


def app_key(app: str) -> str:
    """The agentlog session holding an app's ``app:`` state."""
    return f"adk-app:{_q(app)}"


def user_key(app: str, user: str) -> str:
    """The agentlog session holding a user's ``user:`` state in an app."""
    return f"adk-user:{_q(app)}:{_q(user)}"


def scoped_delta(delta: Mapping[str, Any], scope: str) -> dict[str, Any]:
    """The entries of a state delta in one scope.

    ``scope`` is ``app:`` or ``user:`` (the prefix is removed), or ``""`` for the session's own
    entries (``temp:`` entries are never stored).
    """
    if scope:
        return {key[len(scope) :]: value for key, value in delta.items() if key.startswith(scope)}
    return {key: value for key, value in delta.items() if not key.startswith(_SCOPES)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    """One agentlog event to append."""

    type: str
    data: Any
    surface_op: Any = None
    sources: Sequence[int] | None = None
    ignorable: bool = False


class Trace:
    """The fold of an ADK session's log that appending needs: turns, pending calls, revision."""

    __slots__ = ("next_turn", "pending", "revision", "step", "turn", "updated")

    def __init__(self) -> None:
        self.turn: int | None = None
        self.step: int | None = None
        self.next_turn = 1
        self.pending: dict[str, None] = {}
        self.revision = -1
        """Seq of the last event that changed the ADK view (the stale-writer check uses it)."""
        self.updated = 0.0
        """ADK timestamp (seconds) of that event."""

    @classmethod
    def scan(cls, events: Sequence[Event]) -> Trace:
        """The trace of a whole log."""
        trace = cls()
        for event in events:
            trace.observe(event)
        return trace

    @classmethod
    def revision_of(cls, events: Sequence[Event]) -> Trace:
        """Only the revision and update time of a log, found from its end (for reading)."""
        trace = cls()
        for index in range(len(events) - 1, -1, -1):
            event = events[index]
            if carried(event.data) is not None or event.type == SESSION_RECORD:
                trace.observe(event)
                break
        return trace

    def observe(self, event: Event) -> None:
        """Fold one appended event."""
        data = event.data
        if event.type == "turn/start":
            self.turn, self.step = data["turn"], None
            self.next_turn = data["turn"] + 1
            self.pending.clear()
        elif event.type in ("turn/end", "step/end"):
            if event.type == "turn/end":
                self.turn = None
            self.step = None
            self.pending.clear()
        elif event.type == "step/start":
            self.step = data["step"]
        elif event.type == "tool/call":
            self.pending[data["callId"]] = None
        elif event.type == "tool/result" and event.surface_op == "append":
            self.pending.pop(data["message"]["toolCallId"], None)
        payload = carried(data)
        if payload is not None:
            self.revision, self.updated = event.seq, payload["timestamp"]
        elif event.type == SESSION_RECORD:
            self.revision, self.updated = event.seq, data["createTime"]


def plan(trace: Trace, log: Sequence[Event], payload: Mapping[str, Any], kind: Kind) -> list[Spec]:
    """The agentlog events that store one ADK event (its dump ``payload``) next."""
    if kind == "responses":
        specs = _results(trace, payload)
        if specs:
            return specs
        kind = "other"
    if kind == "other":
        return [Spec(type=EVENT, data={"adk": dict(payload)}, ignorable=True)]
    specs = _closers(trace, log)
    content = blocks(payload)
    sources = [(index, 0, index, block) for index, block in enumerate(content)]
    stored, manifest = strip(payload, sources)
    carrier: dict[str, Any] = {"adk": stored}
    if manifest:
        carrier["adkStripped"] = manifest
    message = {"id": payload["id"], "role": "user", "content": content}
    if kind == "user":
        message["source"] = {"kind": "adk", "author": payload.get("author", "")}
        specs.append(Spec(type="user/message", data={**message, **carrier}, surface_op="append"))
        return specs
    turn = trace.next_turn
    model = payload.get("model_version") or payload.get("author") or "unknown"
    message.update(role="assistant", source={"kind": "model", "provider": "adk", "model": model})
    data = {"turn": turn, "step": 1, "message": message, "stream": [], **carrier}
    specs += [
        Spec(type="turn/start", data={"turn": turn}),
        Spec(type="step/start", data={"turn": turn, "step": 1}),
        Spec(type="assistant/message", data=data, surface_op="append"),
    ]
    calls = [block for block in content if block["type"] == "tool-call"]
    for call in calls:
        call_data = {"turn": turn, "step": 1, "callId": call["id"], "name": call["name"]}
        specs.append(Spec(type="tool/call", data={**call_data, "arguments": call["arguments"]}))
    if not calls:
        specs += _ends(turn, 1)
    return specs


def _ends(turn: int, step: int) -> list[Spec]:
    return [
        Spec(type="step/end", data={"turn": turn, "step": step}),
        Spec(type="turn/end", data={"turn": turn, "reason": {"kind": "completed"}}),
    ]


def _closers(trace: Trace, log: Sequence[Event]) -> list[Spec]:
    """Close a turn left open by calls nobody answered, as agentlog's repair does.

    The closers of spec/core.md §10.3 (``openTurnClosers``, cause ``interrupted``).
    """
    if trace.turn is None:
        return []
    return [
        Spec(
            type=wire["type"],
            data=wire["data"],
            surface_op=wire.get("surfaceOp"),
            sources=wire.get("sourceEventSeqs"),
        )
        for wire in open_turn_closers(log, "interrupted")
    ]


def _results(trace: Trace, payload: Mapping[str, Any]) -> list[Spec]:
    """A ``tool/result`` per function response that answers a pending call (none: ``[]``)."""
    if trace.turn is None or trace.step is None:
        return []
    answers: list[tuple[int, Mapping[str, Any]]] = []
    for index, part in enumerate(payload["content"]["parts"]):
        response = part["function_response"]
        call_id = response.get("id")
        if call_id in trace.pending and all(call_id != other.get("id") for _, other in answers):
            answers.append((index, response))
    if not answers:
        return []
    turn, step = trace.turn, trace.step
    specs: list[Spec] = []
    sources = []
    for offset, (index, response) in enumerate(answers):
        block = {"type": "text", "text": response_text(response.get("response"))}
        message = {
            "id": payload["id"] if offset == 0 else f"{payload['id']}/{offset}",
            "role": "tool",
            "toolCallId": response["id"],
            "content": [block],
            "source": {"kind": "tool", "callId": response["id"]},
        }
        specs.append(
            Spec(
                type="tool/result",
                data={"turn": turn, "step": step, "message": message},
                surface_op="append",
            )
        )
        sources.append((index, offset, 0, block))
    stored, manifest = strip(payload, sources)
    specs[0].data.update(adk=stored, **({"adkStripped": manifest} if manifest else {}))
    if len(trace.pending) == len(answers):
        specs += _ends(turn, step)
    return specs


# --- reading ------------------------------------------------------------------------------


def visible_carriers(session: Session) -> Iterator[Event]:
    """The events carrying ADK events a reader sees, in log order.

    Every carrier, except those a compaction shadowed (their dumps are not read).
    """
    nodes = set(session.surface.nodes)
    for event in session.events:
        # An event is its wire dict: its keys read faster than its properties.
        data = event["data"]
        if not isinstance(data, dict) or not isinstance(data.get("adk"), dict):
            continue
        if event["type"] in SURFACE_EVENT_TYPES and event["seq"] not in nodes:
            continue
        yield event


def session_state(events: Sequence[Event]) -> dict[str, Any]:
    """The session-scoped state.

    The last snapshot (the session record or a compaction's ``adkState``), then the deltas of
    the carriers after it.
    """
    start = 0
    state: dict[str, Any] = {}
    for index in range(len(events) - 1, -1, -1):
        event = events[index]  # its wire dict: keys read faster than properties
        kind = event["type"]
        if kind == SESSION_RECORD:
            state, start = scoped_delta(event["data"]["state"], ""), index + 1
            break
        if kind == "user/message" and "adkState" in event["data"]:  # a compaction's
            state, start = dict(event["data"]["adkState"]), index + 1
            break
    for index in range(start, len(events)):
        payload = carried(events[index]["data"])
        actions = payload.get("actions") if payload is not None else None
        delta = actions.get("state_delta") if actions else None
        if delta:
            state.update(scoped_delta(delta, ""))
    return state


# --- compaction ---------------------------------------------------------------------------


def compaction_span(session: Session, payload: Mapping[str, Any]) -> list[int] | None:
    """The surface nodes an ADK compaction replaces, or ``None`` when one replace cannot.

    ADK drops from the model's view every event of the compaction's branch and scope whose
    timestamp is in ``[start, end]``, and every earlier compaction the range contains. Those
    nodes must form one run of the surface that keeps tool calls with their results, and
    consist of plain message events (no transfer, rewind, confirmation or other control
    action, which ADK reads from the history); otherwise the compaction stays a log-only
    event, and ADK applies it on read as it does with its own services.
    """
    compaction = payload["actions"]["compaction"]
    start, end = compaction["start_timestamp"], compaction["end_timestamp"]
    scope = (payload.get("isolation_scope"), payload.get("branch"))
    nodes = session.surface.nodes
    covered: list[bool] = []
    previous = False
    for seq in nodes:
        node = carried(session.event_at(seq).data)
        # A node without an ADK event (a further result of the event before it, or a repair
        # closer) goes with the node before it.
        if node is not None:
            same_view = (node.get("isolation_scope"), node.get("branch")) == scope
            previous = same_view and _covered(node, start, end)
        covered.append(previous)
    chosen = [index for index, flag in enumerate(covered) if flag]
    if not chosen or chosen[-1] - chosen[0] + 1 != len(chosen):
        return None
    span = list(nodes[chosen[0] : chosen[-1] + 1])
    if not (
        tool_pairing_balanced_before(session, span[0])
        and tool_pairing_balanced_after(session, span[-1])
    ):
        return None
    return span


def _covered(node: Mapping[str, Any], start: float, end: float) -> bool:
    actions = node.get("actions") or {}
    earlier = actions.get("compaction")
    if earlier is not None:
        return bool(start <= earlier["start_timestamp"] and earlier["end_timestamp"] <= end)
    plain = set(actions) <= {"state_delta", "artifact_delta"}
    return plain and not node.get("long_running_tool_ids") and start <= node["timestamp"] <= end


def compaction_spec(
    payload: Mapping[str, Any], span: Sequence[int], state: Mapping[str, Any]
) -> Spec:
    """The ``user/message`` that replaces ``span`` with an ADK compaction's summary.

    A replace surface op over the span (spec/core.md §5.1) citing every node it shadows in
    ``sourceEventSeqs`` (§5.3); the session state at that point rides along as ``adkState``, so
    reading the session after it never needs the shadowed events.
    """
    message = {
        "id": payload["id"],
        "role": "user",
        "content": [{"type": "text", "text": summary_text(payload)}],
        "source": {"kind": "adk-compaction"},
        "adk": dict(payload),
        "adkState": dict(state),
    }
    return Spec(
        type="user/message",
        data=message,
        surface_op={"op": "replace", "startSeq": span[0], "endSeq": span[-1]},
        sources=list(span),
    )
