"""The incremental surface: plan an event's transition, then apply it.

Implements spec/core.md §5.4 (``planSurfaceEvent``, in its exact order), §5.5 (tool-result
rewrite guard), §5.6 (system-head guard), §9.3 (developer header binding) and the state of §5.8
(``SurfaceManager``): nodes, ``replace_generation``, ``content_generation`` and projected
messages. ``plan()`` validates without changing anything, so a rejected event leaves the
surface untouched; ``apply()`` commits a plan in O(1) for an append and O(|surface|) for a
replace.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final

from agentlog.errors import EventRejected
from agentlog.events import PROJECTION_TYPES, SURFACE_EVENT_TYPES, Event
from agentlog.surface.markers import APPEND, check_markers
from agentlog.surface.projections import MessageProjection, ProjectionContext, ProjectionError
from agentlog.values import JsonValue, is_seq, json_equal

__all__ = ["Plan", "SurfaceState"]

Lookup = Callable[[int], Mapping[str, Any] | None]

_REPLACE: Final = "replace"
_PROJECT: Final = "project"

Plan = tuple[Any, ...] | None
"""A planned transition: ``None`` (log-only), ``("append",)``, ``("replace", i, j, shadowed)``
or ``("project", messages)``."""

_APPEND_PLAN: Final = (APPEND,)


def _reject(message: str, event: Mapping[str, Any]) -> EventRejected:
    return EventRejected(message, event_type=event.get("type"), seq=event.get("seq"))


class SurfaceState:
    """The live surface of one log (or of a window of it starting at ``base_seq``).

    Args:
        lookup: Returns the event at a seq already folded, ``None`` outside the window.
        projections: Message projections by event type.
        base_seq: Seq of the first event of the folded window.
    """

    __slots__ = (
        "_lookup",
        "_projections",
        "content_generation",
        "expected_seq",
        "nodes",
        "projected",
        "replace_generation",
    )

    def __init__(
        self,
        lookup: Lookup,
        projections: Mapping[str, MessageProjection],
        base_seq: int = 0,
    ) -> None:
        self._lookup = lookup
        self._projections = projections
        self.nodes: list[int] = []
        self.replace_generation = 0
        self.content_generation = 0
        self.projected: dict[int, JsonValue] = {}
        self.expected_seq = base_seq

    def plan(self, event: Mapping[str, Any]) -> Plan:
        """Validate ``event`` as the next event and return its transition (§5.4 order).

        Raises:
            EventRejected: with the exact catalogue text; the state is unchanged.
        """
        seq = event["seq"]
        if seq != self.expected_seq:
            raise _reject(
                f"session event seq {seq} is not contiguous; expected {self.expected_seq}", event
            )
        event_type = event["type"]
        if "sourceEventSeqs" not in event:
            # The two outcomes of every ordinary append, decided in line (``check_markers``
            # and the steps below reach the same ones): a log-only event without markers that
            # no projection claims, and an ``append`` of a surface type with no header binding.
            if "surfaceOp" not in event:
                if (
                    event_type not in SURFACE_EVENT_TYPES
                    and event_type not in self._projections
                    and event_type not in PROJECTION_TYPES
                ):
                    return None
            elif (
                event["surfaceOp"] == APPEND
                and event_type in SURFACE_EVENT_TYPES
                and event_type != "developer/message"
            ):
                return _APPEND_PLAN
        op = check_markers(event)
        if op is not None:
            # A surface type: never a projection, so steps 3 and 5-6 of §5.4 remain.
            if event_type == "developer/message":
                self._check_header_binding(event)
            if op is APPEND:
                return _APPEND_PLAN
            assert not isinstance(op, str)
            return self._plan_replace(event, *op)
        projection = self._projections.get(event_type)
        if projection is not None:
            return (_PROJECT, self._project(projection, event))
        if event_type in PROJECTION_TYPES:
            raise _reject(
                f'session event "{event_type}" requires a message projection; load its owning '
                "plugin or supply its projection definition",
                event,
            )
        return None

    def apply(self, plan: Plan) -> None:
        """Commit a plan returned by ``plan()`` for the next event."""
        self.expected_seq += 1
        if plan is None:
            return
        kind = plan[0]
        if kind == APPEND:
            self.nodes.append(self.expected_seq - 1)
        elif kind == _REPLACE:
            _, i, j, _shadowed = plan
            self.nodes[i : j + 1] = [self.expected_seq - 1]
            self.replace_generation += 1
            self.content_generation += 1
        else:
            self.projected.update(plan[1])
            self.content_generation += 1

    def advance_plain(
        self,
        events: Sequence[Any],
        start: int,
        log: list[Any],
        stop_types: Collection[str] = (),
    ) -> int:
        """Fold ``events[start:]`` into the surface and ``log`` while each is a plain ``Event``.

        A replay's loop over a whole log, for the events ``advance`` decides inline (a log-only
        event without markers; an ``append`` of a surface type other than
        ``developer/message`` without ``sourceEventSeqs``), each of which must be the
        ``Event`` at its own seq (``events[i]`` has seq ``i``). Returns the index of the first
        event it left (or ``len(events)``) for the caller's full checks; types in
        ``stop_types`` are always left.
        """
        nodes_append, log_append = self.nodes.append, log.append
        projections, seq = self._projections, self.expected_seq
        index = start
        for index in range(start, len(events)):  # the stop is returned
            event = events[index]
            if type(event) is not Event or event["seq"] != seq or "sourceEventSeqs" in event:
                break
            event_type = event["type"]
            if event_type in stop_types:
                break
            if "surfaceOp" not in event:
                if (
                    event_type in SURFACE_EVENT_TYPES
                    or event_type in projections
                    or event_type in PROJECTION_TYPES
                ):
                    break
            elif (
                event["surfaceOp"] == APPEND
                and event_type in SURFACE_EVENT_TYPES
                and event_type != "developer/message"
            ):
                nodes_append(seq)
            else:
                break
            log_append(event)
            seq += 1
        else:
            index = len(events)
        self.expected_seq = seq
        return index

    def advance(self, event: Mapping[str, Any]) -> Plan:
        """Plan and apply ``event`` in one go (replay); returns the applied plan.

        The two transitions of almost every event of a log are decided inline, by the same
        rules ``plan()`` applies to them: a log-only event without markers, and an ``append``
        of a surface type other than ``developer/message`` (whose header binding ``plan()``
        checks) without ``sourceEventSeqs``. Everything else takes ``plan()``.
        """
        seq = event["seq"]
        if seq == self.expected_seq and "sourceEventSeqs" not in event:
            event_type = event["type"]
            if "surfaceOp" not in event:
                if (
                    event_type not in SURFACE_EVENT_TYPES
                    and event_type not in self._projections
                    and event_type not in PROJECTION_TYPES
                ):
                    self.expected_seq += 1
                    return None
            elif (
                event["surfaceOp"] == APPEND
                and event_type in SURFACE_EVENT_TYPES
                and event_type != "developer/message"
            ):
                self.nodes.append(self.expected_seq)
                self.expected_seq += 1
                return _APPEND_PLAN
        plan = self.plan(event)
        self.apply(plan)
        return plan

    # --- replace ------------------------------------------------------------------------

    def _plan_replace(self, event: Mapping[str, Any], start: int, end: int) -> Plan:
        """Locate the range by surface position, then coverage and the two guards (§5.4 step 6)."""
        nodes = self.nodes
        try:
            i = nodes.index(start)
        except ValueError:
            raise _reject(
                f"surface replace: start seq {start} not found in surface", event
            ) from None
        try:
            j = nodes.index(end)
        except ValueError:
            raise _reject(f"surface replace: end seq {end} not found in surface", event) from None
        if i > j:
            raise _reject(
                f"surface replace: start seq {start} (index {i}) is after end seq {end} "
                f"(index {j})",
                event,
            )
        shadowed = nodes[i : j + 1]
        cited = event.get("sourceEventSeqs")
        cited_set = set(cited) if isinstance(cited, list) else set()
        missing = [seq for seq in shadowed if seq not in cited_set]
        if missing:
            raise _reject(
                "surface replace: sourceEventSeqs must include every shadowed surface node; "
                f"missing {', '.join(map(str, missing))}",
                event,
            )
        if event["type"] == "tool/result":
            self._check_tool_result_rewrite(event, shadowed)
        if i == 0:
            head = self._lookup(nodes[0])
            if (
                head is not None
                and head["type"] == "system/message"
                and (event["type"] != "system/message" or len(shadowed) != 1)
            ):
                raise _reject(
                    "surface replace: node 0 holds the system prompt and may be rewritten only "
                    "by a system/message over exactly that node",
                    event,
                )
        return (_REPLACE, i, j, shadowed)

    def _check_tool_result_rewrite(self, event: Mapping[str, Any], shadowed: list[int]) -> None:
        """§5.5 [F4]: one current ``tool/result``, only ``message.content`` may differ."""
        if len(shadowed) != 1:
            raise _reject(
                "tool/result surface replacement must rewrite exactly one current node", event
            )
        original = self._lookup(shadowed[0])
        if original is None or original["type"] != "tool/result":
            raise _reject(
                "tool/result surface replacement must target a current tool/result", event
            )
        if not json_equal(_without_content(original["data"]), _without_content(event["data"])):
            raise _reject("tool/result surface replacement may change only content", event)

    # --- developer header binding and projections --------------------------------------

    def _check_header_binding(self, event: Mapping[str, Any]) -> None:
        """§9.3: ``headerSeq`` names an earlier ``request/header`` defining every added tool."""
        data = event["data"]
        if not isinstance(data, dict) or "headerSeq" not in data:
            return
        header_seq = data["headerSeq"]
        header_event = (
            self._lookup(int(header_seq))
            if is_seq(header_seq) and header_seq < event["seq"]
            else None
        )
        if header_event is None or header_event["type"] != "request/header":
            raise _reject(
                "developer/message headerSeq must reference an earlier request/header", event
            )
        header = (
            header_event["data"].get("header") if isinstance(header_event["data"], dict) else None
        )
        tools = header.get("tools") if isinstance(header, dict) else None
        tools = tools if isinstance(tools, list) else []
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool-addition":
                continue
            name = block.get("toolName")
            matches = [t for t in tools if isinstance(t, dict) and t.get("name") == name]
            if len(matches) != 1:
                raise _reject(
                    f'developer/message tool-addition "{name}" must name exactly one tool in '
                    f"headerSeq {header_seq}",
                    event,
                )
            definition = matches[0]
            if not isinstance(definition.get("description"), str) or not isinstance(
                definition.get("parameters"), dict
            ):
                raise _reject(
                    f'developer/message tool-addition "{name}" requires a complete tool '
                    f"definition in headerSeq {header_seq}",
                    event,
                )
            if "deferLoading" in definition and definition["deferLoading"] is not True:
                raise _reject(
                    "developer/message referenced tool deferLoading must be true when present",
                    event,
                )

    def _project(self, projection: MessageProjection, event: Mapping[str, Any]) -> dict[int, Any]:
        context = ProjectionContext(
            nodes=tuple(self.nodes), lookup=self._lookup, projected=self.projected
        )
        try:
            return projection.project(event, context)
        except ProjectionError as exc:
            raise _reject(str(exc), event) from None


def _without_content(data: Any) -> Any:
    """``data`` with ``message.content`` blanked, for the content-only comparison of §5.5."""
    if not isinstance(data, dict):
        return data
    message = data.get("message")
    if not isinstance(message, dict):
        return data
    return {**data, "message": {**message, "content": None}}
