"""Property tests: random append sequences, valid and invalid, against from-scratch replays.

Hypothesis drives a session through random appends — user, assistant (with tool calls),
tool-result and system messages, replaces over random ranges with random (often wrong)
citations, content-only tool-result rewrites (sometimes changing more than content), developer
messages bound to random headers, image offloads, log-only events (turns, steps, request
context, attempts), undeclared types, non-JSON data and stray markers. After every step:

(a) the incremental surface equals ``fold_surface`` over the log (nodes and both generations);
(b) ``derive_messages()`` (and the request folds) equal those of
    ``Session.from_events(..., session.events)``;
(c) a rejected append changed nothing observable — the same events view object, the same nodes
    tuple, the generations, the derived messages — and no validator or observer saw it;
    an accepted one is the log's last event and every hook saw it once.

At the end the log reopens from its plain wire form, and every prefix of it derives what the
session derived at that point (DESIGN decisions 5 and 6, spec/core.md §6.2).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import event as event_label
from hypothesis import strategies as st

from agentlog import IMAGE_OFFLOAD, EventRejected, Session, fold_surface, thaw
from agentlog import messages as m
from tests.session.support import (
    Spy,
    assert_unchanged,
    clock,
    new_session,
    observe,
    rep,
    thaw_events,
)

pytestmark = pytest.mark.structure_free(
    "random append sequences whose subject is surface, derive and replay agreement, not "
    "turn/step structure; under the companion nearly every assistant, tool-result, system and "
    "developer append (all drawn for turn 1/step 1, at random positions) would be vetoed, so "
    "the properties would be checked on almost nothing but user messages"
)

CALL_IDS = ("c0", "c1", "c2")
TOOLS = ("search", "read")
TEXT = st.text(alphabet="abcxyz \u00e9\ud800", max_size=6)
SETTINGS = settings(
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass
class Call:
    """One ``session.append(event_type, data, **options)``."""

    event_type: str
    data: Any
    options: dict[str, Any] = field(default_factory=dict)


def _unique(seqs: list[Any]) -> list[Any]:
    return list(dict.fromkeys(seqs))


@st.composite
def content(draw: st.DrawFn, *, images: bool = True) -> list[dict[str, Any]]:
    blocks = [m.text(draw(TEXT))]
    if images:
        for index in range(draw(st.integers(0, 2))):
            blocks.append(m.image(f"img{index}", "image/png", size=1, width=1, height=1))
    return draw(st.permutations(blocks))


@st.composite
def citations(draw: st.DrawFn, session: Session, shadowed: list[int]) -> Any:
    """Mostly right, often wrong: exact, extra, missing, absent, malformed or late citations."""
    how = draw(st.sampled_from(["exact", "exact", "extra", "missing", "none", "garbage", "late"]))
    earlier = list(range(session.seq))
    if how == "exact":
        return draw(st.permutations(shadowed)) if shadowed else None
    if how == "extra" and earlier:
        return _unique([*shadowed, *draw(st.lists(st.sampled_from(earlier), max_size=3))])
    if how == "missing":
        return shadowed[1:] or None
    if how == "garbage":
        return draw(st.sampled_from([[], [-1], "0", [0, 0], [0.5], [True], 5, {"seq": 0}]))
    if how == "late":
        return [*shadowed, session.seq + draw(st.integers(0, 2))]
    return None


@st.composite
def replace_range(draw: st.DrawFn, session: Session) -> tuple[Any, list[int]]:
    """A replace op over a current range (usually) and the nodes it would shadow."""
    nodes = list(session.surface.nodes)
    if nodes and draw(st.integers(0, 4)) > 0:
        i = draw(st.integers(0, len(nodes) - 1))
        j = draw(st.integers(i, len(nodes) - 1))
        if draw(st.integers(0, 9)) == 0:
            i, j = j, i
        op: Any = rep(nodes[i], nodes[j])
        shadowed = nodes[min(i, j) : max(i, j) + 1]
    else:
        start = draw(st.integers(0, session.seq + 1))
        end = draw(st.integers(0, session.seq + 1))
        op = rep(start, end)
        shadowed = [start] if start == end else [start, end]
    if draw(st.integers(0, 14)) == 0:
        op = draw(
            st.sampled_from(
                [
                    {"op": "replace", "start": op["startSeq"], "end": op["endSeq"]},
                    {**op, "extra": 1},
                    "invalid",
                    [op],
                ]
            )
        )
    return op, shadowed


def _tool_nodes(session: Session) -> list[int]:
    return [seq for seq in session.surface.nodes if session.event_at(seq).type == "tool/result"]


def _header_seqs(session: Session) -> list[int]:
    return [event.seq for event in session.events if event.type == "request/header"]


@st.composite
def user_call(draw: st.DrawFn, session: Session) -> Call:
    data = m.user(
        draw(content()),
        id=f"u{session.seq}",
        source={"kind": draw(st.sampled_from(["user", "runtime-context"]))},
    )
    options: dict[str, Any] = {"surface_op": "append"}
    if draw(st.integers(0, 4)) == 0:
        options["source_event_seqs"] = draw(citations(session, []))
    return Call("user/message", data, options)


@st.composite
def assistant_call(draw: st.DrawFn, session: Session) -> Call:
    blocks: list[dict[str, Any]] = []
    if draw(st.integers(0, 5)) > 0:
        blocks.append(m.text(draw(TEXT)))
        for call_id in draw(st.lists(st.sampled_from(CALL_IDS), max_size=2, unique=True)):
            blocks.append(m.tool_call(call_id, draw(st.sampled_from(TOOLS)), "{}"))
    data = m.assistant(blocks, provider="mock", model="mock", turn=1, step=1, id=f"a{session.seq}")
    options: dict[str, Any] = {"surface_op": "append"}
    if draw(st.integers(0, 9)) == 0:
        options["source_event_seqs"] = [0]
    return Call("assistant/message", data, options)


@st.composite
def tool_result_call(draw: st.DrawFn, session: Session) -> Call:
    call_id = draw(st.sampled_from(CALL_IDS))
    failed = draw(st.booleans())
    error = {"name": "ToolError", "code": "X"} if draw(st.booleans()) else None
    data = m.tool_result(
        call_id,
        draw(content()),
        turn=1,
        step=1,
        is_error=failed,
        error=error,
        meta=draw(st.sampled_from([None, {"tags": ["a"]}])),
        id=f"r{session.seq}",
    )
    return Call("tool/result", data, {"surface_op": "append"})


def _surface_data(event_type: str, seq: int, text: str) -> Any:
    if event_type == "user/message":
        return m.user(text, id=f"u{seq}")
    if event_type == "system/message":
        return m.system(text, turn=1, step=1, id=f"s{seq}")
    if event_type == "tool/result":
        return m.tool_result("c0", text, turn=1, step=1, id=f"r{seq}")
    return m.developer(turn=1, step=1, removals=["search"], id=f"d{seq}")


@st.composite
def system_call(draw: st.DrawFn, session: Session) -> Call:
    data = _surface_data("system/message", session.seq, draw(st.sampled_from(["", "be brief"])))
    nodes = session.surface.nodes
    if len(nodes) > 0 and draw(st.booleans()):
        return Call(
            "system/message",
            data,
            {"surface_op": rep(nodes[0], nodes[0]), "source_event_seqs": [nodes[0]]},
        )
    return Call("system/message", data, {"surface_op": "append"})


@st.composite
def replace_call(draw: st.DrawFn, session: Session) -> Call:
    event_type = draw(
        st.sampled_from(
            ["user/message", "user/message", "system/message", "tool/result", "developer/message"]
        )
    )
    op, shadowed = draw(replace_range(session))
    options: dict[str, Any] = {"surface_op": op}
    cites = draw(citations(session, shadowed))
    if cites is not None:
        options["source_event_seqs"] = cites
    return Call(event_type, _surface_data(event_type, session.seq, draw(TEXT)), options)


@st.composite
def rewrite_call(draw: st.DrawFn, session: Session) -> Call:
    """A content-only tool-result rewrite; sometimes it changes more than content."""
    targets = _tool_nodes(session)
    if not targets:
        return draw(tool_result_call(session))
    seq = draw(st.sampled_from(targets))
    data = thaw(session.event_at(seq).data)
    data["message"]["content"] = draw(content())
    tweak = draw(st.sampled_from([None, None, None, "isError", "turn", "meta", "id"]))
    if tweak == "isError":
        data["message"]["isError"] = not data["message"].get("isError", False)
        data.pop("error", None)
    elif tweak == "turn":
        data["turn"] = 2
    elif tweak == "meta":
        data["meta"] = {"tags": ["changed"]}
    elif tweak == "id":
        data["message"]["id"] = "other"
    options: dict[str, Any] = {"surface_op": rep(seq, seq)}
    cites = draw(citations(session, [seq]))
    if cites is not None:
        options["source_event_seqs"] = cites
    return Call("tool/result", data, options)


LOG_ONLY = [
    ("turn/start", {"turn": 1}),
    ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    ("step/start", {"turn": 1, "step": 1}),
    ("step/end", {"turn": 1, "step": 1}),
    ("request/context", {"provider": "mock", "model": "mock", "contextWindow": 1000}),
    ("request/context", {"provider": "mock", "model": "other"}),
    ("assistant/attempt", {"turn": 1, "step": 1, "stream": []}),
    ("assistant/attempt", {"turn": 1, "step": 1}),
    ("tool/call", {"turn": 1, "step": 1, "callId": "c0", "name": "search", "arguments": "{}"}),
    ("todo/write", {"todos": []}),
]


@st.composite
def log_only_call(draw: st.DrawFn, session: Session) -> Call:
    event_type, data = draw(st.sampled_from(LOG_ONLY))
    options: dict[str, Any] = {}
    stray = draw(st.integers(0, 9))
    if stray == 0:
        options["surface_op"] = "append"
    elif stray == 1:
        options["source_event_seqs"] = [0]
    return Call(event_type, data, options)


@st.composite
def header_call(draw: st.DrawFn, session: Session) -> Call:
    tools = [
        {"name": name, "description": f"{name} tool", "parameters": {"type": "object"}}
        for name in draw(st.lists(st.sampled_from(TOOLS), unique=True, max_size=2))
    ]
    header: dict[str, Any] = {
        "config": {"provider": "mock", "model": draw(st.sampled_from(["a", "b"]))}
    }
    if tools:
        header["tools"] = tools
    flaw = draw(st.sampled_from([None, None, None, "system", "empty-tools", "reason"]))
    reason = (
        "bad"
        if flaw == "reason"
        else draw(st.sampled_from(["initial", "resume", "change", "series"]))
    )
    if flaw == "system":
        header["system"] = ""
    elif flaw == "empty-tools":
        header["tools"] = []
    return Call("request/header", {"header": header, "reason": reason})


@st.composite
def developer_call(draw: st.DrawFn, session: Session) -> Call:
    headers = _header_seqs(session)
    header_seq = (
        draw(st.sampled_from(headers))
        if headers and draw(st.integers(0, 3)) > 0
        else draw(st.one_of(st.none(), st.integers(0, session.seq + 1)))
    )
    additions = draw(st.lists(st.sampled_from(TOOLS), unique=True, max_size=2))
    removals = draw(st.lists(st.sampled_from(TOOLS), unique=True, max_size=1))
    data = m.developer(
        turn=1,
        step=1,
        additions=additions,
        removals=removals,
        header_seq=header_seq,
        id=f"d{session.seq}",
    )
    return Call("developer/message", data, {"surface_op": "append"})


@st.composite
def undeclared_call(draw: st.DrawFn, session: Session) -> Call:
    options: dict[str, Any] = {"ignorable": draw(st.booleans())}
    if draw(st.booleans()):
        options["surface_op"] = {"opaque": True}
    return Call("plugin/random", {"n": draw(st.integers(0, 9))}, options)


@st.composite
def non_json_call(draw: st.DrawFn, session: Session) -> Call:
    bad = draw(
        st.sampled_from([float("nan"), float("inf"), -0.0, (1,), {1}, b"x", 2**60, object()])
    )
    if draw(st.booleans()):
        return Call(
            "user/message", {**m.user("x", id="bad"), "extra": bad}, {"surface_op": "append"}
        )
    return Call(
        "user/message", m.user("x", id="bad"), {"surface_op": "append", "source_event_seqs": [bad]}
    )


def _image_count(session: Session, seq: int) -> int:
    message = session.derive_event_message(session.event_at(seq))
    blocks = message["content"] if message is not None else []
    return sum(1 for block in blocks if isinstance(block, dict) and block.get("type") == "image")


@st.composite
def offload_call(draw: st.DrawFn, session: Session) -> Call:
    """Usually offloads real images of current nodes; sometimes aims anywhere."""
    nodes = list(session.surface.nodes)
    with_images = [
        seq
        for seq in nodes
        if session.event_at(seq).type in ("user/message", "tool/result")
        and _image_count(session, seq)
    ]
    if with_images and draw(st.integers(0, 3)) > 0:
        seq = draw(st.sampled_from(with_images))
        count = _image_count(session, seq)
        indexes = sorted(draw(st.sets(st.integers(0, count - 1), min_size=1)))
        return Call("image/offload", {"targets": [{"seq": seq, "imageIndexes": indexes}]})
    seqs = st.sampled_from(nodes) if nodes else st.integers(0, 3)
    targets = [
        {
            "seq": draw(seqs),
            "imageIndexes": draw(st.lists(st.integers(0, 2), min_size=1, max_size=2)),
        }
        for _ in range(draw(st.integers(1, 2)))
    ]
    return Call("image/offload", {"targets": targets})


KINDS = [
    user_call,
    user_call,
    assistant_call,
    tool_result_call,
    system_call,
    replace_call,
    replace_call,
    rewrite_call,
    rewrite_call,
    log_only_call,
    header_call,
    developer_call,
    undeclared_call,
    non_json_call,
    offload_call,
    offload_call,
]


@st.composite
def any_call(draw: st.DrawFn, session: Session) -> Call:
    return draw(draw(st.sampled_from(KINDS))(session))


# --- the properties ----------------------------------------------------------------------


def assert_matches_replay(session: Session) -> None:
    """(a) surface == fold; (b) derived history and request folds == a from-scratch replay."""
    fold = fold_surface(session.events, session.projections)
    assert session.surface.nodes == fold.nodes
    assert session.surface.replace_generation == fold.replace_generation
    assert session.surface.content_generation == fold.content_generation
    replay = Session.from_events("x", session.events, projections=session.projections, clock=clock)
    assert session.derive_messages() == replay.derive_messages()
    assert session.request_header() == replay.request_header()
    assert session.request_context() == replay.request_context()


class Driver:
    """Applies calls to a session, checking properties (a)–(c) after each one."""

    def __init__(self) -> None:
        self.session = new_session("p", projections=[IMAGE_OFFLOAD])
        self.observer, self.validator = Spy(), Spy()
        self.session.add_observer(self.observer)
        self.session.add_validator(self.validator)
        self.derived_at: dict[int, list[Any]] = {0: []}

    def apply(self, call: Call) -> None:
        session = self.session
        before = observe(session)
        heard = len(self.observer.events), len(self.validator.events)
        try:
            event = session.append(call.event_type, call.data, **call.options)
        except EventRejected:
            event_label(f"rejected {call.event_type}")
            assert_unchanged(session, before)
            assert (len(self.observer.events), len(self.validator.events)) == heard
        else:
            op = call.options.get("surface_op")
            replacing = isinstance(op, dict) and "startSeq" in op
            event_label(f"accepted {call.event_type}{' replace' if replacing else ''}")
            assert event.seq == before.seq
            assert session.seq == before.seq + 1
            assert session.events[-1] is event
            assert self.observer.events[heard[0] :] == [event]
            assert self.validator.events[heard[1] :] == [event]
        assert_matches_replay(session)
        self.derived_at[session.seq] = session.derive_messages()

    def check_end(self) -> None:
        session = self.session
        reopened = Session.from_events(
            "wire", thaw_events(session.events), projections=[IMAGE_OFFLOAD], clock=clock
        )
        assert reopened.derive_messages() == session.derive_messages()
        for length, derived in self.derived_at.items():
            prefix = Session.from_events(
                "prefix", session.events[:length], projections=[IMAGE_OFFLOAD], clock=clock
            )
            assert prefix.derive_messages() == derived


@SETTINGS
@given(st.data())
def test_random_append_sequences_keep_every_view_equal_to_a_replay(data: st.DataObject) -> None:
    driver = Driver()
    for _ in range(data.draw(st.integers(1, 30), label="steps")):
        driver.apply(data.draw(any_call(driver.session)))
    driver.check_end()


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_derive_after_bursts_of_appends_equals_a_replay(data: st.DataObject) -> None:
    """The derive cache catches up on several new nodes, replaces and projections at once."""
    session = new_session("burst", projections=[IMAGE_OFFLOAD])
    for _ in range(data.draw(st.integers(1, 30), label="steps")):
        call = data.draw(any_call(session))
        with contextlib.suppress(EventRejected):
            session.append(call.event_type, call.data, **call.options)
        if data.draw(st.integers(0, 4), label="derive now?") == 0:
            assert_matches_replay(session)
    assert_matches_replay(session)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_valid_message_sequences_ignore_interleaved_log_only_events(data: st.DataObject) -> None:
    """§15 scenario 38 as a property: log-only events never change the derived history."""
    plain, mixed = new_session("plain"), new_session("mixed")
    for _ in range(data.draw(st.integers(1, 12), label="messages")):
        call = data.draw(
            st.one_of(user_call(plain), assistant_call(plain), tool_result_call(plain))
        )
        if (
            call.event_type == "tool/result"
            and "error" in call.data
            and not call.data["message"].get("isError")
        ):
            continue
        call.options.pop("source_event_seqs", None)
        for _ in range(data.draw(st.integers(0, 3), label="log-only")):
            event_type, payload = data.draw(st.sampled_from(LOG_ONLY[:7] + LOG_ONLY[8:]))
            mixed.append(event_type, payload)
        plain.append(call.event_type, call.data, **call.options)
        mixed.append(call.event_type, call.data, **call.options)
        assert mixed.derive_messages() == plain.derive_messages()
