"""Copy the shared conformance vectors into the repository, zstd-compressed.

The test suite must run on a clean clone, where ``../shared`` may be absent, so the recorded
vectors travel with the code. Run this after ``../shared/conformance`` changes; a test fails
when the vendored copy and the shared one differ.

    python scripts/vendor_conformance.py [path/to/shared/conformance]
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "tests" / "conformance" / "data"


def fixtures(source: Path) -> bytes:
    """One JSON line per real session-log fixture: what was loaded and what the reference got.

    Only what the tests compare is kept (``fixtures/*.expected.json`` also records the whole
    loaded state): the materialized artifact, whether the disk load succeeded, its error, and
    the derived messages.
    """
    lines = []
    for entry in json.loads((source / "fixtures" / "index.json").read_text()):
        expected = json.loads((source / "fixtures" / entry["expected_file"]).read_text())
        materialize, disk = expected["materialize"], expected.get("disk") or {}
        record = {
            "fixture": entry["fixture_file"],
            "source_path": entry["source_path"],
            "artifact": materialize.get("artifact") if materialize["ok"] else None,
            "raw": None
            if materialize["ok"]
            else (source / "fixtures" / entry["fixture_file"]).read_text(),
            "materialize_error": None if materialize["ok"] else materialize["error"]["message"],
            "ok": disk.get("ok"),
            "error": (disk.get("error") or {}).get("message"),
            "derived_messages": (disk.get("state") or {}).get("derivedMessages"),
        }
        lines.append(json.dumps(record, ensure_ascii=True))
    return ("\n".join(lines) + "\n").encode()


def main() -> None:
    """Compress the shared vectors into tests/conformance/data."""
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "conformance"
    TARGET.mkdir(parents=True, exist_ok=True)
    compressor = zstandard.ZstdCompressor(level=19)
    for name in ("f4", "f0"):
        raw = (source / name / "vectors.jsonl").read_bytes()
        (TARGET / f"{name}-vectors.jsonl.zst").write_bytes(compressor.compress(raw))
    (TARGET / "f0-fixtures.jsonl.zst").write_bytes(compressor.compress(fixtures(source)))
    shutil.copyfile(source / "README.md", TARGET / "README.md")
    print(f"vendored {source} into {TARGET}")


if __name__ == "__main__":
    main()
