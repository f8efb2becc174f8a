"""The token meter: how full a session's next request is, as compaction measures it.

Implements spec/plugins.md §7. ``TokenMeter.measure(session)`` prices every surface node with
the heuristic estimator (``agentlog.plugins.tokens``) and sets a *baseline*:

* with an **anchor** — the latest ``assistant/message`` under the same request header — the
  provider's reported usage for that request (input + cache read + cache write + output) when
  it is at least the estimate of the same request, else that estimate; the surface grown
  since the anchored step began is added as the *delta*;
* without one, the estimate of the whole request (header plus surface);
* with no header and an empty surface, nothing.

``total_tokens = max(0, baseline + delta)`` is what compaction compares with its threshold.
The anchor's surface is priced as it was when that step started, so the step's own inputs
count both in the reported usage and in the delta: deliberately conservative, as dsh does.

The meter folds each session's log incrementally (it keeps a priced copy of the surface and
the anchor) and prices the current nodes with the session's derived messages, so projections
(``image/offload``) change prices as they change requests. The fold also holds the log to the
shadow-price protocol (§2.13): a metering event (``compaction/summary``, ``compaction/prune``)
arms a claim on its ``shadowedRange`` for the very next event; a replace whose range the armed
claim does not cover is refused (a replace with no claim, from logs before the protocol, is
accepted). Routes here have no image pricing
of their own: ``tokens`` (route price) equals ``heuristic_tokens`` for every node.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from agentlog.errors import TokenMeterError
from agentlog.events import SURFACE_EVENT_TYPES, event_message
from agentlog.plugins.tokens import estimate_header, estimate_message
from agentlog.session import Session, canonical_header, header_equals
from agentlog.surface import image_blocks
from agentlog.values import thaw

__all__ = ["METERING_EVENT_TYPES", "Measurement", "NodePrice", "TokenMeter"]

METERING_EVENT_TYPES: Final = frozenset({"compaction/summary", "compaction/prune"})
"""Log-only events that price the surface range the next event replaces (§2.13)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NodePrice:
    """The estimated tokens of one surface node."""

    seq: int
    tokens: int
    """Route price: what this node costs in the next request."""
    heuristic_tokens: int
    """Heuristic price: what shadow prices (``shadowedTokenCount``) are counted in."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Measurement:
    """One measurement of a session's next request (spec/plugins.md §7)."""

    log_revision: int
    """How many events the session held when measured."""
    baseline: Literal["none", "estimated", "usage"]
    baseline_tokens: int
    surface_delta_tokens: int
    total_tokens: int
    """``max(0, baseline + delta)``: compared with the compaction threshold."""
    surface_tokens: int
    nodes: tuple[NodePrice, ...]


@dataclass(slots=True)
class _Anchor:
    header: Any
    step_surface: int
    assistant_tokens: int
    usage: int | None


@dataclass(slots=True)
class _Fold:
    """The meter's incremental state for one session."""

    next_seq: int = 0
    header: Any = None
    nodes: list[int] = field(default_factory=list)
    prices: dict[int, int] = field(default_factory=dict)
    messages: dict[int, Any] = field(default_factory=dict)
    step_surface: int | None = None
    anchor: _Anchor | None = None
    current: dict[int, tuple[Any, int]] = field(default_factory=dict)
    claim: tuple[int, int] | None = None
    """The range the previous event, a metering event, priced for an adjacent replace."""


class TokenMeter:
    """Measures sessions; keeps one incremental fold per session (weakly)."""

    def __init__(self) -> None:
        self._folds: weakref.WeakKeyDictionary[Session, _Fold] = weakref.WeakKeyDictionary()

    def measure(self, session: Session, header: Mapping[str, Any] | None = None) -> Measurement:
        """Measure ``session``'s next request (under ``header``, else the one in force).

        Raises:
            TokenMeterError: for a log whose steps do not nest, or a surface the meter's fold
                does not reproduce.
        """
        fold = self._folds.get(session)
        if fold is None:
            fold = self._folds[session] = _Fold()
        self._advance(session, fold)
        nodes = session.surface.nodes
        if list(nodes) != fold.nodes:
            raise TokenMeterError(
                "compaction: token-meter surface does not match the current session surface"
            )
        priced = tuple(self._price(session, fold, seq) for seq in nodes)
        surface = sum(node.tokens for node in priced)
        current = canonical_header(header) if header is not None else fold.header
        header_tokens = estimate_header(current) if current is not None else 0
        anchor = fold.anchor
        kind: Literal["none", "estimated", "usage"]
        if anchor is not None and current is not None and header_equals(anchor.header, current):
            anchor_surface = anchor.step_surface + anchor.assistant_tokens
            estimated = header_tokens + anchor_surface
            if anchor.usage is not None and anchor.usage >= estimated:
                kind, baseline = "usage", anchor.usage
            else:
                kind, baseline = "estimated", estimated
            delta = surface - anchor_surface
        elif current is None and not priced:
            kind, baseline, delta = "none", 0, 0
        else:
            kind, baseline, delta = "estimated", header_tokens + surface, 0
        return Measurement(
            log_revision=fold.next_seq,
            baseline=kind,
            baseline_tokens=baseline,
            surface_delta_tokens=delta,
            total_tokens=max(0, baseline + delta),
            surface_tokens=surface,
            nodes=priced,
        )

    @staticmethod
    def _price(session: Session, fold: _Fold, seq: int) -> NodePrice:
        """A node's price now, recomputed only when its derived message is a new object."""
        message = session.derive_event_message(session.event_at(seq))
        cached = fold.current.get(seq)
        if cached is not None and cached[0] is message:
            tokens = cached[1]
        else:
            tokens = _message_price(session.event_at(seq).type, message)
            fold.current[seq] = (message, tokens)
        return NodePrice(seq=seq, tokens=tokens, heuristic_tokens=tokens)

    @staticmethod
    def _advance(session: Session, fold: _Fold) -> None:
        """Fold the events appended since the last measurement, one at a time.

        Each event is checked before it changes anything, and the fold moves past it only
        once it is applied: a log the meter cannot fold raises the same error every time.
        """
        events = session.events
        for seq in range(fold.next_seq, len(events)):
            _fold_event(fold, events[seq])
            fold.next_seq = seq + 1


