"""`python -m bench.perf`: the grader of this checkout against a baseline revision's, A/B.

The baseline (`--baseline REV`, default DEFAULT_BASELINE) is materialised with `git archive`
into a temporary folder (removed at the end); each design runs from its own root (the working
directory, and PYTHONPATH so every process it starts imports that design's `grader`, not the
one the virtualenv's editable install points at), with this interpreter, PYTHONUNBUFFERED=1 and
NO_COLOR=1. Runs alternate A B B A so the machine's drift hits both designs alike. Parts:

  grade   `python -m grader --impl solutions.queue --no-history`: wall, CPU of the whole
          process tree (os.wait4), the largest single process's ru_maxrss, the seconds to the
          first check's line on stdout (on its terminal: the live line's first drawing)
          (`--runs` each). One untimed run of each design first
          warms the caches and cross-checks the CPU figure against /usr/bin/time.
  traced  one grade each under `strace -f`: processes, threads and programs started,
          fsync and fdatasync calls (tracing slows a grade: these runs are never timed)
  memory  the peak of the summed RSS and PSS of every process of a grade, sampled every 10 ms
          (`--memory-runs` each)
  repeat  `--repeat 10`: wall (`--repeat-runs` each), and the cost of one more repetition,
          (t(repeat 10) - t(grade)) / 9 from the medians
  batch   `python -m grader batch` of `--submissions` copies of the solution and of mutants
          (no hangs, no crashes), `--jobs 1` and `--jobs 2`: wall of each and the speed-up
  watch   `python -m grader watch`: seconds from a save to the first verdict and to the whole
          grade (`--saves` each, bench/watch.py)
  growth  (only with --memory-growth: slow) peak memory of `--repeat 50` against `--repeat 1`

The table: each metric's baseline and current median (and p90 where there are 3 or more
samples) and the ratio current / baseline of the medians; then the machine.

    python -m bench.perf [--baseline REV] [--runs 7] [--skip batch,watch,...] [--json PATH]
                         [--memory-growth]

`--portable` compares two ways of running this checkout instead: baseline = the Linux path
(fork, zygote, lanes), current = the portable path (spawned lanes and targets:
grader.harness.processes.portable, forced with LEASELAB_PORTABLE=1); issue 42's goal is a
full grade within 2x:

    python -m bench.perf --portable --skip traced,memory,repeat,batch,watch

On an interpreter without the Linux path (Windows, macOS: grader.harness.processes.portable.
fork_path_usable), both designs take the portable path, and the baseline's label says so.

What is measured depends on what this interpreter has (bench.measure): without `pty` the grade's
output is read through a pipe (the first verdict is then the report's first verdict line, and
its row says so); without `os.wait4` only wall time (the CPU and ru_maxrss rows say "not measured
here", in the table and the JSON), and no CPU cross-check; without /proc no memory figures;
without GNU time (/usr/bin/time -f) no cross-check, the warm-up grade alone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench import batch, measure, watch

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BASELINE = "44133b1"  # the design before the performance work (issue 17)
SOLUTION = "solutions.queue"
PARTS = ("grade", "traced", "memory", "repeat", "batch", "watch")
BATCH_TIMEOUT = 120.0  # per submission: a loaded machine must not turn a grade into a timeout
_SCORE = re.compile(r"Score: (\d+) / (\d+)")


@dataclass(frozen=True)
class Design:
    """One grader to measure: its name in the table, its root folder, what it is."""
    name: str
    root: Path
    label: str
    extra_env: tuple = ()  # (name, value) pairs on top (--portable: LEASELAB_PORTABLE=1)

    def env(self) -> dict:
        rest = os.environ.get("PYTHONPATH")
        path = os.pathsep.join([str(self.root), *([rest] if rest else [])])
        env = {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1",
               "LANG": "C.UTF-8"}
        env.pop("LC_ALL", None)  # the report in English: the table reads its score line
        # Bytecode caches as on a student's machine after a first run (the warm-up writes
        # them): else every process compiles the grader again and that is most of what is timed.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(dict(self.extra_env))
        return env

    def grade_command(self, *extra: str) -> list[str]:
        return [sys.executable, "-m", "grader", "--impl", SOLUTION, "--no-history", *extra]


def cannot_run(design: Design) -> str | None:
    """Why `design`'s grader cannot even start with this interpreter (its last error line: a
    module it imports that is not installed here), or None. An old design may need what this
    checkout no longer installs: 44133b1 graded through pytest-json-report."""
    proc = subprocess.run([sys.executable, "-c", "import grader.cli"], cwd=design.root,
                          env=design.env(), capture_output=True, text=True, timeout=120)
    if proc.returncode == 0:
        return None
    lines = proc.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit {proc.returncode}"


def log(message: str) -> None:
    print(f"[perf] {message}", file=sys.stderr, flush=True)


# -- the designs ---------------------------------------------------------------------------------
def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def describe(rev: str) -> str:
    return _git("log", "-1", "--format=%h %s", rev)[:72]


def resolve(rev: str) -> str:
    """The commit `rev` names, in full; ValueError if none."""
    try:
        return _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError:
        raise ValueError(f"no such revision: {rev}") from None


@contextlib.contextmanager
def materialise(rev: str):
    """The tree of revision `rev` in a temporary folder (`git archive`): yields a Design named
    "baseline"; the folder is removed afterwards."""
    sha = resolve(rev)
    folder = Path(tempfile.mkdtemp(prefix="leaselab-baseline-"))
    try:
        archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", "--format=tar", sha],
                                   stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(folder)], stdin=archive.stdout, check=True)
        archive.stdout.close()
        if archive.wait() != 0:
            raise RuntimeError(f"git archive {sha} failed")
        yield Design("baseline", folder, describe(sha))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def portable_pair():
    """`--portable`'s baseline: this checkout, the Linux path (where this interpreter has none,
    the portable path again: the label says so)."""
    path = ", Linux path" if linux_path_here() else \
        ", Linux path asked for (none here: portable path too)"
    yield Design("baseline", ROOT, current().label + path, (("LEASELAB_PORTABLE", "0"),))


def linux_path_here() -> bool:
    """Whether this interpreter can take this checkout's Linux path (fork, zygote, lanes)."""
    probe = ("from grader.harness.processes import portable\n"
             "print(portable.fork_path_usable())\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])})
    return proc.stdout.strip() == "True"


def portable_current() -> Design:
    """`--portable`'s current: this checkout, the portable path (spawned lanes and targets)."""
    return Design("current", ROOT, current().label + ", portable path",
                  (("LEASELAB_PORTABLE", "1"),))


def current() -> Design:
    changed = _git("status", "--porcelain", "--untracked-files=no")
    dirty = " (with uncommitted changes)" if changed else ""
    return Design("current", ROOT, describe("HEAD") + dirty)


def in_turn(designs: list[Design], runs: int):
    """(run index, design) in the order A B B A A B ...: both designs see the same drift."""
    for i in range(runs):
        for design in (designs if i % 2 == 0 else designs[::-1]):
            yield i, design


def _attempt(results: dict, design: Design, what: str, fn, *args, **kwargs):
    """fn's result appended to results[design.name]; an error is kept instead (a part the other
    design cannot run is left out of the ratios, not the whole benchmark)."""
    try:
        value = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - reported in the table and the JSON
        log(f"{what} of {design.name} failed: {exc!r}")
        value = {"error": repr(exc)}
    results.setdefault(design.name, []).append(value)
    return value


# -- the parts -----------------------------------------------------------------------------------
def _grade(design: Design, *extra: str, memory: bool = False) -> dict:
    # On a pseudo-terminal, as a student runs it: a grader that shows verdicts as they come in
    # is seen doing so (the score line is the same on a terminal).
    run = measure.run(design.grade_command(*extra), design.root, design.env(), memory=memory,
                      terminal=True)
    stdout = run.pop("stdout")
    score = _SCORE.search(stdout)
    run["score"] = f"{score.group(1)}/{score.group(2)}" if score else None
    if run["code"] != 0:
        raise RuntimeError(f"exit {run['code']}: {run['stderr_tail'][-300:]}")
    run.pop("stderr_tail")
    return run


TIME = "/usr/bin/time"


def gnu_time() -> bool:
    """Whether /usr/bin/time is GNU time (`-f FORMAT`: BSD's and macOS's have no -f)."""
    try:
        proc = subprocess.run([TIME, "-f", "TIME %e", sys.executable, "-c", ""],
                              capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return proc.returncode == 0 and "TIME " in proc.stderr


def cpu_cross_check(design: Design) -> dict:
    """One grade under /usr/bin/time (a warm-up run, not counted): the CPU time this benchmark
    measures for the tree against what time(1) says (user + system of its reaped children).
    Where this benchmark measures no CPU (no os.wait4) or there is no GNU time, the warm-up
    grade alone, and `not_measured` says why."""
    if not measure.TREE_USAGE or not gnu_time():
        run = measure.run(design.grade_command(), design.root, design.env())
        why = "no os.wait4" if not measure.TREE_USAGE else f"no GNU time at {TIME}"
        return {"bench_wall": run["wall"], "code": run["code"],
                "not_measured": f"{measure.NOT_MEASURED} ({why})"}
    time_cmd = [TIME, "-f", "TIME %e %U %S %M"]
    run = measure.run(time_cmd + design.grade_command(), design.root, design.env())
    line = next((l for l in run["stderr_tail"].splitlines() if l.startswith("TIME ")), None)
    if line is None:
        raise RuntimeError(f"no time(1) line: {run['stderr_tail'][-300:]}")
    wall, user, system, maxrss_kb = line.split()[1:]
    return {"bench_cpu": run["cpu"], "time_cpu": float(user) + float(system),
            "bench_wall": run["wall"], "time_wall": float(wall),
            "bench_maxrss_mb": run["maxrss_mb"], "time_maxrss_mb": int(maxrss_kb) / 1024,
            "code": run["code"]}


def part_grade(designs: list[Design], runs: int) -> dict:
    raw: dict = {"cross_check": {}, "runs": {}}
    for design in designs:
        log(f"warm-up and CPU cross-check: {design.name}")
        _attempt(raw["cross_check"], design, "cross-check", cpu_cross_check, design)
    for i, design in in_turn(designs, runs):
        run = _attempt(raw["runs"], design, "grade", _grade, design)
        log(f"grade {i + 1}/{runs} {design.name}: {run.get('wall', 0):.2f} s")
    return raw


def part_traced(designs: list[Design]) -> dict:
    raw: dict = {}
    for design in designs:
        log(f"traced grade: {design.name}")
        _attempt(raw, design, "traced grade", measure.traced, design.grade_command(),
                 design.root, design.env())
    return raw


def part_memory(designs: list[Design], runs: int, *extra: str) -> dict:
    raw: dict = {}
    for i, design in in_turn(designs, runs):
        run = _attempt(raw, design, "memory", _grade, design, *extra, memory=True)
        log(f"memory {i + 1}/{runs}{''.join(' ' + e for e in extra)} {design.name}: "
            f"{run.get('peak_pss_mb', 0):.0f} MB PSS")
    return raw


def part_repeat(designs: list[Design], runs: int, repeat: int = 10) -> dict:
    raw: dict = {}
    for i, design in in_turn(designs, runs):
        run = _attempt(raw, design, "repeat", _grade, design, "--repeat", str(repeat))
        log(f"--repeat {repeat} {i + 1}/{runs} {design.name}: {run.get('wall', 0):.1f} s")
    return {"repeat": repeat, "runs": raw}


def part_batch(designs: list[Design], submissions: int, runs: int = 1) -> dict:
    """Both designs grade the same class (this checkout's solution and mutants)."""
    raw: dict = {"submissions": submissions, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="leaselab-perf-batch-") as tmp:
        folder = Path(tmp) / "submissions"
        folder.mkdir()
        raw["kinds"] = dict(batch.make_class(folder, submissions, hangs=0, crashes=0))
        steps = [jobs for i in range(runs) for jobs in ((1, 2) if i % 2 == 0 else (2, 1))]
        for n, jobs in enumerate(steps):
            for design in (designs if n % 2 == 0 else designs[::-1]):  # A B, B A, ...
                out = Path(tmp) / f"out-{n}-{design.name}"
                run = _attempt(raw["runs"], design, "batch", _batch, design, folder, out, jobs)
                log(f"batch of {submissions} --jobs {jobs} {design.name}: "
                    f"{run.get('wall', 0):.1f} s")
    return raw


def _batch(design: Design, folder: Path, out: Path, jobs: int) -> dict:
    run = measure.run(batch.command(folder, out, jobs, BATCH_TIMEOUT), design.root,
                      design.env())
    if run["code"] != 0:
        raise RuntimeError(f"exit {run['code']}: {run['stderr_tail'][-300:]}")
    return {"jobs": jobs, "wall": run["wall"], "cpu": run["cpu"],
            "statuses": dict(batch.statuses(out)),
            **({"not_measured": run["not_measured"]} if "not_measured" in run else {})}


def part_watch(designs: list[Design], saves: int) -> dict:
    raw: dict = {}
    for _, design in in_turn(designs, 1):
        log(f"watch, {saves} saves: {design.name}")
        _attempt(raw, design, "watch", watch.save_to_verdict, saves, root=design.root,
                 env=design.env())
    return raw


# -- figures -------------------------------------------------------------------------------------
def _unmeasured(part_runs: dict, key: str) -> bool:
    """Whether some run of a part says `key` was not measured here (bench.measure)."""
    return any(key in r.get("not_measured", {}) for runs in part_runs.values()
               for r in runs or [])


def _values(runs: list[dict] | None, key: str, **where) -> list[float]:
    return [r[key] for r in runs or [] if "error" not in r and r.get(key) is not None
            and all(r.get(k) == v for k, v in where.items())]


def row(metric: str, unit: str, samples: dict[str, list[float]], p90: bool = True) -> dict:
    """One line of the table: each design's samples, median and p90 (3 or more samples), and
    the ratio current / baseline of the medians (None where either has no figure)."""
    out: dict = {"metric": metric, "unit": unit}
    for name in ("baseline", "current"):
        values = samples.get(name, [])
        out[name] = measure.median(values)
        out[f"{name}_p90"] = measure.percentile(values, 90) if p90 and len(values) >= 3 else None
        out[f"{name}_n"] = len(values)
    out["ratio"] = (out["current"] / out["baseline"]
                    if out["current"] is not None and out["baseline"] else None)
    return out


def rows(raw: dict) -> list[dict]:
    names = ("baseline", "current")
    table: list[dict] = []

    def add(metric, unit, part_runs, key, p90=True, **where):
        table.append(row(metric, unit, {n: _values(part_runs.get(n), key, **where) for n in names},
                         p90))
        unmeasured(part_runs, key)

    def unmeasured(part_runs, key):
        """The last row says "not measured here" if `key` was not (an empty row, not 0)."""
        last = table[-1]
        if last["baseline"] is None and last["current"] is None and \
                _unmeasured(part_runs, key):
            last["not_measured"] = measure.NOT_MEASURED

    if "grade" in raw:
        runs = raw["grade"]["runs"]
        add("full grade: wall", "s", runs, "wall")
        add("full grade: CPU, whole tree", "s", runs, "cpu")
        piped = any(r.get("screen") == "pipe" for rs in runs.values() for r in rs)
        add("full grade: first verdict on a pipe (no pty)" if piped else
            "full grade: first verdict on a terminal", "s", runs, "first_verdict")
        add("full grade: largest process (ru_maxrss)", "MB", runs, "maxrss_mb")
    if "memory" in raw:
        add("full grade: peak RSS, sum over processes", "MB", raw["memory"], "peak_rss_mb")
        add("full grade: peak PSS, sum over processes", "MB", raw["memory"], "peak_pss_mb")
    if "traced" in raw:
        for key, metric in (("processes", "processes started (with the grader)"),
                            ("threads", "threads started"), ("execs", "programs executed"),
                            ("fsync", "fsync calls"), ("fdatasync", "fdatasync calls")):
            add(f"full grade: {metric}", "", raw["traced"], key, p90=False)
    if "repeat" in raw:
        repeat = raw["repeat"]["repeat"]
        for key, what in (("wall", "wall"), ("cpu", "CPU")):
            add(f"--repeat {repeat}: {what}", "s", raw["repeat"]["runs"], key)
            if "grade" not in raw:
                continue
            each = {}
            for n in names:
                many = measure.median(_values(raw["repeat"]["runs"].get(n), key))
                one = measure.median(_values(raw["grade"]["runs"].get(n), key))
                known = many is not None and one is not None
                each[n] = [(many - one) / (repeat - 1)] if known else []
            table.append(row(f"--repeat: {what} of each repetition past the first", "s", each,
                             p90=False))
            unmeasured(raw["repeat"]["runs"], key)
    if "batch" in raw:
        count = raw["batch"]["submissions"]
        runs = raw["batch"]["runs"]
        add(f"batch of {count}: --jobs 1 wall", "s", runs, "wall", jobs=1)
        add(f"batch of {count}: --jobs 2 wall", "s", runs, "wall", jobs=2)
        add(f"batch of {count}: --jobs 1 CPU, whole tree", "s", runs, "cpu", jobs=1)
        add(f"batch of {count}: --jobs 2 CPU, whole tree", "s", runs, "cpu", jobs=2)
        speedup = {}
        for n in names:
            one = measure.median(_values(runs.get(n), "wall", jobs=1))
            two = measure.median(_values(runs.get(n), "wall", jobs=2))
            speedup[n] = [one / two] if one and two else []
        table.append(row(f"batch of {count}: speed-up, jobs 1 / jobs 2", "x", speedup, p90=False))
    if "watch" in raw:
        for key, metric in (("firsts", "save -> first verdict"), ("finals", "save -> whole grade")):
            samples = {n: [s for w in raw["watch"].get(n, []) if "error" not in w for s in w[key]]
                       for n in names}
            table.append(row(f"watch: {metric}", "s", samples))
    if "growth" in raw:
        for label, runs in (("--repeat 1", raw["growth"]["one"]),
                            ("--repeat 50", raw["growth"]["fifty"])):
            add(f"{label}: peak PSS, sum over processes", "MB", runs, "peak_pss_mb", p90=False)
            add(f"{label}: largest process (ru_maxrss)", "MB", runs, "maxrss_mb", p90=False)
        grow = {}
        for n in names:
            one = measure.median(_values(raw["growth"]["one"].get(n), "peak_pss_mb"))
            fifty = measure.median(_values(raw["growth"]["fifty"].get(n), "peak_pss_mb"))
            grow[n] = [fifty / one] if one and fifty else []
        table.append(row("memory growth: PSS peak, repeat 50 / repeat 1", "x", grow, p90=False))
    return table


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "" and value == int(value):  # a count
        return f"{value:.0f}"
    if unit in ("", "MB") and abs(value) >= 10:
        return f"{value:.0f}"
    return f"{value:.2f}" if unit != "s" or abs(value) < 100 else f"{value:.1f}"


def table(report: dict) -> str:
    head = (f"{'metric':<48} {'unit':<4} {'baseline':>9} {'p90':>7} {'current':>9} {'p90':>7}"
            f" {'ratio':>6}")
    lines = [f"baseline: {report['designs']['baseline']}",
             f"current:  {report['designs']['current']}", "", head, "-" * len(head)]
    for r in report["rows"]:
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        lines.append(f"{r['metric']:<48} {r['unit']:<4} {_number(r['baseline'], r['unit']):>9}"
                     f" {_number(r['baseline_p90'], r['unit']):>7}"
                     f" {_number(r['current'], r['unit']):>9}"
                     f" {_number(r['current_p90'], r['unit']):>7}"
                     f" {ratio:>6}")
        if r.get("not_measured"):  # this interpreter cannot give it: said, not shown as 0
            lines[-1] = (f"{r['metric']:<48} {r['unit']:<4} "
                         f"{r['not_measured'] + ' (both designs)':>{len(head) - 54}}")
    lines.append("ratio: current / baseline of the medians; p90 where there are 3 or more samples")
    raw = report["raw"]
    if "grade" in raw:
        for name, checks in raw["grade"]["cross_check"].items():
            for c in checks:
                if "not_measured" in c:
                    lines.append(f"CPU cross-check, {name}: {c['not_measured']}")
                elif "error" not in c:
                    lines.append(f"CPU cross-check, {name}: this benchmark {c['bench_cpu']:.2f} s,"
                                 f" /usr/bin/time {c['time_cpu']:.2f} s (one warm-up grade)")
        for name, runs in raw["grade"]["runs"].items():
            scores = sorted({r.get("score") or "?" for r in runs if "error" not in r})
            errors = sum("error" in r for r in runs)
            lines.append(f"verdicts, {name}: {', '.join(scores) or '-'} in {len(runs) - errors} "
                         f"grades" + (f", {errors} FAILED" if errors else ""))
    if "batch" in raw:
        for name, runs in raw["batch"]["runs"].items():
            statuses = sorted({", ".join(f"{n} {s}" for s, n in sorted(r["statuses"].items()))
                               for r in runs if "statuses" in r})
            lines.append(f"batch gradebooks, {name}: {'; '.join(statuses) or '-'}")
    if "watch" in raw:
        for name, w in raw["watch"].items():
            if w and "error" not in w[0]:
                lines.append(f"watch, {name}: right verdicts: "
                             f"{'yes' if w[0]['right_verdicts'] else 'NO'}")
    errors = [f"{part}: {name}" for part, value in raw.items() for name, runs in
              _design_runs(value) if any("error" in r for r in runs)]
    if errors:
        lines.append("errors (left out of the figures): " + "; ".join(errors))
    m, after = report["machine"], report.get("machine_after", {})
    lines += ["", f"machine: {m['nproc']} cores ({m['cpu_model']}), {m.get('system', 'Linux')} "
                  f"{m['kernel']}, Python {m['python']}; {m['date']}",
              f"load average before: {_load(m)}" + (f", after: {_load(after)}" if after else "")]
    return "\n".join(lines)


def _load(machine: dict) -> str:
    load = machine.get("load")
    return " ".join(map(str, load)) if load else measure.NOT_MEASURED


def _design_runs(value):
    """(design, runs) pairs of one part's raw figures, whatever its shape."""
    if isinstance(value, dict):
        for key, sub in value.items():
            if key in ("baseline", "current") and isinstance(sub, list):
                yield key, sub
            elif isinstance(sub, dict):
                yield from _design_runs(sub)


# -- the command ---------------------------------------------------------------------------------
def measure_all(designs: list[Design], args) -> dict:
    raw: dict = {}
    skip = set(args.skip)
    if "grade" not in skip:
        raw["grade"] = part_grade(designs, args.runs)
    if "traced" not in skip:
        if measure.strace_available():
            raw["traced"] = part_traced(designs)
        else:
            log(f"no {measure.STRACE}: processes and fsyncs not counted")
    if "memory" not in skip:
        raw["memory"] = part_memory(designs, args.memory_runs)
    if "repeat" not in skip:
        raw["repeat"] = part_repeat(designs, args.repeat_runs)
    if "batch" not in skip:
        raw["batch"] = part_batch(designs, args.submissions)
    if "watch" not in skip:
        raw["watch"] = part_watch(designs, args.saves)
    if args.memory_growth:
        raw["growth"] = {"one": part_memory(designs, 1),
                         "fifty": part_memory(designs, 1, "--repeat", "50")}
    return raw


def _parts(text: str) -> list[str]:
    chosen = [p.strip() for p in text.split(",") if p.strip()]
    unknown = sorted(set(chosen) - set(PARTS))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown part(s) {', '.join(unknown)}: "
                                         f"choose from {', '.join(PARTS)}")
    return chosen


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.perf", description=__doc__.split("\n")[0])
    p.add_argument("--baseline", default=DEFAULT_BASELINE, metavar="REV",
                   help=f"the git revision to compare with (default {DEFAULT_BASELINE})")
    p.add_argument("--runs", type=_positive, default=7, help="timed full grades each (default 7)")
    p.add_argument("--memory-runs", type=_positive, default=2,
                   help="memory-sampled full grades each (default 2)")
    p.add_argument("--repeat-runs", type=_positive, default=1,
                   help="--repeat 10 grades each (default 1)")
    p.add_argument("--submissions", type=_positive, default=16,
                   help="the batch's class size (default 16)")
    p.add_argument("--saves", type=_positive, default=4, help="saves under watch each (default 4)")
    p.add_argument("--skip", type=_parts, default=[], metavar="PART,...",
                   help=f"parts to leave out: {', '.join(PARTS)}")
    p.add_argument("--memory-growth", action="store_true",
                   help="also peak memory of --repeat 50 against --repeat 1 (slow)")
    p.add_argument("--json", metavar="PATH", help="save every raw figure as JSON")
    p.add_argument("--portable", action="store_true",
                   help="this checkout's Linux path (baseline) against its portable path"
                        " (current) instead of a baseline revision")
    args = p.parse_args(argv)
    try:
        resolve(args.baseline)
    except ValueError as exc:
        p.error(str(exc))
    machine = measure.machine()
    with (portable_pair() if args.portable else materialise(args.baseline)) as old:
        designs = [old, portable_current() if args.portable else current()]
        log(f"baseline {old.label} in {old.root}")
        for design in designs:  # one line now rather than every figure failing one by one
            why = cannot_run(design)
            if why:
                print(f"bench.perf: the {design.name} ({design.label[:7]}) cannot run with this"
                      f" interpreter: {why} (pip install what it imports)", file=sys.stderr)
                return 2
        raw = measure_all(designs, args)
    report = {"designs": {d.name: d.label for d in designs},
              "baseline_rev": "HEAD, the Linux path" if args.portable else args.baseline,
              "options": {k: v for k, v in vars(args).items() if k != "json"},
              "machine": machine, "machine_after": measure.machine(), "raw": raw,
              "rows": rows(raw)}
    print(table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    failed = any("error" in r for _, runs in _design_runs(raw) for r in runs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
