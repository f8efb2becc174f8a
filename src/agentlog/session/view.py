"""``Surface``: the read-only view of a session's surface (spec/core.md §3)."""

from __future__ import annotations

from agentlog.surface import SurfaceState

__all__ = ["Surface"]


class Surface:
    """The live, read-only view of a session's surface (the same object for the session's life).

    Attributes are read at call time: ``nodes`` is a tuple of the current node seqs, in order.
    """

    __slots__ = ("_key", "_nodes", "_state")

    def __init__(self, state: SurfaceState) -> None:
        self._state = state
        self._nodes: tuple[int, ...] = ()
        self._key = (0, 0)

    @property
    def nodes(self) -> tuple[int, ...]:
        """The seqs of the events the model sees, in surface order."""
        state = self._state
        key = (len(state.nodes), state.replace_generation)
        if key != self._key:
            self._nodes = tuple(state.nodes)
            self._key = key
        return self._nodes

    @property
    def replace_generation(self) -> int:
        """How many replaces have been applied."""
        return self._state.replace_generation

    @property
    def content_generation(self) -> int:
        """How many changes to already-visible content (replaces plus projections) happened."""
        return self._state.content_generation

    def __repr__(self) -> str:
        return f"Surface(nodes={self.nodes!r})"
