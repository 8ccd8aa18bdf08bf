"""`python -m bench.suite REPORT.xml`: where the project's own test suite spends its time.

Reads the JUnit XML pytest writes (`--junitxml=REPORT.xml`; pytest-xdist merges its workers'
into one) and prints, per test file, the wall seconds its tests took (setup, call and teardown:
a module fixture's grades count in the first test that uses it), their share of the whole and
their count, longest first; then the sum and what it means for the suite's wall time on N
workers: with `--dist loadfile` a file runs on one worker, so the suite takes at least its
longest file and at least the sum over N.

    python -m pytest -n auto --dist loadfile --junitxml=/tmp/suite.xml
    python -m bench.suite /tmp/suite.xml [--workers 2] [--top 25]

Seconds are wall seconds on a machine running N files at once: compare files within one run,
and runs on the same machine at the same load. The files' order for the workers is
`tests/conftest.py`'s LONGEST_FILES (see docs/DEVELOPING.md, "The project's own tests").
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def per_file(report: Path) -> dict[str, tuple[float, int]]:
    """File (tests/test_x.py) -> (seconds, number of tests) from a JUnit XML report."""
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for case in ET.parse(report).getroot().iter("testcase"):
        name = case.get("file") or _file_of(case.get("classname") or "?")
        seconds[name] += float(case.get("time") or 0)
        counts[name] += 1
    return {name: (seconds[name], counts[name]) for name in seconds}


def _file_of(classname: str) -> str:
    """tests.test_x (or tests.test_x.TestClass) -> tests/test_x.py."""
    parts = classname.split(".")
    ends = [i for i, part in enumerate(parts) if part.startswith("test_") or part == "conftest"]
    return "/".join(parts[:ends[0] + 1]) + ".py" if ends else classname


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.suite", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("report", type=Path, help="pytest's --junitxml file")
    parser.add_argument("--workers", type=int, default=2, help="xdist workers (default 2)")
    parser.add_argument("--top", type=int, default=25, help="files listed (default 25)")
    args = parser.parse_args(argv)
    try:
        files = per_file(args.report)
    except (OSError, ET.ParseError) as error:
        print(f"bench.suite: {args.report}: {error}", file=sys.stderr)
        return 2
    total = sum(s for s, _ in files.values())
    ordered = sorted(files.items(), key=lambda item: -item[1][0])
    print(f"{'file':45} {'seconds':>9} {'share':>6} {'tests':>6}")
    for name, (seconds, count) in ordered[:args.top]:
        print(f"{name:45} {seconds:9.1f} {seconds / total if total else 0:6.1%} {count:6d}")
    longest = ordered[0][1][0] if ordered else 0.0
    print(f"{len(files)} files, {sum(c for _, c in files.values())} tests, {total:.1f} s summed;"
          f" on {args.workers} workers the suite takes at least"
          f" {max(longest, total / max(1, args.workers)):.1f} s (the longest file"
          f" {longest:.1f} s, the sum over {args.workers} {total / max(1, args.workers):.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
