"""Format 1 → 2: ``assistant/chunk`` events fold into stream records; seqs are renumbered.

Implements ``session-format-v1-to-v2`` (spec/persistence.md §5.4). Chunks are grouped into
attempts per (turn, step). A group closes at a ``finish`` chunk, ``step/end``, ``turn/end``,
``llm/retry(-started)`` or the end of the log, unless an ``assistant/message`` claims it first
by citing exactly its chunk seqs in ``sourceEventSeqs``. A claimed group becomes the message's
``stream`` (spec/core.md §2.5) and the message loses ``sourceEventSeqs`` (``[]`` claims no
chunks); an unclaimed group becomes a log-only ``assistant/attempt {turn, step, stream}`` where
its last chunk was. Every other assistant message gets ``stream: []``.

A message that cites nothing (no ``sourceEventSeqs`` at all) claims the one unclaimed group of
its own turn and step, if there is exactly one. dsh refuses such a log; agentlog reads it,
because some format-0 writers never cited their chunks and either reading keeps every chunk.

The header's ``seedLength`` becomes ``isSeeded``, and the inherited cut is marked by a
``session/end-seed {inherited: true}`` (the marker at the cut is tagged, or one is inserted;
a recorded cut beyond the log marks the whole log as inherited). Events are renumbered densely
and every reference is remapped (``references``); naming a folded chunk, or a cut inside an
attempt, is a refusal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from agentlog.errors import NotLosslessJson, StreamRecordError
from agentlog.events.stream import record_stream
from agentlog.formats.artifact import Artifact, Refusal
from agentlog.formats.references import Renumbering
from agentlog.formats.vocabulary import refuse_unknown_types
from agentlog.values import is_seq

__all__ = ["NAME", "migrate"]

NAME: Final = "session-format-v1-to-v2"

_CLOSERS: Final = frozenset({"step/end", "turn/end", "llm/retry", "llm/retry-started"})
_FOLDED: Final = "was an assistant/chunk, now folded into a stream record"


@dataclass(slots=True)
class _Group:
    """The chunks of one model attempt, by index into the log."""

    turn: Any
    step: Any
    indices: list[int] = field(default_factory=list)


@dataclass(slots=True)
class _Plan:
    """What becomes of the chunks: streams of claiming messages, and attempts."""

    claims: dict[int, _Group] = field(default_factory=dict)
    """Message index → the group it claims."""
    attempts: dict[int, _Group] = field(default_factory=dict)
    """Index of a group's last chunk → the unclaimed group, emitted there as an attempt."""


def migrate(artifact: Artifact) -> Artifact:
    """Fold the chunks of a format-1 artifact and renumber it as format 2.

    Raises:
        Refusal: for an unclaimable citation, a reference to a folded chunk, a cut inside an
            attempt, a malformed chunk, or an undeclared required type.
    """
    session_id = artifact.session_id
    events = artifact.events
    refuse_unknown_types(events, 1, session_id)
    header = {key: value for key, value in artifact.header.items() if key != "seedLength"}
    header["version"] = 2
    header["isSeeded"] = "seedLength" in artifact.header
    cut = _cut(artifact.header.get("seedLength"), len(events))
    plan = _plan(events, session_id)
    _check_cut(cut, plan, events, session_id)
    renumbering = Renumbering(session_id)
    out: list[Mapping[str, Any]] = []
    for index, event in enumerate(events):
        if index == cut:
            if event.get("type") == "session/end-seed":
                renumbering.keep(index, len(out))
                tagged = {**event, "data": {"inherited": True}}
                out.append(renumbering.event(tagged, len(out)))
                continue
            renumbering.inserted(len(out))
            out.append(_marker(len(out), _time_before(events, index, artifact.header)))
        if event.get("type") == "assistant/chunk":
            renumbering.drop(index, _FOLDED)
            group = plan.attempts.get(index)
            if group is not None:
                renumbering.inserted(len(out))
                out.append(_attempt(group, events, len(out), session_id))
            continue
        if event.get("type") == "assistant/message":
            event = _with_stream(event, plan.claims.get(index), events, session_id)
        renumbering.keep(index, len(out))
        out.append(renumbering.event(event, len(out)))
    if cut == len(events):
        out.append(_marker(len(out), _time_before(events, cut, artifact.header)))
    return Artifact(header=header, events=out)


def _cut(seed_length: object, count: int) -> int | None:
    """Where the inherited marker goes: at ``seedLength``, or the end when it lies beyond."""
    if type(seed_length) is not int or seed_length < 0:
        return None
    return min(seed_length, count)


def _marker(seq: int, time: int) -> dict[str, Any]:
    return {"type": "session/end-seed", "seq": seq, "time": time, "data": {"inherited": True}}


def _time_before(events: Sequence[Mapping[str, Any]], index: int, header: Mapping[str, Any]) -> int:
    """The time of the event before ``index`` (or the header's ``createdAt``)."""
    if index > 0 and type(events[index - 1].get("time")) is int:
        time: int = events[index - 1]["time"]
        return time
    created = header.get("createdAt")
    return created if type(created) is int else 0


def _chunk_key(event: Mapping[str, Any], session_id: str) -> tuple[Any, Any]:
    data = event.get("data")
    if not (isinstance(data, Mapping) and isinstance(data.get("chunk"), Mapping)):
        raise Refusal(
            f'session "{session_id}" has a malformed assistant/chunk at seq {event.get("seq")}'
        )
    return data.get("turn"), data.get("step")


