"""A failed compaction: the error chain it records and the error its caller gets."""

from __future__ import annotations

import asyncio

import pytest

from agentlog import CompactionError
from agentlog.plugins.compaction.failures import (
    SurfaceChanged,
    classified,
    error_chain,
    not_durable,
)


def chained() -> BaseException:
    try:
        try:
            raise OSError(28, "No space left on device")
        except OSError as disk:
            raise RuntimeError("append failed") from disk
    except RuntimeError as error:
        return error


def test_the_error_chain_follows_causes_and_contexts() -> None:
    assert error_chain(chained()) == (
        "append failed; caused by: [Errno 28] No space left on device"
    )
    assert error_chain(asyncio.CancelledError()) == "cancelled"
    assert error_chain(KeyError()) == "KeyError"


NO_SUMMARY = "manual compaction could not produce a smaller summary"
CHANGED = "the compacted history changed during manual compaction"
NO_COMMIT = "manual compaction did not commit cleanly"


@pytest.mark.parametrize(
    ("error", "stage", "manual", "expected"),
    [
        (RuntimeError("boom"), "summary", True, (NO_SUMMARY, "summary")),
        (SurfaceChanged("moved"), "summary", True, (CHANGED, "changed")),
        (RuntimeError("boom"), "commit", True, (NO_COMMIT, "commit")),
        (RuntimeError("boom"), "summary", False, ("boom", "summary")),
        (SurfaceChanged("moved"), "summary", False, ("moved", "changed")),
        (RuntimeError("boom"), "commit", False, ("boom", "commit")),
        (CompactionError("held", code="busy"), "commit", True, ("held", "busy")),
    ],
)  # fmt: skip
def test_a_failure_is_classified_for_its_caller(
    error: BaseException, stage: str, manual: bool, expected: tuple[str, str]
) -> None:
    result = classified(error, stage=stage, manual=manual)
    assert (str(result), result.code) == expected


def test_an_event_that_landed_but_is_not_durable_is_a_persistence_failure() -> None:
    disk = OSError(5, "Input/output error")
    manual, automatic = not_durable(disk, manual=True), not_durable(disk, manual=False)
    assert (str(manual), manual.code) == (
        "manual compaction durability checkpoint failed",
        "persistence",
    )
    assert (str(automatic), automatic.code) == (
        "compaction is not durable: [Errno 5] Input/output error",
        "persistence",
    )
