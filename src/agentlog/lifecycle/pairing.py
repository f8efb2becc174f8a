"""Tool-call/result pairing balance of the surface (spec/plugins.md §2.4).

A *cut* is a position between surface nodes (N nodes give N+1 cuts). Walking the surface with a
counter — each ``assistant/message`` adds its number of ``tool-call`` blocks, each
``tool/result`` subtracts one — a cut is *balanced* when the counter is zero there. A range of
the surface may be replaced (compacted) only between balanced cuts, so that a step's tool calls
are never separated from their results. Pairing is by counts, not ids: the surface order
already groups a step's calls and results.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentlog.errors import ToolPairingError
from agentlog.session import Session

__all__ = ["pairing_counters", "tool_pairing_balanced_after", "tool_pairing_balanced_before"]

Lookup = Callable[[int], Mapping[str, Any] | None]


def pairing_counters(
    nodes: Sequence[int], lookup: Lookup, start: int = 0, counter: int = 0
) -> list[int]:
    """The pairing counter after each of ``nodes[start:]``, continuing from ``counter``.

    Raises:
        ToolPairingError: ``tool-pairing balance: ... (corrupt surface)`` when a node has no
            event or a result has no earlier call.
    """
    counters: list[int] = []
    for seq in nodes[start:]:
        event = lookup(seq)
        if event is None:
            raise ToolPairingError(
                f"tool-pairing balance: surface seq {seq} has no matching session event "
                "(corrupt surface)"
            )
        event_type = event["type"]
        if event_type == "assistant/message":
            content = event["data"]["message"]["content"]
            counter += sum(
                1
                for block in content
                if isinstance(block, dict) and block.get("type") == "tool-call"
            )
        elif event_type == "tool/result":
            counter -= 1
            if counter < 0:
                raise ToolPairingError(
                    f"tool-pairing balance: tool/result at surface seq {seq} has no matching "
                    "tool-call (corrupt surface)"
                )
        counters.append(counter)
    return counters


class _Cache:
    """Counters of one session's surface, valid for one replace generation."""

    __slots__ = ("counters", "generation")

    def __init__(self) -> None:
        self.generation = -1
        self.counters: list[int] = [0]


_CACHES: weakref.WeakKeyDictionary[Session, _Cache] = weakref.WeakKeyDictionary()


def _counters(session: Session) -> list[int]:
    """The counter at every cut of ``session``'s surface, maintained incrementally."""
    cache = _CACHES.get(session)
    if cache is None:
        cache = _CACHES[session] = _Cache()
    nodes = session.surface.nodes
    generation = session.surface.replace_generation
    if generation != cache.generation or len(cache.counters) > len(nodes) + 1:
        # Computed before the cache changes, so a corrupt surface leaves it as it was.
        fresh = [0, *pairing_counters(nodes, session.event_at_or_none)]
        cache.counters, cache.generation = fresh, generation
    elif len(cache.counters) < len(nodes) + 1:
        done = len(cache.counters) - 1
        cache.counters.extend(
            pairing_counters(nodes, session.event_at_or_none, done, cache.counters[-1])
        )
    return cache.counters


def _position(session: Session, seq: int) -> int:
    try:
        return session.surface.nodes.index(seq)
    except ValueError:
        raise ToolPairingError(f"tool-pairing balance: surface seq {seq} not found") from None


def tool_pairing_balanced_before(session: Session, seq: int) -> bool:
    """Whether the cut just before surface node ``seq`` pairs every tool call with its result.

    Raises:
        ToolPairingError: when ``seq`` is not a current node, or the surface is corrupt.
    """
    index = _position(session, seq)
    return _counters(session)[index] == 0


def tool_pairing_balanced_after(session: Session, seq: int) -> bool:
    """Whether the cut just after surface node ``seq`` pairs every tool call with its result.

    Raises:
        ToolPairingError: when ``seq`` is not a current node, or the surface is corrupt.
    """
    index = _position(session, seq)
    return _counters(session)[index + 1] == 0