def _fold_event(fold: _Fold, event: Any) -> None:
    """Apply one event to the fold, as of its place in the log (later projections aside)."""
    seq, event_type, data = event.seq, event.type, event.data
    if event_type == "step/start" and fold.step_surface is not None:
        raise TokenMeterError(
            f"token meter: step/start at seq {seq} arrived before turn/step ended"
        )
    if event_type in ("step/end", "assistant/message") and fold.step_surface is None:
        raise TokenMeterError(
            f"token meter: {event_type} at seq {seq} has no matching step/start event"
        )
    span = _replaced_span(fold, event) if event_type in SURFACE_EVENT_TYPES else None
    if event_type == "request/header":
        fold.header = canonical_header(data["header"])
    elif event_type == "step/start":
        fold.step_surface = sum(fold.prices[node] for node in fold.nodes)
    elif event_type == "step/end":
        fold.step_surface = None
    elif event_type == "image/offload":
        for target in data["targets"]:
            message = _offloaded(fold.messages[target["seq"]], target["imageIndexes"])
            fold.messages[target["seq"]] = message
            fold.prices[target["seq"]] = estimate_message(message)
    if event_type in SURFACE_EVENT_TYPES:
        message = event_message(event_type, data)
        fold.messages[seq] = message
        fold.prices[seq] = _message_price(event_type, message)
        if span is None:
            fold.nodes.append(seq)
        else:
            fold.nodes[span[0] : span[1] + 1] = [seq]
    if event_type == "assistant/message":
        fold.anchor = _Anchor(
            header=fold.header,
            step_surface=fold.step_surface,  # type: ignore[arg-type]  # checked above
            assistant_tokens=estimate_message(data["message"]),
            usage=_usage_total(data.get("usage")) if fold.header is not None else None,
        )
    fold.claim = _claim(data) if event_type in METERING_EVENT_TYPES else None


def _replaced_span(fold: _Fold, event: Any) -> tuple[int, int] | None:
    """Positions of the nodes a replace shadows (``None`` for an append), checked."""
    surface_op = event.surface_op
    if surface_op == "append":
        return None
    start, end = surface_op["startSeq"], surface_op["endSeq"]
    try:
        first, last = fold.nodes.index(start), fold.nodes.index(end)
    except ValueError:
        first = last = -1
    if first < 0 or last < first:
        raise TokenMeterError(
            f"token surface: replace at seq {event.seq} has invalid current range {start}-{end}"
        )
    if fold.claim is not None and fold.claim != (start, end):
        raise TokenMeterError(
            f"token surface: replace at seq {event.seq} over range {start}-{end} has no adjacent "
            f"shadow price (armed claim covers {fold.claim[0]}-{fold.claim[1]})"
        )
    return first, last


def _claim(data: Any) -> tuple[int, int] | None:
    """The ``shadowedRange`` a metering event prices, when it names one."""
    span = data.get("shadowedRange") if isinstance(data, Mapping) else None
    if not isinstance(span, Mapping):
        return None
    start, end = span.get("start"), span.get("end")
    return (start, end) if type(start) is int and type(end) is int else None


def _message_price(event_type: str, message: Any) -> int:
    """What a node costs: its message, or nothing when it derives none (an empty prompt)."""
    if message is None:
        return 0
    content = message.get("content") if isinstance(message, Mapping) else None
    if not content and event_type in ("system/message", "developer/message", "assistant/message"):
        return 0
    return estimate_message(message)


def _offloaded(message: Any, indexes: list[int]) -> Any:
    """``message`` with the images at ``indexes`` (depth-first) offloaded, like the projection."""
    copy = thaw(message)
    images = image_blocks(copy.get("content") if isinstance(copy, dict) else None)
    for index in indexes:
        images[index]["offloaded"] = True
    return copy


def _usage_total(usage: Any) -> int | None:
    """Input + cache read + cache write + output tokens of a reported usage, if any."""
    if not isinstance(usage, Mapping):
        return None
    keys = ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")
    return sum(value for key in keys if type(value := usage.get(key, 0)) is int)
