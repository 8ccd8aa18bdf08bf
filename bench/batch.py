"""Benchmark `python -m grader batch`: a class of N generated submissions, graded with
`--jobs J` and with `--jobs 1`; prints both wall-clock times and the speed-up.

    python bench/batch.py [--count 200] [--jobs 2] [--hangs 3] [--crashes 3] [--timeout 10]

The class: copies of solutions/queue.py and of every mutant in tests/mutants/ (each a folder with
the mutant as queue.py and its helpers _*.py), plus `--hangs` submissions whose claim spins
forever (each costs the per-submission --timeout) and `--crashes` that os._exit at import.
Instructor-side only: it reads solutions/ and tests/, which the student export leaves out.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "tests" / "mutants"
HANG = ("def claim(conn, owner, now, lease_ms):\n    while True:\n        pass\n\n"
        "def finish(conn, claim, now):\n    return False\n\n"
        "def work_once(conn, owner, send, clock, lease_ms):\n    return None\n")
CRASH = "import os\nos._exit(3)\n"


def make_class(folder: Path, count: int, hangs: int, crashes: int) -> Counter:
    """Write `count` submissions into `folder`; return how many of each kind."""
    mutants = sorted(p for p in MUTANTS.glob("*.py") if not p.name.startswith("_"))
    kinds: Counter = Counter()
    for i in range(count):
        name = f"s{i:03d}"
        if i < hangs:
            (folder / f"{name}.py").write_text(HANG)
            kinds["hang"] += 1
        elif i < hangs + crashes:
            (folder / f"{name}.py").write_text(CRASH)
            kinds["crash"] += 1
        elif mutants and i % 2:
            mutant = mutants[(i // 2) % len(mutants)]
            (folder / name).mkdir()
            shutil.copy(mutant, folder / name / "queue.py")
            for helper in MUTANTS.glob("_*.py"):  # the mutants' shared parts
                shutil.copy(helper, folder / name / helper.name)
            kinds["mutant"] += 1
        else:
            shutil.copy(ROOT / "solutions" / "queue.py", folder / f"{name}.py")
            kinds["solution"] += 1
    return kinds


def command(folder: Path, out: Path, jobs: int, timeout: float) -> list[str]:
    """`python -m grader batch` of `folder` into `out` (run it from a checkout's root)."""
    return [sys.executable, "-m", "grader", "batch", str(folder), "--jobs", str(jobs),
            "--out", str(out), "--timeout", f"{timeout:g}", "--lang", "en", "--quiet"]


def statuses(out: Path) -> Counter:
    """The statuses in a batch's gradebook."""
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        return Counter(row["status"] for row in csv.DictReader(f))


def run_batch(folder: Path, out: Path, jobs: int, timeout: float) -> tuple[float, Counter]:
    """Wall-clock seconds of one `batch` run, and the statuses in its gradebook."""
    start, cpu = time.monotonic(), _children_cpu()
    subprocess.run(command(folder, out, jobs, timeout), cwd=ROOT, check=True)
    elapsed = time.monotonic() - start
    # CPU seconds of the batch and every process under it (each reaped by an ancestor that
    # was itself reaped): less noisy than the wall time on a machine shared with other work.
    cpu_seconds[jobs] = None if cpu is None else _children_cpu() - cpu
    return elapsed, statuses(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=200)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--hangs", type=int, default=3)
    p.add_argument("--crashes", type=int, default=3)
    p.add_argument("--timeout", type=float, default=10.0, help="per-submission limit (s)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="leaselab-bench-") as tmp:
        folder = Path(tmp) / "submissions"
        folder.mkdir()
        kinds = make_class(folder, args.count, args.hangs, args.crashes)
        print(f"{args.count} submissions: " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
        print(f"cpus: {os.cpu_count()}  load average before: {_load()}")
        parallel, statuses = run_batch(folder, Path(tmp) / "parallel", args.jobs, args.timeout)
        print(f"--jobs {args.jobs}: {parallel:.1f} s, {_cpu(cpu_seconds[args.jobs])}"
              f"  ({_counts(statuses)})  load: {_load()}")
        serial, statuses = run_batch(folder, Path(tmp) / "serial", 1, args.timeout)
        print(f"--jobs 1: {serial:.1f} s, {_cpu(cpu_seconds[1])}  ({_counts(statuses)})"
              f"  load: {_load()}")
    print(f"speed-up: {serial / parallel:.2f}x")
    return 0


cpu_seconds: dict[int, float | None] = {}


def _children_cpu() -> float | None:
    """CPU seconds of this process's reaped children; None without `resource` (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu(seconds: float | None) -> str:
    return "CPU not measured here" if seconds is None else f"{seconds:.1f} s CPU"


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):  # Windows has no load average
        return "not measured here"


def _counts(statuses: Counter) -> str:
    return ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))


if __name__ == "__main__":
    sys.exit(main())
