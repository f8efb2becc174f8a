"""A whole stored session of one format version: the unit every migration step maps.

Values are the plain wire dicts a reader produced (spec/persistence.md §5.3,
``SessionFormatArtifact``). Steps never change their input: an event a step leaves alone is
passed on as the same object, a changed one is a new dict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Artifact", "Refusal"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact:
    """A session log in one format version: its header record and its events, in order."""

    header: Mapping[str, Any]
    """The header record without its ``type`` tag; ``header["version"]`` is the version."""
    events: Sequence[Mapping[str, Any]]
    """The events, seqs dense from 0 (format 0 and 1: packed rows already expanded)."""

    @property
    def version(self) -> int:
        """The format version the header declares."""
        version: int = self.header["version"]
        return version

    @property
    def session_id(self) -> str:
        """The session id the header declares."""
        session_id: str = self.header["id"]
        return session_id


class Refusal(Exception):  # an outcome, not a programming error
    """A migration step cannot carry this log forward; ``str()`` says why.

    Raised inside a step; the chain turns it into ``MigrationRefused`` naming the step.
    """
