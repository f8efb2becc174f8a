"""The compaction invariant companion: brackets, owners and shadow prices checked at append.

Implements spec/plugins.md §2.3. ``CompactionTrace`` is the pure state machine (``check`` a
candidate, ``apply`` it once committed); ``install_compaction_invariants(session)`` replays the
log and then vetoes, before commit, any append that breaks a compaction bracket:

1. no ``turn/start``/``turn/end`` crosses an open bracket (unless the bracket is a *stale
   orphan*: a start a crash left unmatched before a later ``session/end-seed``, which clears it);
2. ``compaction/start`` has a non-empty id, opens no second bracket, and its owner is the open
   turn (a number) or no turn (``null``, a standalone manual compaction);
3. ``compaction/summary`` belongs to the open bracket, once, with a valid shadow price;
4. ``compaction/end`` closes the open bracket (same id and owner); a success needs a summary;
5. ``compaction/summary`` and ``compaction/prune`` shadow exactly a current surface span;
6. a checkpoint ``user/message`` (source kind ``compact-checkpoint``) names the open bracket.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentlog.errors import InvariantError
from agentlog.events import SURFACE_EVENT_TYPES
from agentlog.lifecycle import install_trace
from agentlog.session import Session
from agentlog.values import is_safe_integer, js_text

__all__ = ["CHECKPOINT_KIND", "CompactionTrace", "install_compaction_invariants"]

CHECKPOINT_KIND = "compact-checkpoint"
"""The source kind of a compaction's replacement message (format 4)."""


@dataclass(slots=True)
class _Bracket:
    compaction_id: str
    command_id: Any
    owner: Any  # the turn number, or None for a standalone compaction
    start_seq: int
    summarized: bool = False


def _owner(owner: Any) -> str:
    return "standalone compaction" if owner is None else f"compaction for turn {js_text(owner)}"


