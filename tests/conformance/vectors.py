"""Loading and replaying the recorded reference vectors (see ``data/README.md``).

The recordings come from the TypeScript reference. This module turns their inputs into calls on
agentlog's API, captures agentlog's results in the recorded shape, and compares the two with
the conventions of the README: JS tags (``{"$js": ...}``) decoded, numbers compared as IEEE
doubles, booleans never equal to numbers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import zstandard

import agentlog
from agentlog import (
    IMAGE_OFFLOAD,
    EventRejected,
    Session,
    fold_surface,
    open_turn_closers,
    thaw,
)
from agentlog.surface import derive_event_message
from agentlog.values import json_equal

DATA = Path(__file__).parent / "data"
CLOCK_MS = 1_700_000_000_000
"""The reference's ``Date.now()`` during recording."""


FIELDS_NOT_COMPARED = frozenset(
    json.loads((Path(__file__).parent / "deviations.json").read_text())["fields_not_compared"]
)


def clock() -> int:
    return CLOCK_MS


@cache
def load_vectors(name: str) -> tuple[dict[str, Any], ...]:
    """Every record of ``data/<name>-vectors.jsonl.zst``, in file order."""
    raw = zstandard.ZstdDecompressor().decompress((DATA / f"{name}-vectors.jsonl.zst").read_bytes())
    return tuple(json.loads(line) for line in raw.splitlines() if line.strip())


# --- JS tags ---------------------------------------------------------------------------------


class JsValue:
    """A JS value with no JSON (and no Python JSON) form: undefined, BigInt, a sparse array.

    agentlog must refuse these exactly where the reference refused the JS originals, so they
    are fed to it as objects outside the lossless domain.
    """

    def __init__(self, kind: str, detail: Any = None) -> None:
        self.kind = kind
        self.detail = detail

    def __repr__(self) -> str:
        return f"JsValue({self.kind}, {self.detail!r})"


def decode(value: Any) -> Any:
    """Decode the README's ``$js`` tags into Python values."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if value and next(iter(value)) == "$js":
        tag = value["$js"]
        if tag == "NaN":
            return float("nan")
        if tag == "Infinity":
            return float("inf")
        if tag == "-Infinity":
            return float("-inf")
        if tag == "-0":
            return -0.0
        if tag == "undefined":
            return JsValue("undefined")
        if tag == "bigint":
            return JsValue("bigint", value["value"])
        if tag == "sparse":
            # A JS array with holes: reading a hole gives undefined.
            items = value["items"]
            return [
                decode(items[str(i)]) if str(i) in items else JsValue("undefined")
                for i in range(value["length"])
            ]
        if tag == "literal":
            return value["value"]
        raise ValueError(f"unknown $js tag {tag!r}")
    return {key: decode(item) for key, item in value.items()}


def has_big_integer(value: Any) -> bool:
    """Whether the input holds an integer the recorder's JSON.parse rounded (|n| > 2**53 - 1)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) > agentlog.values.MAX_SAFE_INTEGER
    if isinstance(value, list):
        return any(has_big_integer(item) for item in value)
    if isinstance(value, dict):
        return any(has_big_integer(item) for item in value.values())
    return False


def encode_tags(value: Any) -> Any:
    """Tag non-JSON doubles the way the recorder's outputs do (``{"$js": "NaN"}``, ...).

    Outputs are compared in this encoded form: a recorded ``{"$js": "NaN"}`` may be a real NaN
    or a literal object that merely looks like the tag, and both encode the same.
    """
    if isinstance(value, float):
        if value != value:
            return {"$js": "NaN"}
        if value - value != 0.0:
            return {"$js": "Infinity" if value > 0 else "-Infinity"}
        if value == 0.0 and str(value).startswith("-"):
            return {"$js": "-0"}
        return value
    if isinstance(value, list):
        return [encode_tags(item) for item in value]
    if isinstance(value, dict):
        return {key: encode_tags(item) for key, item in value.items()}
    return value


# --- calling agentlog the way the recorder called the reference ------------------------------


def projections_of(names: list[str] | None) -> tuple[agentlog.MessageProjection, ...]:
    registry = {"image/offload": IMAGE_OFFLOAD}
    return tuple(registry[name] for name in names or ())


@dataclass
class AppendCall:
    """One recorded append, mapped onto ``Session.append`` keywords."""

    event_type: Any
    data: Any
    kwargs: dict[str, Any]
    absent_means_null: bool
    """The recording passed an explicit ``null``/``undefined`` that Python's ``None`` (absent)
    cannot express (rule P1 of ``deviations.json``)."""


