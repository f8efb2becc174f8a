"""Session format versions 0–4 and the chain of adjacent migrations between them.

Implements spec/persistence.md §5 (and the chunk-row codec of spec/core.md §12). agentlog
writes format 4 only; a log of an older version is brought to format 4 in memory by running
every adjacent step from its version up (``migrate``), and nothing on disk changes until the
session is continued (migrate-on-continue, done by the stores).

Example:
    >>> from agentlog.formats import Artifact, migrate
    >>> v0 = Artifact(
    ...     header={"version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0},
    ...     events=[
    ...         {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
    ...         {"type": "user/message", "seq": 1, "time": 0, "surfaceOp": "append",
    ...          "data": {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}},
    ...     ],
    ... )
    >>> v4 = migrate(v0)
    >>> v4.version, v4.header["isSeeded"], v4.events[1]["data"]["id"]
    (4, False, 'legacy-message:s:1')
"""

from __future__ import annotations

from typing import Final

from agentlog.formats import v0_to_v1, v1_to_v2, v2_to_v3, v3_to_v4
from agentlog.formats.artifact import Artifact, Refusal
from agentlog.formats.chain import Migration, MigrationChain
from agentlog.formats.chunk_rows import (
    ROW_TYPES,
    MalformedChunkRow,
    decode_storage_record,
    pack_chunk_runs,
)
from agentlog.session.header import FORMAT_VERSION

__all__ = [
    "CHAIN",
    "FORMAT_VERSION",
    "ROW_TYPES",
    "Artifact",
    "MalformedChunkRow",
    "Migration",
    "MigrationChain",
    "Refusal",
    "decode_storage_record",
    "migrate",
    "pack_chunk_runs",
]

CHAIN: Final = MigrationChain(
    FORMAT_VERSION,
    [
        Migration(name=step.NAME, from_version=index, to_version=index + 1, migrate=step.migrate)
        for index, step in enumerate((v0_to_v1, v1_to_v2, v2_to_v3, v3_to_v4))
    ],
)
"""Every step from format 0 to ``FORMAT_VERSION``, checked complete at import."""


def migrate(artifact: Artifact, *, location: str | None = None) -> Artifact:
    """Bring ``artifact`` to the current format (itself when it is current).

    Raises:
        agentlog.MigrationRefused: when a step cannot carry the log forward.
        agentlog.FormatVersionError: for a version newer than this build's.
    """
    return CHAIN.migrate(artifact, location=location)