class CompactionTrace:
    """The compaction state of one log: open turn, open bracket, the surface nodes."""

    def __init__(self, stale_starts: frozenset[int] = frozenset()) -> None:
        self.open_turn: Any = None
        self.bracket: _Bracket | None = None
        self.nodes: list[int] = []
        self.stale_starts = stale_starts

    def check(self, event: Mapping[str, Any]) -> None:
        """Raise ``InvariantError`` if ``event`` breaks a compaction rule; change nothing."""
        event_type, data = event["type"], event["data"]
        bracket = self.bracket
        if event_type in ("turn/start", "turn/end"):
            if bracket is not None and bracket.start_seq not in self.stale_starts:
                what = (
                    "an open standalone compaction"
                    if bracket.owner is None
                    else f"an open compaction for turn {js_text(bracket.owner)}"
                )
                _fail(f"{event_type} cannot cross {what}", event)
        elif event_type == "compaction/start":
            self._check_start(event, data)
        elif event_type == "compaction/summary":
            current = self._matching(event, data)
            if current.summarized:
                _fail("compaction/summary repeated within one compaction", event)
            self._check_shadowed(event, data)
            count: Any = data.get("shadowedTokenCount") if isinstance(data, Mapping) else None
            if not (is_safe_integer(count) and count >= 0):
                _fail(
                    "compaction/summary shadowedTokenCount must be a non-negative safe integer",
                    event,
                )
        elif event_type == "compaction/end":
            current = self._matching(event, data)
            if data.get("turn") != current.owner:
                _fail(
                    f"compaction/end owner {js_text(data.get('turn'))} does not match "
                    f"compaction/start owner {js_text(current.owner)}",
                    event,
                )
            if "error" not in data and not current.summarized:
                _fail("successful compaction/end requires one compaction/summary", event)
        elif event_type == "compaction/prune":
            self._check_shadowed(event, data)
        elif event_type == "user/message" and _is_checkpoint(data):
            self._same_bracket("compaction checkpoint", event, data["source"])

    def apply(self, event: Mapping[str, Any]) -> None:
        """Advance past ``event`` (which ``check`` accepted)."""
        event_type, data = event["type"], event["data"]
        if event_type == "turn/start":
            self.open_turn = data.get("turn")
        elif event_type == "turn/end":
            self.open_turn = None
        elif event_type == "compaction/start":
            self.bracket = _Bracket(
                data.get("compactionId"),
                data.get("sourceCommandId"),
                data.get("turn"),
                event["seq"],
            )
        elif event_type == "compaction/summary" and self.bracket is not None:
            self.bracket.summarized = True
        elif event_type == "compaction/end" or event_type == "session/end-seed":
            self.bracket = None
        if event_type in SURFACE_EVENT_TYPES:
            op = event.get("surfaceOp")
            if op == "append":
                self.nodes.append(event["seq"])
            elif isinstance(op, Mapping):
                first = self.nodes.index(op["startSeq"])
                last = self.nodes.index(op["endSeq"])
                self.nodes[first : last + 1] = [event["seq"]]

    def _check_start(self, event: Mapping[str, Any], data: Any) -> None:
        compaction_id = data.get("compactionId")
        if type(compaction_id) is not str or not compaction_id:
            _fail("compaction/start compactionId must be a non-empty string", event)
        if "sourceCommandId" in data and (
            type(data["sourceCommandId"]) is not str or not data["sourceCommandId"]
        ):
            _fail("compaction/start sourceCommandId must be a non-empty string", event)
        if self.bracket is not None:
            owner = self.bracket.owner
            still = "standalone compaction" if owner is None else f"turn {js_text(owner)}"
            _fail(f"compaction/start while {still} is still compacting", event)
        self._check_owner("compaction/start", data.get("turn"), event)

    def _check_owner(self, subject: str, owner: Any, event: Mapping[str, Any]) -> None:
        open_turn = self.open_turn
        if owner is None:
            if open_turn is not None:
                _fail(f"{subject} is standalone but turn {js_text(open_turn)} is open", event)
        elif open_turn is None:
            _fail(f"{subject} for turn {js_text(owner)} appended outside any open turn", event)
        elif owner != open_turn:
            _fail(
                f"{subject} names turn {js_text(owner)} but open turn is {js_text(open_turn)}",
                event,
            )

    def _matching(self, event: Mapping[str, Any], data: Any) -> _Bracket:
        bracket = self._same_bracket(event["type"], event, data)
        if bracket.start_seq not in self.stale_starts:
            self._check_owner(event["type"], bracket.owner, event)
        return bracket

    def _same_bracket(self, subject: str, event: Mapping[str, Any], ids: Any) -> _Bracket:
        """The open bracket, which ``ids`` (``compactionId``, ``sourceCommandId``) must name."""
        bracket = self.bracket
        if bracket is None:
            _fail(f"{subject} has no matching compaction/start", event)
        assert bracket is not None
        if ids.get("compactionId") != bracket.compaction_id:
            _fail(
                f"{subject} id {js_text(ids.get('compactionId'))} does not match "
                f"compaction/start id {js_text(bracket.compaction_id)}",
                event,
            )
        if ids.get("sourceCommandId") != bracket.command_id:
            _fail(f"{subject} sourceCommandId does not match compaction/start", event)
        return bracket

    def _check_shadowed(self, event: Mapping[str, Any], data: Any) -> None:
        event_type = event["type"]
        seqs = data.get("shadowedSeqs")
        span = data.get("shadowedRange")
        if not isinstance(seqs, list) or not seqs:
            _fail(f"{event_type} shadowedSeqs must not be empty", event)
        if not (
            isinstance(span, Mapping)
            and span.get("start") == seqs[0]
            and span.get("end") == seqs[-1]
        ):
            _fail(f"{event_type} shadowedRange must match the first and last shadowedSeqs", event)
        assert isinstance(seqs, list)
        try:
            first, last = self.nodes.index(seqs[0]), self.nodes.index(seqs[-1])
        except ValueError:
            first = last = -1
        if first < 0 or last < first:
            _fail(f"{event_type} shadowed seqs must name an earlier current surface span", event)
        if self.nodes[first : last + 1] != seqs:
            _fail(
                f"{event_type} shadowedSeqs must list every node in the current surface span", event
            )


def _is_checkpoint(data: Any) -> bool:
    source = data.get("source") if isinstance(data, Mapping) else None
    return isinstance(source, Mapping) and source.get("kind") == CHECKPOINT_KIND


def _fail(message: str, event: Mapping[str, Any]) -> None:
    raise InvariantError(message, event_type=event.get("type"), seq=event.get("seq"))


def _stale_starts(events: Any) -> frozenset[int]:
    """Starts left unmatched when a later ``session/end-seed`` shows the writer was gone."""
    stale, open_start = set(), None
    for event in events:
        event_type = event["type"]
        if event_type == "compaction/start":
            open_start = event["seq"]
        elif event_type == "compaction/end":
            open_start = None
        elif event_type == "session/end-seed" and open_start is not None:
            stale.add(open_start)
            open_start = None
    return frozenset(stale)


def install_compaction_invariants(session: Session) -> Callable[[], None]:
    """Check ``session``'s compactions now and at every future append (spec/plugins.md §2.3).

    Returns:
        A function that uninstalls the companion.

    Raises:
        InvariantError: when the existing log already breaks a rule.
    """
    return install_trace(session, CompactionTrace(_stale_starts(session.events)))