def append_call(spec: dict[str, Any]) -> AppendCall:
    kwargs: dict[str, Any] = {}
    nullish = False
    if "opts" in spec:
        opts = decode(spec["opts"])
        if not isinstance(opts, dict):
            nullish = True
            opts = {}
        for wire, keyword in (
            ("surfaceOp", "surface_op"),
            ("sourceEventSeqs", "source_event_seqs"),
        ):
            if wire in opts:
                value = opts[wire]
                if value is None or (isinstance(value, JsValue) and value.kind == "undefined"):
                    nullish = nullish or value is None
                    continue
                kwargs[keyword] = value
    return AppendCall(decode(spec["type"]), decode(spec["data"]), kwargs, nullish)


@dataclass
class StepOutcome:
    ok: bool
    error: str | None = None
    event_seq: int | None = None
    exception: BaseException | None = None


def run_append(session: Session, call: AppendCall) -> StepOutcome:
    try:
        event = session.append(call.event_type, call.data, **call.kwargs)
    except agentlog.AgentlogError as exc:
        return StepOutcome(ok=False, error=exc.spec_text, exception=exc)
    return StepOutcome(ok=True, event_seq=event.seq)


def step_view(session: Session) -> dict[str, Any]:
    """The per-step fields the recorder captured after every append."""
    return {
        "seq": session.seq,
        "nodes": list(session.surface.nodes),
        "replaceGeneration": session.surface.replace_generation,
        "contentGeneration": session.surface.content_generation,
        "derivedIds": [m.get("id") for m in session.derive_messages()],
    }


def fold_view(events: Any, projections: tuple[agentlog.MessageProjection, ...]) -> dict[str, Any]:
    try:
        fold = fold_surface(events, projections)
    except EventRejected as exc:
        return {"error": exc.spec_text}
    return {
        "nodes": list(fold.nodes),
        "replacements": [r.to_wire() for r in fold.replacements],
        "projectedMessages": [[seq, thaw(m)] for seq, m in fold.projected_messages],
    }


def state_view(session: Session) -> dict[str, Any]:
    """agentlog's side of a recorded ``State`` (see ``fields_not_compared`` in deviations.json)."""
    events = [event.to_wire() for event in session.events]
    projections = session.projections
    derived = session.derive_messages()
    fold = fold_surface(session.events, projections)
    projected = dict(fold.projected_messages)
    fresh = [
        m
        for m in (derive_event_message(session.event_at(seq), projected) for seq in fold.nodes)
        if m is not None
    ]
    return {
        "header": thaw(session.header),
        "seq": session.seq,
        "firstLiveSeq": session.first_live_seq,
        "firstLifecycleSeq": session.first_lifecycle_seq,
        "inheritedEventCount": session.inherited_event_count,
        "events": events,
        "nodes": list(session.surface.nodes),
        "replaceGeneration": session.surface.replace_generation,
        "contentGeneration": session.surface.content_generation,
        "derivedMessages": thaw(derived),
        "derivedCacheConsistent": derived == fresh,
        "fold": fold_view(session.events, projections),
        "requestHeader": thaw(session.request_header()),
        "requestContext": thaw(session.request_context()),
        "interruptedTurnClosers": open_turn_closers(session.events, "interrupted"),
        "forkedTurnClosers": open_turn_closers(session.events, "forked"),
    }


@dataclass
class Comparison:
    """Differences found while replaying one case, and the deviation rules applied to it."""

    case: str
    differences: list[str] = field(default_factory=list)
    rules: set[str] = field(default_factory=set)

    def check(self, where: str, actual: Any, expected: Any) -> None:
        """Compare agentlog's value, tagged like the recorder's outputs, with a raw recording."""
        actual = encode_tags(actual)
        expected = _error_messages(expected)
        if not json_equal(actual, expected):
            self.differences.append(
                f"{where}: agentlog {json.dumps(actual, default=repr)[:600]}\n"
                f"    reference {json.dumps(expected, default=repr)[:600]}"
            )

    def check_state(self, where: str, session: Session, expected: dict[str, Any]) -> None:
        actual = state_view(session)
        for key, value in expected.items():
            if key in FIELDS_NOT_COMPARED:
                continue
            if key == "derivedMessages" and isinstance(value, dict) and "error" in value:
                self.differences.append(f"{where}.derivedMessages: reference threw {value}")
                continue
            self.check(f"{where}.{key}", actual[key], value)

    def fail(self, message: str) -> None:
        self.differences.append(message)


def _error_messages(value: Any) -> Any:
    """``{"error": {"name", "message", ...}}`` -> ``{"error": message}``: only texts compare."""
    if isinstance(value, dict) and isinstance(value.get("error"), dict) and len(value) == 1:
        return {"error": value["error"].get("message")}
    return value


def iter_cases(name: str, mode: str) -> Iterator[dict[str, Any]]:
    for record in load_vectors(name):
        if record["input"]["mode"] == mode:
            yield record
