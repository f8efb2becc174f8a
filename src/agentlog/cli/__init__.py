"""The ``agentlog`` command-line interface."""

from __future__ import annotations

from agentlog.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """Run the ``agentlog`` command."""
    app()
