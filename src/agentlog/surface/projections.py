"""Message projections: log-only events that rewrite the content of visible messages.

Implements spec/core.md §5.7 [F4]. A projection is a pure function registered for one event
type; given the event and the current surface, it validates the whole decision and returns new
immutable messages keyed by the original seq of the node they replace in ``derive_messages()``.
Node membership and message identity never change; only ``content_generation`` moves.

``IMAGE_OFFLOAD`` is the one built-in projection: ``image/offload`` marks selected image blocks
``offloaded: true`` so that provider adapters send a placeholder instead of the bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agentlog.events import event_message
from agentlog.values import JsonValue, is_seq, snapshot, thaw

__all__ = [
    "IMAGE_OFFLOAD",
    "ImageOffloadProjection",
    "MessageProjection",
    "ProjectionContext",
    "ProjectionError",
    "image_blocks",
    "projection_registry",
]


class ProjectionError(Exception):
    """A projection refused its event; ``str()`` is the text the append is rejected with."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectionContext:
    """What a projection may read: the surface before its event."""

    nodes: tuple[int, ...]
    """The current surface nodes, in order."""
    lookup: Callable[[int], Mapping[str, Any] | None]
    """The event at a seq, or ``None`` outside the log (or the folded window)."""
    projected: Mapping[int, JsonValue]
    """Messages already projected, by the original seq of their node."""

    def current_message(self, seq: int) -> JsonValue:
        """The message node ``seq`` derives now: its projected copy, else its event's message."""
        if seq in self.projected:
            return self.projected[seq]
        event = self.lookup(seq)
        return None if event is None else event_message(event["type"], event["data"])


@runtime_checkable
class MessageProjection(Protocol):
    """The contract of a message projection (spec/core.md §5.7 ``SessionMessageProjection``)."""

    @property
    def type(self) -> str:
        """The log-only event type this projection interprets."""
        ...

    def project(self, event: Mapping[str, Any], context: ProjectionContext) -> dict[int, Any]:
        """Validate ``event`` against ``context`` and return the new messages by node seq.

        Raises:
            ProjectionError: to reject the event; nothing changes.
        """
        ...


def projection_registry(projections: Iterable[MessageProjection]) -> dict[str, MessageProjection]:
    """Index projections by type, refusing two for one type (spec/core.md §5.7, E29)."""
    registry: dict[str, MessageProjection] = {}
    for projection in projections:
        if projection.type in registry:
            raise ValueError(
                f'session message projection "{projection.type}" is already registered'
            )
        registry[projection.type] = projection
    return registry


class ImageOffloadProjection:
    """The ``image/offload`` projection: replace selected images with placeholders for good."""

    type = "image/offload"

    def project(self, event: Mapping[str, Any], context: ProjectionContext) -> dict[int, Any]:
        """Mark the selected image blocks ``offloaded: true`` (texts of spec/core.md §5.7)."""
        data = event["data"]
        targets = data.get("targets") if isinstance(data, dict) else None
        if not isinstance(data, dict) or len(data) != 1 or not isinstance(targets, list):
            raise ProjectionError("image/offload: data must contain a nonempty targets array")
        if not targets:
            raise ProjectionError("image/offload: data must contain a nonempty targets array")
        nodes = set(context.nodes)
        seen: set[int] = set()
        result: dict[int, Any] = {}
        for target in targets:
            indexes = target.get("imageIndexes") if isinstance(target, dict) else None
            if (
                not isinstance(target, dict)
                or target.keys() != {"seq", "imageIndexes"}
                or not is_seq(target["seq"])
                or not isinstance(indexes, list)
                or not indexes
            ):
                raise ProjectionError(
                    "image/offload: each target must contain a seq and nonempty imageIndexes"
                )
            seq = int(target["seq"])
            if seq in seen:
                raise ProjectionError(f"image/offload: duplicate target seq {seq}")
            seen.add(seq)
            if seq not in nodes:
                raise ProjectionError(
                    f"image/offload: target seq {seq} is not a current surface node"
                )
            node_event = context.lookup(seq)
            if node_event is None or node_event["type"] not in ("user/message", "tool/result"):
                raise ProjectionError(
                    f"image/offload: target seq {seq} must be user/message or tool/result"
                )
            previous = -1
            for index in indexes:
                if not is_seq(index) or index <= previous:
                    raise ProjectionError(
                        "image/offload: imageIndexes must be strictly increasing non-negative "
                        "safe integers"
                    )
                previous = index
            result[seq] = _offload(context.current_message(seq), [int(i) for i in indexes])
        return result


def _offload(message: Any, indexes: list[int]) -> Any:
    """A frozen copy of ``message`` with its images at ``indexes`` (depth-first) offloaded."""
    copy = thaw(message)
    images = image_blocks(copy.get("content") if isinstance(copy, dict) else None)
    for index in indexes:
        if index >= len(images):
            raise ProjectionError(f"image/offload: image index {index} does not exist")
        if images[index].get("offloaded") is True:
            raise ProjectionError(f"image/offload: image index {index} is already offloaded")
        images[index]["offloaded"] = True
    return snapshot(copy)


def image_blocks(content: Any) -> list[dict[str, Any]]:
    """Every ``image`` block of a content array, depth-first through nested ``content`` arrays."""
    found: list[dict[str, Any]] = []
    stack = [iter(content)] if isinstance(content, list) else []
    while stack:
        for block in stack[-1]:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "image":
                found.append(block)
            elif isinstance(block.get("content"), list):
                stack.append(iter(block["content"]))
                break
        else:
            stack.pop()
    return found


IMAGE_OFFLOAD: MessageProjection = ImageOffloadProjection()
"""The built-in ``image/offload`` message projection, for ``Session.create(projections=...)``."""
