"""The vendored recordings are the shared ones (``scripts/vendor_conformance.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import zstandard

from tests.conformance.vectors import DATA

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"
pytestmark = pytest.mark.skipif(
    not SHARED.is_dir(),
    reason=f"{SHARED} is not present (a clone without the shared material): nothing to compare",
)


def unpacked(name: str) -> bytes:
    return zstandard.ZstdDecompressor().decompress((DATA / name).read_bytes())


@pytest.mark.parametrize("name", ["f4", "f0"])
def test_the_vector_copies_match(name: str) -> None:
    assert unpacked(f"{name}-vectors.jsonl.zst") == (SHARED / name / "vectors.jsonl").read_bytes()


def test_the_fixture_copy_matches() -> None:
    script = Path(__file__).resolve().parents[2] / "scripts" / "vendor_conformance.py"
    spec = importlib.util.spec_from_file_location("vendor_conformance", script)
    assert spec is not None
    assert spec.loader is not None
    vendor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vendor)
    assert unpacked("f0-fixtures.jsonl.zst") == vendor.fixtures(SHARED)
    assert (DATA / "README.md").read_bytes() == (SHARED / "README.md").read_bytes()
