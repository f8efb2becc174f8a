"""``Artifact``: one session log of one format version."""

from __future__ import annotations

from agentlog.formats import Artifact


def test_the_header_declares_version_and_id() -> None:
    artifact = Artifact(header={"version": 1, "id": "s1", "createdAt": 0}, events=[])
    assert (artifact.version, artifact.session_id) == (1, "s1")
