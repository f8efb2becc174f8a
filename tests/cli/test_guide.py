"""Every command of docs/cli-guide.md runs, in order, in a shell, and succeeds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "cli-guide.md"
_BLOCK = re.compile(r"^```console\n(.*?)^```", re.DOTALL | re.MULTILINE)


def guide_commands() -> list[str]:
    blocks = _BLOCK.findall(GUIDE.read_text(encoding="utf-8"))
    return [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ")]


def test_the_guide_shows_commands() -> None:
    assert len(guide_commands()) >= 10


def test_every_command_of_the_guide_succeeds(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    script = "set -euo pipefail\n" + "\n".join(
        f"echo '>>> {command.replace(chr(39), '')}'\n{command} > /dev/null"
        for command in guide_commands()
    )
    completed = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "AGENTLOG_HOME": str(tmp_path / "home"),
            "AGENTLOG_STORE": "",
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "NO_COLOR": "1",
        },
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    assert not (tmp_path / "home").exists()  # the guide never touched the default store


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\(([^)#\s]+)")


def test_docs_refer_only_to_files_in_the_repository() -> None:
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        for outside in ("spec/", "DESIGN.md", "STYLE.md", "../shared", "shared/conformance"):
            assert outside not in text, f"{page.name} refers to {outside}"
        for target in _LINK.findall(text):
            if target.startswith(("http://", "https://")):
                continue
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_the_readme_marks_compact_as_async() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`await agentlog.compact(session, summarizer)` (async)" in readme
