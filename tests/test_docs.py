"""Every example in the README, docs/ and docstrings runs (STYLE.md §14).

Each Markdown file's ``python`` blocks run in order in one namespace, as a reader would type
them; docstring examples run as doctests. Generated pages must match their generators.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import agentlog
from tests.conftest import POSTGRES_SERVER

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(path: Path) -> list[str]:
    return _BLOCK.findall(path.read_text(encoding="utf-8"))


@pytest.mark.structure_free(
    "examples run as a reader runs them: structure is checked where agentlog checks it (store "
    "sessions, install_invariants), not by the test suite's own companion"
)
@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_markdown_examples_run(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if any(POSTGRES_SERVER in block for block in python_blocks(path)):
        # Examples on the test server run where the PostgreSQL tests run (and skip, or fail
        # under CI=true, as they do without a server).
        request.getfixturevalue("postgres_url")
    monkeypatch.chdir(tmp_path)  # examples may create stores in the working directory
    monkeypatch.setenv("AGENTLOG_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENTLOG_STORE", raising=False)
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    for block in python_blocks(path):
        # dont_inherit: run as a reader would, without this module's __future__ imports.
        exec(compile(block, str(path), "exec", dont_inherit=True), namespace)


def test_readme_has_examples() -> None:
    assert python_blocks(ROOT / "README.md"), "the README synopsis must be runnable Python"


def _modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(agentlog.__path__, "agentlog.")
        if not info.name.endswith("__main__")
    )


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_generated_docs_are_fresh() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
