"""Copy the shared conformance vectors into the repository, zstd-compressed.

The test suite must run on a clean clone, where ``../shared`` may be absent, so the recorded
vectors travel with the code. Run this after ``../shared/conformance`` changes; a test fails
when the vendored copy and the shared one differ.

    python scripts/vendor_conformance.py [path/to/shared/conformance]
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "tests" / "conformance" / "data"


def main() -> None:
    """Compress the shared vectors into tests/conformance/data."""
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "conformance"
    TARGET.mkdir(parents=True, exist_ok=True)
    compressor = zstandard.ZstdCompressor(level=19)
    for name in ("f4", "f0"):
        raw = (source / name / "vectors.jsonl").read_bytes()
        (TARGET / f"{name}-vectors.jsonl.zst").write_bytes(compressor.compress(raw))
    shutil.copyfile(source / "README.md", TARGET / "README.md")
    print(f"vendored {source} into {TARGET}")


if __name__ == "__main__":
    main()
