"""Builders in the notation of spec/core.md §15, and the scenario check "rejected(X)".

``U(t)``, ``A(t)``, ``TR(c, t)``, ``S(t)`` build the data of user, assistant, tool-result and
system events, ``TC(c)`` that of the ``tool/call`` a tool result answers; ``rep(s, e)`` builds a
format-4 replace op; ``wire(...)`` builds a seed event. ``begin``, ``call``, ``next_step`` and
``finish`` append the turn, step and tool-call structure the invariant companion (spec/core.md
§11, installed on every test session by ``tests/conftest.py``) requires; ``begin_wire`` is
``begin`` for seeds.
``assert_rejected`` is "rejected(X)": the call raises exactly X and leaves everything a caller
can observe — the events view (the same object), the nodes tuple (the same object), both
generations, the derived messages, the request header and context — untouched, and no
validator or observer sees the refused candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from agentlog import EventLog, EventRejected, MessageProjection, Session
from agentlog import messages as m
from agentlog.events import Event

CLOCK_MS = 1_700_000_000_000
"""The fixed time of every appended event (the reference recordings use the same)."""


def clock() -> int:
    return CLOCK_MS


def new_session(session_id: str = "s", *, projections: Sequence[MessageProjection] = ()) -> Session:
    """A detached session with the fixed clock."""
    return Session.create(session_id, projections=projections, clock=clock)


def U(text: str, *, id: str | None = None, source: Mapping[str, Any] | None = None) -> Any:
    """§15 ``U(t)``: user message data."""
    return m.user(text, id=id or f"u-{text}", source=source)


def A(content: m.Content, *, turn: int = 1, step: int = 1, id: str | None = None) -> dict[str, Any]:
    """§15 ``A(t)``: assistant message data from the ``mock`` provider."""
    return m.assistant(content, provider="mock", model="mock", turn=turn, step=step, id=id)


def TR(
    call_id: str,
    content: m.Content,
    *,
    err: bool = False,
    turn: int = 1,
    step: int = 1,
    id: str | None = None,
    meta: Any = None,
) -> dict[str, Any]:
    """§15 ``TR(c, t, err)``: role-``tool`` result data for call ``c``."""
    return m.tool_result(
        call_id, content, turn=turn, step=step, is_error=err, id=id or f"r-{call_id}", meta=meta
    )


def TC(
    call_id: str, name: str = "t", arguments: str = "{}", *, turn: int = 1, step: int = 1
) -> dict[str, Any]:
    """``tool/call`` data: the dispatched call that an appended ``TR(call_id, ...)`` answers."""
    return {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": arguments}


def S(prompt: str, *, id: str | None = None, turn: int = 1, step: int = 1) -> dict[str, Any]:
    """System-prompt data (an empty prompt means "no system prompt")."""
    return m.system(prompt, turn=turn, step=step, id=id or f"sys-{prompt}")


def rep(start: int, end: int) -> dict[str, Any]:
    """§15 ``rep(s, e)``: a format-4 replace op (the citations go in ``source_event_seqs``)."""
    return {"op": "replace", "startSeq": start, "endSeq": end}


def wire(event_type: str, seq: int, data: Any, *, time: int = 1, **envelope: Any) -> dict[str, Any]:
    """A seed event in wire form; ``envelope`` adds ``surfaceOp``, ``sourceEventSeqs``, ..."""
    return {"type": event_type, "seq": seq, "time": time, "data": data, **envelope}


# --- turn, step and tool-call structure (spec/core.md §11) ---------------------------------


def begin(session: Session, turn: int = 1) -> None:
    """Open turn ``turn`` and its step 1: ``turn/start``, ``step/start`` (two seqs)."""
    session.append("turn/start", {"turn": turn})
    session.append("step/start", {"turn": turn, "step": 1})


def call(session: Session, call_id: str, *, turn: int = 1, step: int = 1) -> Event:
    """Log the ``tool/call`` for ``call_id`` in the open step (one seq)."""
    return session.append("tool/call", TC(call_id, turn=turn, step=step))


def next_step(session: Session, step: int, *, turn: int = 1) -> None:
    """Close step ``step - 1`` of turn ``turn`` and open step ``step`` (two seqs)."""
    session.append("step/end", {"turn": turn, "step": step - 1})
    session.append("step/start", {"turn": turn, "step": step})


def finish(session: Session, turn: int = 1, step: int = 1) -> None:
    """Close step ``step`` and turn ``turn``: ``step/end``, ``turn/end`` (two seqs)."""
    session.append("step/end", {"turn": turn, "step": step})
    session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def begin_wire(seq: int = 0, turn: int = 1) -> list[dict[str, Any]]:
    """``begin`` for a seed: ``turn/start`` and ``step/start`` at ``seq`` and ``seq + 1``."""
    return [
        wire("turn/start", seq, {"turn": turn}),
        wire("step/start", seq + 1, {"turn": turn, "step": 1}),
    ]


def thaw_events(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The events as plain wire dicts (what a store would read back)."""
    return [event.to_wire() for event in events]


