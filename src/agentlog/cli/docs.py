"""The CLI reference of ``docs/cli.md``, rendered from the commands' own ``--help``."""

from __future__ import annotations

from typer.core import TyperGroup
from typer.main import get_command
from typer.testing import CliRunner

from agentlog.cli.app import app

__all__ = ["render_cli_reference"]


def _help(*command: str) -> str:
    """``agentlog [command] --help`` as a fixed-width terminal would show it."""
    result = CliRunner().invoke(
        app, [*command, "--help"], env={"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    )
    if result.exit_code != 0:
        raise RuntimeError(f"agentlog {' '.join(command)} --help failed: {result.output}")
    return "\n".join(line.rstrip() for line in result.output.splitlines()).strip("\n")


def render_cli_reference() -> str:
    """The Markdown of ``docs/cli.md``: ``agentlog --help`` and every command's help."""
    lines = [
        "<!-- Generated from the commands' --help by scripts/gen_docs.py; do not edit. -->",
        "",
        "# Command-line reference",
        "",
        "Every command of `agentlog`, as its `--help` prints it. See [the CLI guide](cli-guide.md)",
        "for a tour with examples.",
        "",
        "```",
        _help(),
        "```",
    ]
    group = get_command(app)
    assert isinstance(group, TyperGroup)
    names = [name for name, command in group.commands.items() if not command.hidden]
    for name in names:
        lines += ["", f"## `agentlog {name}`", "", "```", _help(name), "```"]
    return "\n".join(lines) + "\n"