def _plan(events: Sequence[Mapping[str, Any]], session_id: str) -> _Plan:
    """Group the chunks and decide, for each group, which message claims it (if any)."""
    plan = _Plan()
    open_groups: dict[tuple[Any, Any], _Group] = {}
    finished: list[_Group] = []  # closed by their finish chunk, still claimable

    def unclaimed() -> list[_Group]:
        return [*finished, *open_groups.values()]

    def close_all() -> None:
        for group in unclaimed():
            plan.attempts[group.indices[-1]] = group
        open_groups.clear()
        finished.clear()

    for index, event in enumerate(events):
        event_type = event.get("type")
        if event_type == "assistant/chunk":
            key = _chunk_key(event, session_id)
            group = open_groups.setdefault(key, _Group(turn=key[0], step=key[1]))
            group.indices.append(index)
            if event["data"]["chunk"].get("type") == "finish":
                finished.append(open_groups.pop(key))
        elif event_type == "assistant/message":
            sources = event.get("sourceEventSeqs", _ABSENT)
            group = None
            if sources is _ABSENT:
                # Some format-0 writers did not cite: the one attempt of the message's own
                # step is its stream (dsh refuses such logs; nothing is lost either way).
                data = event.get("data")
                turn_step = (
                    (data.get("turn"), data.get("step")) if isinstance(data, Mapping) else None
                )
                mine = [g for g in unclaimed() if (g.turn, g.step) == turn_step]
                group = mine[0] if len(mine) == 1 else None
            elif isinstance(sources, list) and sources:
                problem = _citation_problem(sources, event.get("seq"))
                if problem is not None:
                    raise Refusal(
                        f'session "{session_id}" assistant/message at seq {event.get("seq")}: '
                        f"{problem}"
                    )
                group = _claimed(sources, unclaimed(), events)
                if group is None:
                    raise Refusal(
                        f'session "{session_id}" assistant/message at seq {event.get("seq")} '
                        "cites seqs that are not exactly the chunks of one attempt"
                    )
            if group is not None:
                plan.claims[index] = group
                if group in finished:
                    finished.remove(group)
                else:
                    open_groups.pop((group.turn, group.step))
        elif event_type in _CLOSERS:
            close_all()
    close_all()
    return plan


_ABSENT: Final[Any] = object()


def _citation_problem(sources: list[Any], seq: Any) -> str | None:
    """Format 0's citation rules, in its order: element types, duplicates, earliness."""
    if not all(is_seq(source) for source in sources):
        return "sourceEventSeqs must densely contain non-negative safe integers"
    if len(set(sources)) != len(sources):
        return "sourceEventSeqs must not contain duplicates"
    later = next((source for source in sources if source >= seq), None)
    if later is not None:
        return f"sourceEventSeqs must reference earlier events: {later} >= current seq {seq}"
    return None


def _claimed(
    sources: list[Any], groups: list[_Group], events: Sequence[Mapping[str, Any]]
) -> _Group | None:
    if not all(type(seq) is int for seq in sources):
        return None
    cited = sorted(sources)
    if len(set(cited)) != len(cited):
        return None
    for group in groups:
        if [events[i]["seq"] for i in group.indices] == cited:
            return group
    return None


def _check_cut(cut: int | None, plan: _Plan, events: Sequence[Any], session_id: str) -> None:
    """A cut must not fall between the chunks of one attempt and its end."""
    if cut is None:
        return
    spans = [(group.indices[0], claim) for claim, group in plan.claims.items()]
    spans += [(group.indices[0], last) for last, group in plan.attempts.items()]
    for first, last in spans:
        if first < cut <= last:
            raise Refusal(
                f'session "{session_id}" seed cut at seq {cut} splits the model attempt that '
                f"starts at seq {events[first].get('seq')}"
            )


def _stream(group: _Group | None, events: Sequence[Mapping[str, Any]], session_id: str) -> Any:
    if group is None:
        return []
    chunks = [(events[i].get("time"), events[i]["data"]["chunk"]) for i in group.indices]
    try:
        return record_stream(chunks)  # type: ignore[arg-type]  # checked by record_stream
    except (TypeError, NotLosslessJson, StreamRecordError) as exc:
        raise Refusal(
            f'session "{session_id}" has a malformed assistant/chunk at or after seq '
            f"{events[group.indices[0]].get('seq')}: {exc}"
        ) from None


def _with_stream(
    event: Mapping[str, Any],
    group: _Group | None,
    events: Sequence[Mapping[str, Any]],
    session_id: str,
) -> Mapping[str, Any]:
    data = event.get("data")
    if not isinstance(data, Mapping):
        return event
    moved = {key: value for key, value in event.items() if key != "sourceEventSeqs"}
    moved["data"] = {**data, "stream": _stream(group, events, session_id)}
    return moved


def _attempt(
    group: _Group, events: Sequence[Mapping[str, Any]], seq: int, session_id: str
) -> dict[str, Any]:
    last = events[group.indices[-1]]
    return {
        "type": "assistant/attempt",
        "seq": seq,
        "time": last.get("time"),
        "data": {
            "turn": group.turn,
            "step": group.step,
            "stream": _stream(group, events, session_id),
        },
    }