def texts(messages: Sequence[Any]) -> list[str]:
    """The text of the first block of each message."""
    return [message["content"][0]["text"] for message in messages]


# --- "rejected(X)" -----------------------------------------------------------------------


@dataclass(frozen=True)
class Observed:
    """Everything about a session a caller can see, taken at one moment."""

    events: EventLog
    length: int
    seq: int
    nodes: tuple[int, ...]
    replace_generation: int
    content_generation: int
    derived: list[Any]
    request_header: Any
    request_context: Any


def observe(session: Session) -> Observed:
    return Observed(
        events=session.events,
        length=len(session.events),
        seq=session.seq,
        nodes=session.surface.nodes,
        replace_generation=session.surface.replace_generation,
        content_generation=session.surface.content_generation,
        derived=session.derive_messages(),
        request_header=session.request_header(),
        request_context=session.request_context(),
    )


def assert_unchanged(session: Session, before: Observed) -> None:
    """The session looks exactly as it did when ``before`` was observed."""
    assert session.events is before.events
    assert len(session.events) == before.length == session.seq == before.seq
    assert session.surface.nodes is before.nodes
    assert session.surface.replace_generation == before.replace_generation
    assert session.surface.content_generation == before.content_generation
    derived = session.derive_messages()
    assert len(derived) == len(before.derived)
    assert all(a is b for a, b in zip(derived, before.derived, strict=True))
    assert session.request_header() is before.request_header
    assert session.request_context() is before.request_context


class Spy:
    """A validator or observer that records every event it is called with."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.lengths: list[int] = []

    def __call__(self, session: Session, event: Event) -> None:
        self.events.append(event)
        self.lengths.append(len(session.events))


@contextmanager
def raises_exactly(cls: type[BaseException], text: str) -> Iterator[pytest.ExceptionInfo[Any]]:
    """Expect an exception of exactly class ``cls`` whose catalogue text is exactly ``text``.

    ``str()`` must start with it (it may go on with where and why: ``spec_text`` is the text).
    """
    with pytest.raises(cls) as info:
        yield info
    assert type(info.value) is cls
    assert getattr(info.value, "spec_text", str(info.value)) == text
    assert str(info.value).startswith(text)


def assert_rejected(
    session: Session,
    text: str,
    call: Callable[[], object],
    *,
    cls: type[BaseException] = EventRejected,
) -> Any:
    """§15 "rejected(X)": ``call`` raises exactly ``text`` and the session is unchanged."""
    before = observe(session)
    observer, validator = Spy(), Spy()
    remove_observer = session.add_observer(observer)
    remove_validator = session.add_validator(validator)
    try:
        with raises_exactly(cls, text) as info:
            call()
    finally:
        remove_observer()
        remove_validator()
    assert observer.events == []
    assert validator.events == []
    assert_unchanged(session, before)
    return info.value


def assert_append_rejected(
    session: Session, text: str, event_type: str, data: Any, **options: Any
) -> Any:
    """``session.append(event_type, data, **options)`` is "rejected(text)"."""
    return assert_rejected(session, text, lambda: session.append(event_type, data, **options))
