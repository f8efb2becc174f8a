"""Recording ``image/offload`` when a provider refuses a request for its images.

Implements the producer of spec/plugins.md §3: on an ``IMAGE_OFFLOAD_REQUIRED`` failure asking
to drop ``n`` images, the oldest ``n`` images the model still receives — in request order, in
the user messages and tool results of the current surface — are offloaded by one
``image/offload`` event (a message projection: the surface and its messages' ids stay, the
chosen images become placeholders in every later request). The session must have been created
with the ``IMAGE_OFFLOAD`` projection.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from agentlog.events import Event
from agentlog.plugins.sessions import require_session
from agentlog.session import Session
from agentlog.surface import image_blocks

__all__ = [
    "OFFLOAD_REQUIRED",
    "offload_for_failure",
    "offload_images",
    "offload_targets",
    "requested_offload",
]

OFFLOAD_REQUIRED = "IMAGE_OFFLOAD_REQUIRED"
"""The failure code of a request refused until some images are offloaded."""

_TARGET_TYPES = ("user/message", "tool/result")


def offload_targets(
    session: Session, count: int, *, within: Collection[int] | None = None
) -> list[dict[str, Any]]:
    """The ``targets`` of an ``image/offload`` of the ``count`` oldest images still sent.

    In request order: each user message or tool result on the surface (only ``within``, when
    given), its images not yet offloaded, indexed depth-first. Empty when none is left.
    """
    targets: list[dict[str, Any]] = []
    remaining = count
    for seq in session.surface.nodes:
        if remaining <= 0:
            break
        if within is not None and seq not in within:
            continue
        event = session.event_at(seq)
        if event.type not in _TARGET_TYPES:
            continue
        message = session.derive_event_message(event)
        content = message.get("content") if isinstance(message, Mapping) else None
        indexes = [
            index
            for index, block in enumerate(image_blocks(content))
            if block.get("offloaded") is not True
        ][:remaining]
        if indexes:
            targets.append({"seq": seq, "imageIndexes": indexes})
            remaining -= len(indexes)
    return targets


def offload_images(
    session: Session, count: int, *, within: Collection[int] | None = None
) -> Event | None:
    """Offload the ``count`` oldest images still sent, as one ``image/offload`` event.

    For an ``agentlog.aio`` session, await ``agentlog.aio.offload_images`` (its twin).

    Args:
        session: The session (created with the ``IMAGE_OFFLOAD`` projection).
        count: How many images to offload (fewer when fewer remain).
        within: Only consider these surface nodes (a compaction's shadowed span).

    Returns:
        The appended event, or ``None`` when no image is left to offload.

    Raises:
        TypeError: for an ``agentlog.aio`` session.
    """
    require_session(session, "offload_images")
    with session.batch():  # the targets are still the oldest when the event lands
        targets = offload_targets(session, count, within=within)
        return session.append("image/offload", {"targets": targets}) if targets else None


def requested_offload(failure: Mapping[str, Any]) -> int | None:
    """How many images an ``IMAGE_OFFLOAD_REQUIRED`` failure asks to offload (else ``None``)."""
    wanted = failure.get("offloadImages")
    if failure.get("code") != OFFLOAD_REQUIRED or type(wanted) is not int or wanted < 1:
        return None
    return wanted


def offload_for_failure(session: Session, failure: Mapping[str, Any]) -> Event | None:
    """Record the offload an ``IMAGE_OFFLOAD_REQUIRED`` failure asks for (else ``None``).

    The caller retries the request when an event was recorded (no provider retry budget is
    spent), and treats the failure as an ordinary error otherwise. For an ``agentlog.aio``
    session, await ``agentlog.aio.offload_for_failure`` (its twin).
    """
    require_session(session, "offload_for_failure")
    wanted = requested_offload(failure)
    return None if wanted is None else offload_images(session, wanted)
