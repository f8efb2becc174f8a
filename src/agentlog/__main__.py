"""``python -m agentlog``: the command-line interface."""

from agentlog.cli import main

main()
