"""House conventions, enforced (STYLE.md §22): layout, public API, dataclasses, errors, tests.

The import-layer contract itself is checked by ``lint-imports`` in ``.ci/run``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import agentlog
from agentlog import errors

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "agentlog"

LONG_MODULES = {
    "session/session.py": "the Session class: one type whose methods are spec/core.md §3's API",
    "stores/store.py": "the Store class: one type whose methods are the store API "
    "(spec/persistence.md §2)",
}
"""Modules allowed over ~400 lines (STYLE.md §2), with the reason."""

UNTESTED_MODULES = {
    "__main__.py": "runs the CLI; covered by tests/cli/test_app.py",
    "cli/__init__.py": "entry point; covered by tests/cli",
    "cli/docs.py": "renders docs/cli.md; covered by tests/test_docs.py",
    "cli/render.py": "terminal rendering; covered by tests/cli/test_app.py",
    "cli/app.py": "covered by tests/cli/test_app.py",
    "errors.py": "covered by test_conventions (tree, pickling) and every rule test",
    "events/_declarations.py": "data of events/catalog.py; covered by tests/events/test_catalog.py",
    "values/_frozen.py": "covered by tests/values/test_frozen.py",
}
"""Source modules without a test module of their own name, with the reason (STYLE.md §19)."""

PUBLIC_API = {
    # DESIGN.md, "Public API (pinned)"
    "Session", "Event", "AgentlogError", "EventRejected", "SeedRejected", "IMAGE_OFFLOAD",
    "fold_surface", "open_turn_closers", "build_fork_seed", "thaw", "KNOWN_EVENT_TYPES",
    # errors of the tree in errors.py
    "InvariantError", "NotLosslessJson", "SessionForkError", "ToolPairingError", "InvalidHistory",
    # lifecycle (issue 3)
    "install_invariants", "check_invariants", "check_provider_history", "history_problems",
    "tool_pairing_balanced_before", "tool_pairing_balanced_after", "ToolCallRecovery",
    "TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN",
    # the core vocabulary
    "FORMAT_VERSION", "SURFACE_EVENT_TYPES", "MESSAGE_PROJECTION_EVENT_TYPES", "EventLog",
    "Surface", "FoldResult", "Replacement", "MessageProjection", "ProjectionContext",
    "ProjectionError", "derive_event_message", "declare_event_type", "messages",
    "canonical_header", "fold_request_header", "header_equals",
    # stores (issue 4): DESIGN's open_store/load_file, their errors and results
    "open_store", "load_file", "Store", "SessionInfo", "StoreError", "SessionNotFound",
    "SessionAlreadyExists", "SessionLocked", "ConcurrentWriteError", "FormatVersionError",
    "CorruptLog",
    # formats (issue 5): the refusal of an older log, and what continuing one converts
    "MigrationRefused", "MigrationPlan",
    # compaction (issue 6): the three entry points, their summarizers, policy and outcomes
    "compact", "prune_tool_results", "expand", "CompactionConfig", "CompactionResult",
    "ExtractiveSummarizer", "ModelSummarizer", "PruneConfig", "CompactionError",
    "CompactionConfigError",
    # the agent loop (issue 12): the loop, its tools, event payload constructors
    "Agent", "tool", "payloads",
}  # fmt: skip


def source_modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py"))


def test_public_api_is_pinned() -> None:
    assert set(agentlog.__all__) == PUBLIC_API


def test_every_public_attribute_is_exported() -> None:
    public = {
        name
        for name, value in vars(agentlog).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert public <= set(agentlog.__all__), public - set(agentlog.__all__)
    for name in agentlog.__all__:
        assert hasattr(agentlog, name), name


@pytest.mark.parametrize("path", source_modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_modules_stay_small(path: Path) -> None:
    relative = str(path.relative_to(SRC))
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= 400 or relative in LONG_MODULES, f"{relative} has {lines} lines"


@pytest.mark.parametrize("path", source_modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_every_module_has_a_test_module(path: Path) -> None:
    relative = path.relative_to(SRC)
    if path.name == "__init__.py" and relative.parent != Path("."):
        return  # package markers re-export; their names are tested where defined
    if str(relative) in UNTESTED_MODULES or relative == Path("__init__.py"):
        return
    stem = path.stem.lstrip("_")
    candidates = list((ROOT / "tests").rglob(f"test_{stem}.py")) + list(
        (ROOT / "tests").rglob(f"test_{stem}s.py")
    )
    assert candidates, f"no tests/**/test_{stem}.py for src/agentlog/{relative}"


def _public_dataclasses() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(agentlog.__path__, "agentlog."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and dataclasses.is_dataclass(value)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found.append(value)
    return found


@pytest.mark.parametrize("cls", _public_dataclasses(), ids=lambda c: c.__qualname__)
def test_value_dataclasses_are_frozen_slotted_and_keyword_only(cls: type) -> None:
    params = cls.__dataclass_params__  # type: ignore[attr-defined]  # set by @dataclass
    assert params.frozen, cls
    assert "__slots__" in vars(cls), cls
    assert all(f.kw_only for f in dataclasses.fields(cls)), cls


def _error_classes() -> list[type[BaseException]]:
    return [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, BaseException)
    ]


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: c.__name__)
def test_errors_form_one_tree_and_pickle(cls: type[errors.AgentlogError]) -> None:
    assert issubclass(cls, errors.AgentlogError)
    assert cls.__name__ in errors.__all__
    assert cls.__name__ in (errors.__doc__ or ""), "the module docstring draws the tree"
    error = cls("the text", session_id="s1", seq=3)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls
    assert str(copy) == "the text"
    assert copy.session_id == "s1"  # type: ignore[attr-defined]  # context attribute
    assert copy.seq == 3  # type: ignore[attr-defined]  # context attribute


def test_leaf_errors_refine_a_builtin() -> None:
    builtin = (ValueError, LookupError, RuntimeError, TypeError, OSError)
    for cls in _error_classes():
        if cls not in (errors.AgentlogError, errors.StoreError):
            assert issubclass(cls, builtin), cls


_SECTION = re.compile(r"^## (\d+)\. ", re.MULTILINE)
CORE_SECTIONS_NOT_YET = {
    "12": "chunk-row storage codec (format 0): the migration chain, issue 5",
    "13": "store publication lifecycle: the stores, issue 4",
    "15": "conformance scenarios: cited by the tests that run them, not by source",
    "16": "differences between formats: documentation of the migration chain, issue 5",
    "17": "history of the design documents: no code",
    "18": "implementation notes: no code",
    "0": "how to read the spec: no code",
}


def test_every_core_spec_section_is_cited_in_the_source() -> None:
    """STYLE.md §12: a search for a section of spec/core.md finds the code that implements it."""
    spec = ROOT.parent / "shared" / "spec" / "core.md"
    if spec.exists():
        sections = set(_SECTION.findall(spec.read_text(encoding="utf-8")))
        assert sections == {str(n) for n in range(19)}  # the spec keeps its numbering
    source = "\n".join(p.read_text(encoding="utf-8") for p in source_modules())
    cited = set(re.findall(r"spec/core\.md §(\d+)", source)) | set(
        re.findall(r"§(\d+)\.\d", source)
    )
    missing = {str(n) for n in range(19)} - cited - set(CORE_SECTIONS_NOT_YET)
    assert not missing, f"spec/core.md sections cited nowhere in src/: {sorted(missing)}"


def test_import_needs_no_optional_dependency() -> None:
    """STYLE.md §5: importing agentlog and every module pulls in no optional extra.

    The modules of the PostgreSQL backend are the extra's own (``agentlog.stores.postgres``,
    its async twin ``postgres_aio`` and their ``_pg_*`` helpers): ``open_store`` imports them
    only for a ``postgresql://`` URL.
    """
    code = (
        "import sys, pkgutil, importlib, agentlog\n"
        "for info in pkgutil.walk_packages(agentlog.__path__, 'agentlog.'):\n"
        "    last = info.name.rpartition('.')[2]\n"
        "    optional = last in ('postgres', 'postgres_aio') or '._pg_' in info.name\n"
        "    if not info.name.endswith('__main__') and not optional:\n"
        "        importlib.import_module(info.name)\n"
        "bad = {'psycopg', 'openai', 'anthropic'} & set(sys.modules)\n"
        "assert not bad, bad\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
