"""``python -m benchmarks [suite ...]``: run suites and write ``benchmarks/results/<suite>.json``.

With no suite named, every registered suite runs. ``--markdown`` prints the verdict table of the
committed results instead of running anything.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import orjson

from benchmarks import SUITES, load
from benchmarks._harness import SkipSuite, environment, render, render_markdown, to_json

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("suites", nargs="*", metavar="suite", help=f"one of: {', '.join(SUITES)}")
    parser.add_argument("--list", action="store_true", help="list the registered suites")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="print the committed results as Markdown tables instead of running",
    )
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(SUITES))
        return 0
    unknown = [name for name in args.suites if name not in SUITES]
    if unknown:
        parser.error(f"unknown suite(s) {', '.join(unknown)}; registered: {', '.join(SUITES)}")
    for name in args.suites or SUITES:
        path = RESULTS / f"{name}.json"
        if args.markdown:
            print(render_markdown(orjson.loads(path.read_bytes())))
            continue
        env = environment()
        started = time.perf_counter()
        try:
            result = load(name)()
        except SkipSuite as skipped:
            print(f"{name}: skipped, no results written: {skipped}", file=sys.stderr)
            continue
        document = {
            "suite": name,
            "environment": env,
            "duration_s": round(time.perf_counter() - started, 1),
            **result,
        }
        RESULTS.mkdir(exist_ok=True)
        path.write_bytes(to_json(document))
        render(document)
        print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
