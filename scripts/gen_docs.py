"""Regenerate the generated documentation: docs/event-catalog.md and docs/cli.md.

python scripts/gen_docs.py          # write the files
python scripts/gen_docs.py --check  # exit 1 when a file is stale (tests do this too)
"""

from __future__ import annotations

import sys
from pathlib import Path

from agentlog.cli.docs import render_cli_reference
from agentlog.events import render_event_catalog

DOCS = Path(__file__).resolve().parents[1] / "docs"
GENERATED = {"event-catalog.md": render_event_catalog, "cli.md": render_cli_reference}


def main() -> int:
    """Write (or with --check, compare) every generated page."""
    stale = []
    for name, render in GENERATED.items():
        path = DOCS / name
        text = render()
        if "--check" in sys.argv:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"stale: {', '.join(stale)}; run python scripts/gen_docs.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
