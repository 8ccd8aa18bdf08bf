"""`python -m bench.grade`: stability and speed of the grader, measured instead of assumed.

1. Full grades: N consecutive `python -m grader --impl T --json ...` runs of the reference
   solution and of every race/crash/lock mutant in tests/mutants (picked by name prefix; none is
   fine). The solution must pass every run and each mutant fail every run. With --load the same
   runs are repeated while one CPU-burning process per core keeps the machine busy; the table
   shows pass/fail counts, median and p90 wall time, and the loaded/unloaded ratio.
2. Naive vs forced race: M trials of two spawned processes claiming one pending job with the
   read-before-BEGIN mutant, once released at the same instant with no forced interleaving
   (naive) and once through every schedule that can matter (the race check's way,
   grader.harness.judge.explore): how often each catches the bug.

3. With --launchers N: N full grades of the solution with target processes forked from one
   prepared interpreter (the zygote) against N with a fresh interpreter each, alternating:
   medians of wall and CPU time and the pairwise ratio.

4. With --watch N: N saves into a temporary copy watched by `python -m grader watch`,
   alternating a mutant and the solution: the median and p90 seconds from a save to the first
   verdict redrawn and to the whole grade's (bench/watch.py).

    python -m bench.grade [--runs 50] [--load] [--trials 20] [--launchers N] [--json PATH]
                          [--watch N] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from lab import store

from bench import measure, watch
from bench.measure import percentile
from grader.harness.judge import children
from grader.harness.processes.launch import LAUNCH_ENV
from grader.harness.judge.explore import Schedule, explore

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "tests" / "mutants"
PREFIXES = ("race_", "crash_", "lock_")
SOLUTION = "solutions.queue"
RACE_MUTANT = MUTANTS / "race_read_before_begin.py"
GRADE_TIMEOUT = 300.0


def targets(only: list[str] | None = None) -> list[str]:
    """The solution and the race/crash/lock mutants, as --impl values."""
    found = [SOLUTION] + [str(p) for p in sorted(MUTANTS.glob("*.py"))
                          if p.name.startswith(PREFIXES)]
    if only:
        found = [t for t in found if name(t) in only or t in only]
    return found


def name(target: str) -> str:
    return Path(target).stem if target.endswith(".py") else target


# -- full grades ---------------------------------------------------------------------------------
def grade_once(target: str, workdir: str, launch: str | None = None) -> dict:
    """One full grade in a child process: wall time, CPU time (it and its children), exit
    status, the checks that failed. `launch`: how target processes start (LEASELAB_TARGET_LAUNCH:
    "zygote", forked from one prepared interpreter, or "spawn", a fresh interpreter each)."""
    out = Path(workdir) / "results.json"
    out.unlink(missing_ok=True)
    env = {**os.environ, "NO_COLOR": "1", **({LAUNCH_ENV: launch} if launch else {})}
    run = measure.run([sys.executable, "-m", "grader", "--impl", target, "--json", str(out)],
                      ROOT, env, timeout=GRADE_TIMEOUT)
    failed = []
    if out.exists():
        results = json.loads(out.read_text(encoding="utf-8"))
        failed = [t["extra_data"]["check_id"] for t in results["tests"]
                  if t["status"] != "passed"]
    return {"wall": run["wall"], "cpu": run["cpu"], "code": run["code"], "failed": failed}


def launcher_comparison(runs: int, target: str = SOLUTION) -> dict:
    """Full grades of `target` with target processes forked from the zygote and spawned fresh
    (the design before it), alternating A B A B so the machine's drift hits both: medians of
    wall and CPU time, and the median of the pairwise ratios spawn / zygote."""
    pairs = []
    with tempfile.TemporaryDirectory(prefix="leaselab-bench-") as workdir:
        for _ in range(runs):
            pairs.append((grade_once(target, workdir, "zygote"),
                          grade_once(target, workdir, "spawn")))
    figures = {}
    for i, how in enumerate(("zygote", "spawn")):
        figures[how] = {key: statistics.median(p[i][key] for p in pairs) for key in ("wall", "cpu")}
        figures[how]["same_verdicts"] = all(p[i]["failed"] == pairs[0][0]["failed"] for p in pairs)
    figures["ratio_wall"] = statistics.median(s["wall"] / z["wall"] for z, s in pairs)
    figures["ratio_cpu"] = statistics.median(s["cpu"] / z["cpu"] for z, s in pairs if z["cpu"])
    return {"target": name(target), "runs": runs, **figures}


def grade_runs(target: str, runs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="leaselab-bench-") as workdir:
        grades = [grade_once(target, workdir) for _ in range(runs)]
    walls = [g["wall"] for g in grades]
    passed = sum(g["code"] == 0 for g in grades)
    failed_checks = sorted({c for g in grades for c in g["failed"]})
    return {"runs": runs, "passed": passed, "failed": sum(g["code"] == 1 for g in grades),
            "other": runs - passed - sum(g["code"] == 1 for g in grades),
            "median": statistics.median(walls), "p90": percentile(walls, 90),
            "failed_checks": failed_checks, "walls": [round(w, 3) for w in walls]}


class Load:
    """One CPU-burning process per core for the duration of a `with` block."""

    def __init__(self, count: int | None = None):
        self.count = count or os.cpu_count() or 2
        self.procs: list[subprocess.Popen] = []

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                      for _ in range(self.count)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


# -- naive vs forced race ------------------------------------------------------------------------
def race_trial(target: str, workdir: Path, forced: bool) -> bool:
    """Two spawned claimers over one pending job; True if the trial caught a bug (not exactly
    one Claim and one None, or a row that does not show exactly one claim). Naive: both start at
    the same instant and run freely (a schedule given up at once); forced: every schedule that
    can matter, until one catches it."""
    if forced:
        return explore(lambda prefix, asleep: _race_run(target, workdir, Schedule(prefix, asleep))
                       ).found is not None
    return _race_run(target, workdir, Schedule(max_steps=0))[1]


def _race_run(target: str, workdir: Path, policy: Schedule) -> tuple[Schedule, bool, bool]:
    path = workdir / "race.db"
    for suffix in ("", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    conn = store.connect(path)
    store.init_db(conn)
    job = store.enqueue(conn, 5, 1_000_000)
    claimers = [children.spawn(target, path, actor, 0, 1000) for actor in ("A", "B")]
    try:
        children.race(claimers, policy, timeout=15.0)
    finally:
        children.close(claimers)
    kinds = sorted(c.outcome["kind"] for c in claimers)
    row = store.get_job(conn, job)
    conn.close()
    caught = kinds != ["claim", "none"] or row["token"] != 1
    return policy, caught, caught


def race_comparison(trials: int, target: str = str(RACE_MUTANT)) -> dict:
    with tempfile.TemporaryDirectory(prefix="leaselab-race-") as workdir:
        naive = sum(race_trial(target, Path(workdir), forced=False) for _ in range(trials))
        forced = sum(race_trial(target, Path(workdir), forced=True) for _ in range(trials))
    return {"target": name(target), "trials": trials, "naive_caught": naive,
            "forced_caught": forced}


# -- report --------------------------------------------------------------------------------------
def verdict(target: str, figures: dict) -> str:
    want_pass = target == SOLUTION
    good = figures["passed"] if want_pass else figures["failed"]
    return "stable" if good == figures["runs"] else "UNSTABLE"


def table(report: dict) -> str:
    loaded = "loaded" in report
    head = f"{'target':<28} {'runs':>4} {'pass':>4} {'fail':>4} {'median s':>8} {'p90 s':>6}"
    if loaded:
        head += f"  | {'pass':>4} {'fail':>4} {'median s':>8} {'p90 s':>6} {'ratio':>5}"
    lines = ["Full grades" + (" (left: no extra load, right: one CPU burner per core)" if loaded else ""),
             head, "-" * len(head)]
    for target, u in report["unloaded"].items():
        line = (f"{name(target):<28} {u['runs']:>4} {u['passed']:>4} {u['failed']:>4}"
                f" {u['median']:>8.2f} {u['p90']:>6.2f}")
        marks = [verdict(target, u)]
        if loaded:
            lo = report["loaded"][target]
            line += (f"  | {lo['passed']:>4} {lo['failed']:>4} {lo['median']:>8.2f}"
                     f" {lo['p90']:>6.2f} {lo['median'] / u['median']:>5.2f}")
            marks.append(verdict(target, lo))
        line += "  " + ("stable" if set(marks) == {"stable"} else "UNSTABLE")
        if target != SOLUTION:
            line += f"  fails: {', '.join(u['failed_checks']) or '-'}"
        lines.append(line)
    launchers = report.get("launchers")
    if launchers:
        z, sp = launchers["zygote"], launchers["spawn"]
        lines += ["", f"Target processes, {launchers['runs']} full grades of "
                      f"{launchers['target']} each way (medians):",
                  f"  forked from the zygote: wall {z['wall']:.2f} s, CPU {z['cpu']:.2f} s",
                  f"  spawned fresh (before): wall {sp['wall']:.2f} s, CPU {sp['cpu']:.2f} s",
                  f"  spawn / zygote: wall {launchers['ratio_wall']:.2f}x, "
                  f"CPU {launchers['ratio_cpu']:.2f}x; same verdicts: "
                  f"{'yes' if z['same_verdicts'] and sp['same_verdicts'] else 'NO'}"]
    if report.get("watch"):
        lines += [""] + watch.lines(report["watch"])
    race = report.get("race")
    if race:
        lines += ["", f"Race test on {race['target']}, {race['trials']} trials each:",
                  f"  naive (same instant, no forced interleaving): caught "
                  f"{race['naive_caught']}/{race['trials']}",
                  f"  forced (every schedule through the trace callback): caught "
                  f"{race['forced_caught']}/{race['trials']}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.grade", description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=50, help="full grades per target (default 50)")
    p.add_argument("--load", action="store_true", help="also run with every core kept busy")
    p.add_argument("--trials", type=int, default=20,
                   help="naive and forced race trials each (default 20; 0 to skip)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="only these targets (by name)")
    p.add_argument("--json", metavar="PATH", help="save the figures as JSON")
    p.add_argument("--launchers", type=int, default=0, metavar="N",
                   help="also N full grades of the solution with target processes forked from "
                        "the zygote and N spawned fresh, alternating (default 0: skip)")
    p.add_argument("--watch", type=int, default=0, metavar="N",
                   help="also N saves under `python -m grader watch`: seconds from a save to "
                        "the first verdict and to the whole grade (default 0: skip)")
    args = p.parse_args(argv)
    report: dict = {"cpus": os.cpu_count(), "runs": args.runs}
    chosen = targets(args.only)
    report["unloaded"] = {t: grade_runs(t, args.runs) for t in chosen}
    if args.load:
        with Load():
            report["loaded"] = {t: grade_runs(t, args.runs) for t in chosen}
    if args.launchers > 0:
        report["launchers"] = launcher_comparison(args.launchers)
    if args.watch > 0:
        report["watch"] = watch.save_to_verdict(args.watch)
    if args.trials > 0 and RACE_MUTANT.exists():
        report["race"] = race_comparison(args.trials)
    print(table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    stable = all(verdict(t, f) == "stable" for phase in ("unloaded", "loaded")
                 for t, f in report.get(phase, {}).items())
    stable = stable and report.get("watch", {}).get("right_verdicts", True)
    return 0 if stable else 1


if __name__ == "__main__":
    sys.exit(main())
