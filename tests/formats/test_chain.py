"""The migration chain: complete when built, each step checked, refusals named (§5.3)."""

from __future__ import annotations

import pytest

from agentlog.errors import FormatVersionError, MigrationRefused
from agentlog.formats import CHAIN, FORMAT_VERSION, Artifact, Migration, MigrationChain, Refusal


def bump(artifact: Artifact) -> Artifact:
    return Artifact(
        header={**artifact.header, "version": artifact.version + 1}, events=artifact.events
    )


def step(version: int, migrate=bump, name: str | None = None) -> Migration:  # type: ignore[no-untyped-def]
    return Migration(
        name=name or f"v{version}-to-v{version + 1}",
        from_version=version,
        to_version=version + 1,
        migrate=migrate,
    )


def artifact(version: int) -> Artifact:
    return Artifact(header={"version": version, "id": "s1"}, events=[])


@pytest.mark.parametrize(
    ("name", "from_version", "to_version", "message"),
    [
        ("", 0, 1, "a session migration needs a non-empty name"),
        ("m", -1, 0, "m must declare non-negative format versions"),
        ("m", 0, 2, "m must declare adjacent v0->v1"),
        ("m", 1, 1, "m must declare adjacent v1->v2"),
    ],
)
def test_a_step_declares_one_adjacent_edge(
    name: str, from_version: int, to_version: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Migration(name=name, from_version=from_version, to_version=to_version, migrate=bump)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([step(0), step(0, name="again"), step(1)], "Session migration v0->v1 is duplicated"),
        ([step(0), step(1, name="v0-to-v1")], "Session migration name 'v0-to-v1' is duplicated"),
        ([step(1)], "Session migration v0->v1 is missing"),
        ([step(0), step(1), step(2)], "Session migration v2->v3 goes past the current v2"),
    ],
)
def test_a_chain_is_complete_and_unique(steps: list[Migration], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MigrationChain(2, steps)


def test_agentlogs_chain_runs_from_format_0_to_the_current_format() -> None:
    assert FORMAT_VERSION == 4
    assert [m.name for m in CHAIN.plan(0)] == [
        "session-format-v0-to-v1",
        "session-format-v1-to-v2",
        "session-format-v2-to-v3",
        "session-format-v3-to-v4",
    ]
    assert [m.from_version for m in CHAIN.plan(2)] == [2, 3]
    assert CHAIN.plan(FORMAT_VERSION) == ()


def test_a_current_artifact_passes_untouched() -> None:
    current = artifact(2)
    assert MigrationChain(2, [step(0), step(1)]).migrate(current) is current


def test_every_step_from_the_stored_version_runs_in_order() -> None:
    seen: list[int] = []

    def tracing(artifact: Artifact) -> Artifact:
        seen.append(artifact.version)
        return bump(artifact)

    chain = MigrationChain(3, [step(0, tracing), step(1, tracing), step(2, tracing)])
    assert chain.migrate(artifact(1)).version == 3
    assert seen == [1, 2]


def test_a_refusal_names_the_step_the_version_and_the_raw_log() -> None:
    def refusing(_artifact: Artifact) -> Artifact:
        raise Refusal("it holds a retired shape")

    chain = MigrationChain(2, [step(0), step(1, refusing, name="session-format-v1-to-v2")])
    with pytest.raises(MigrationRefused) as refused:
        chain.migrate(artifact(0), location="/logs/session.jsonl")
    assert str(refused.value) == (
        "session-format-v1-to-v2 refuses this format v1 Session: it holds a retired shape "
        '(raw log: "/logs/session.jsonl")'
    )
    error = refused.value
    assert (error.step, error.version, error.session_id) == ("session-format-v1-to-v2", 1, "s1")
    assert isinstance(error, FormatVersionError)


def test_a_step_that_returns_the_wrong_version_is_a_bug() -> None:
    chain = MigrationChain(1, [step(0, lambda a: a)])
    with pytest.raises(AssertionError, match="produced format v0, not v1"):
        chain.migrate(artifact(0))


@pytest.mark.parametrize("version", [5, -1])
def test_versions_outside_the_chain_are_refused(version: int) -> None:
    with pytest.raises(FormatVersionError, match=f"stored Session uses format v{version}"):
        CHAIN.plan(version)
