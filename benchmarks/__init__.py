"""agentlog's benchmark suites: ``python -m benchmarks [suite ...]`` (see docs/benchmarks.md).

A suite is a module ``benchmarks/<name>.py`` with a ``run() -> dict`` function returning
``{"benchmarks": [...]}`` (records of ``benchmarks._harness.Benchmark``). Register it by adding
its name to ``SUITES``, in the order ``python -m benchmarks`` runs them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Final, cast

__all__ = ["SUITES", "load"]

SUITES: Final = (
    "core",
    "stores",
    "formats",
    "compaction",
    "loop",
    "adapters",
    "viewer",
    "peers",
    "postgres",
)
"""Every registered suite, in run order."""


def load(name: str) -> Callable[[], dict[str, Any]]:
    """The ``run`` function of the registered suite ``name``."""
    if name not in SUITES:
        raise KeyError(f"unknown benchmark suite {name!r}; registered: {', '.join(SUITES)}")
    module = importlib.import_module(f"benchmarks.{name}")
    # A suite module's contract is a ``run() -> dict`` function; the import cannot say so.
    return cast(Callable[[], dict[str, Any]], module.run)
