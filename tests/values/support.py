"""Builders for deeply nested values (built iteratively, so any depth works), and the marker of
tests that need the C accelerator."""

from __future__ import annotations

from typing import Any

import pytest

from agentlog.values._snapshot import c_snapshot

needs_accelerator = pytest.mark.skipif(
    c_snapshot is None, reason="share_strings() shares only with the C accelerator"
)


def deep_list(depth: int, leaf: Any) -> list[Any]:
    """``[[[...[leaf]...]]]`` with ``depth`` lists."""
    root: list[Any] = []
    current = root
    for _ in range(depth - 1):
        child: list[Any] = []
        current.append(child)
        current = child
    current.append(leaf)
    return root


def deep_dict(depth: int, leaf: Any) -> dict[str, Any]:
    """``{"k": {"k": ... {"leaf": leaf}}}`` with ``depth`` dicts."""
    root: dict[str, Any] = {}
    current = root
    for _ in range(depth - 1):
        child: dict[str, Any] = {}
        current["k"] = child
        current = child
    current["leaf"] = leaf
    return root
