"""The adapters suite: each framework adapter against that framework's own session store.

``python -m benchmarks adapters`` runs every part: a module ``benchmarks/_adapter_<name>.py``
with a ``run() -> list[Benchmark]`` function (one per framework: openai_agents, pydantic_ai,
adk, langgraph). A part whose framework is not installed is listed under ``skipped`` with the
extra that installs it; docs/benchmarks.md explains every figure.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, cast

from benchmarks._harness import Benchmark

PARTS: Final = tuple(
    sorted(
        module.name
        for module in pkgutil.iter_modules([str(Path(__file__).resolve().parent)])
        if module.name.startswith("_adapter_")
    )
)
"""The part modules, in name order."""


def run() -> dict[str, Any]:
    benchmarks: list[Benchmark] = []
    skipped: dict[str, str] = {}
    for name in PARTS:
        part = name.removeprefix("_adapter_")
        try:
            module = importlib.import_module(f"benchmarks.{name}")
            # A part's contract is a ``run() -> list[Benchmark]`` function.
            runner = cast(Callable[[], list[Benchmark]], module.run)
            benchmarks.extend(runner())
        except ImportError as exc:
            skipped[part] = f"{exc} (pip install 'agentlog[{part.replace('_', '-')}]')"
    return {"benchmarks": benchmarks, "skipped": skipped}
