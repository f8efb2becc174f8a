"""The migration chain: adjacent steps ``vN → vN+1`` from format 0 up to the current format.

Implements the chain half of spec/persistence.md §5.3 (``defineSessionFormatMigration``,
``createSessionFormatChain``): each step declares one adjacent edge; the chain refuses
duplicates, gaps and edges past the current version when it is built, and runs an older
artifact through every edge from its version up, checking each output's version. A step's
``Refusal`` becomes ``MigrationRefused`` naming the step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentlog.errors import FormatVersionError, MigrationRefused
from agentlog.formats.artifact import Artifact, Refusal

__all__ = ["Migration", "MigrationChain"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Migration:
    """One adjacent step of the chain: an artifact of ``from_version`` to ``to_version``.

    Raises:
        ValueError: for an empty name, a negative version or a non-adjacent edge.
    """

    name: str
    """The step's name, used in refusals (``session-format-v0-to-v1``)."""
    from_version: int
    to_version: int
    migrate: Callable[[Artifact], Artifact]
    """The step: pure, raises ``Refusal`` for a log it cannot carry forward."""

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a session migration needs a non-empty name")
        if min(self.from_version, self.to_version) < 0:
            raise ValueError(f"{self.name} must declare non-negative format versions")
        if self.to_version != self.from_version + 1:
            raise ValueError(
                f"{self.name} must declare adjacent v{self.from_version}->v{self.from_version + 1}"
            )


class MigrationChain:
    """Every step from format 0 to ``current``, checked complete when built.

    Raises:
        ValueError: for a duplicated step or name, a missing edge, or an edge past ``current``.
    """

    def __init__(self, current: int, migrations: Sequence[Migration]) -> None:
        self.current = current
        by_version: dict[int, Migration] = {}
        names: set[str] = set()
        for step in migrations:
            edge = f"v{step.from_version}->v{step.to_version}"
            if step.from_version in by_version:
                raise ValueError(f"Session migration {edge} is duplicated")
            if step.name in names:
                raise ValueError(f"Session migration name {step.name!r} is duplicated")
            if step.to_version > current:
                raise ValueError(f"Session migration {edge} goes past the current v{current}")
            by_version[step.from_version] = step
            names.add(step.name)
        for version in range(current):
            if version not in by_version:
                raise ValueError(f"Session migration v{version}->v{version + 1} is missing")
        self._steps = tuple(by_version[version] for version in range(current))

    def plan(self, version: int) -> tuple[Migration, ...]:
        """The steps that bring a log of ``version`` to the current format (none when current).

        Raises:
            FormatVersionError: for a version newer than the current one, or negative.
        """
        if version > self.current or version < 0:
            raise FormatVersionError(
                f"stored Session uses format v{version}; this build writes v{self.current}",
                version=version,
            )
        return self._steps[version:]

    def migrate(self, artifact: Artifact, *, location: str | None = None) -> Artifact:
        """Run ``artifact`` through every step up to the current format.

        Raises:
            MigrationRefused: when a step refuses the log (``<step> refuses this format vN
                Session: <why>``, plus the raw log when ``location`` is given).
            FormatVersionError: for a version newer than the current one.
        """
        for step in self.plan(artifact.version):
            try:
                migrated = step.migrate(artifact)
            except Refusal as refusal:
                suffix = f' (raw log: "{location}")' if location else ""
                raise MigrationRefused(
                    f"{step.name} refuses this format v{step.from_version} Session: "
                    f"{refusal}{suffix}",
                    session_id=artifact.header.get("id"),
                    path=location,
                    version=artifact.version,
                    step=step.name,
                ) from None
            if migrated.version != step.to_version:
                raise AssertionError(
                    f"{step.name} produced format v{migrated.version}, not v{step.to_version}"
                )
            artifact = migrated
        return artifact
