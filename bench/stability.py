"""`python -m bench.stability`: does any verdict change between runs? Measured, not assumed.

Grades the reference solution and every mutant in tests/mutants with `--repeat N` (each check N
times on fresh databases) and reports, per target, the checks whose verdict changed (unstable)
and the wall time. Exit status 0 when nothing was unstable and every target graded.

    python -m bench.stability [--repeat 20] [--jobs 2] [--only NAME ...] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "tests" / "mutants"
SOLUTION = "solutions.queue"


def targets(only: list[str] | None) -> list[str]:
    found = [SOLUTION] + [str(p) for p in sorted(MUTANTS.glob("*.py"))
                          if not p.name.startswith("_")]
    return [t for t in found if not only or Path(t).stem in only or t in only]


def grade(target: str, repeat: int) -> dict:
    """One `python -m grader --repeat N` run of `target`: unstable ids, failed ids, seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        start = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "grader", "--impl", target, "--json", str(out),
             "--repeat", str(repeat), "--no-history"],  # no history left beside the mutants
            capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, cwd=ROOT)
        seconds = time.monotonic() - start
        if not out.exists():
            return {"target": target, "error": proc.stderr[-400:], "seconds": seconds}
        results = json.loads(out.read_text(encoding="utf-8"))
    tests = results["tests"]
    return {
        "target": target, "seconds": round(seconds, 1),
        "unstable": {t["extra_data"]["check_id"]: t["extra_data"]["failed_runs"]
                     for t in tests if t["extra_data"].get("unstable")},
        "failed": sorted(t["extra_data"]["check_id"] for t in tests if t["status"] != "passed"),
        "checks": len(tests),
    }


def _report(row: dict, repeat: int) -> bool:
    """Print one target's line; whether it was unstable or did not grade."""
    name = Path(row["target"]).stem if row["target"].endswith(".py") else row["target"]
    if "error" in row:
        print(f"ERROR     {name}: {row['error']}", flush=True)
        return True
    unstable = row["unstable"]
    verdict = "UNSTABLE " + json.dumps(unstable) if unstable else "stable"
    print(f"{verdict:<9} {name:<45} {len(row['failed']):>2}/{row['checks']} failed"
          f" x{repeat}  {row['seconds']:>6} s", flush=True)
    return bool(unstable)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.stability", description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--only", nargs="*", metavar="NAME")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args(argv)
    todo = targets(args.only)
    start = time.monotonic()
    rows, bad = [], 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        # Each target's line as soon as it is graded (a whole sweep takes the better part of an
        # hour): an interrupted sweep still says what it saw.
        for row in pool.map(lambda t: grade(t, args.repeat), todo):
            rows.append(row)
            bad += _report(row, args.repeat)
    total = time.monotonic() - start
    print(f"\n{len(rows)} targets, --repeat {args.repeat}: {bad} with unstable checks or errors;"
          f" {total:.0f} s in all with {args.jobs} jobs")
    if args.json:
        Path(args.json).write_text(json.dumps({"repeat": args.repeat, "rows": rows,
                                               "seconds": round(total, 1)}, indent=2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
