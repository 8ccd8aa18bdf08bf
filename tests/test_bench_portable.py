"""Issue 42, the project's own tools: bench/ and the suite's modules run on an interpreter without
the POSIX-only surface (the simulated Windows of tests/windowsish: no pty, os.wait4, fork, fcntl,
resource, termios, process groups), measure what that interpreter can and say what it cannot
("not measured here", never 0 and never a crash). Cheap on purpose: a few short interpreters, no
grade (`python -m bench.perf --portable` itself is a benchmark, run by hand: docs/DEVELOPING.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT, windowsish_env
from bench import measure, perf

#: The suite's modules that are not test files, and bench's, each imported under the simulated
#: Windows (IMPORT_ALL also imports every other bench/*.py and tests/*.py it finds: a module added
#: later is held to the rule without being listed here).
HELPERS = ["conftest", "cdp", "learning", "mdlinks", "pngread"]
BENCH = ["bench.measure", "bench.perf", "bench.batch", "bench.watch", "bench.grade",
         "bench.rederive", "bench.stability", "bench.suite"]

IMPORT_ALL = """
import importlib, json, pathlib, sys, traceback
sys.path.insert(0, "tests")
found = [f"bench.{p.stem}" for p in sorted(pathlib.Path("bench").glob("*.py"))
         if p.stem not in ("__init__", "__main__")]
found += [p.stem for p in sorted(pathlib.Path("tests").glob("*.py"))]
names = sys.argv[1:] + [n for n in found if n not in sys.argv[1:]]
failed = []
for name in names:
    try:
        importlib.import_module(name)
    except BaseException:
        failed.append(name + ": " + traceback.format_exc(limit=-1).strip().splitlines()[-1])
print(json.dumps({"names": names, "failed": failed}))
"""

#: Under the simulated Windows: what it took away, and one measured run of a tiny command that
#: prints a verdict line (as the grader's report does), asked for on a terminal.
MEASURE_ONE = """
import json, os, sys
from bench import measure
script = "print('Lease lab: header', flush=True); print('\\u2713 a check  some-id', flush=True)"
run = measure.run([sys.executable, "-c", script], ".", {**os.environ, "PYTHONIOENCODING": "utf-8"},
                  terminal=True, memory=True)
try:
    import pty
except ImportError:
    pty = None
run["took_away"] = [not hasattr(os, "wait4"), pty is None]
print(json.dumps(run))
"""


def _windowsish(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **windowsish_env()}, timeout=120)


def test_bench_perf_starts_without_the_posix_surface():
    out = _windowsish("-m", "bench.perf", "--help")
    assert out.returncode == 0, out.stderr
    assert "--portable" in out.stdout


def test_a_run_measured_without_pty_and_wait4_gives_wall_time_and_says_cpu_is_not_measured():
    out = _windowsish("-c", MEASURE_ONE)
    assert out.returncode == 0, out.stderr
    run = json.loads(out.stdout)
    assert run["took_away"] == [True, True]  # the fixture has neither, as Windows' Python
    assert run["code"] == 0 and run["stdout"].endswith("✓ a check  some-id\n")
    assert run["screen"] == "pipe"  # no pty: read through a pipe, the first verdict still timed
    assert 0 < run["first_output"] <= run["first_verdict"] <= run["wall"]
    assert run["cpu"] is None and run["maxrss_mb"] is None
    assert run["not_measured"] == {"cpu": measure.NOT_MEASURED,
                                   "maxrss_mb": measure.NOT_MEASURED}


def test_every_bench_module_and_every_suite_module_imports_without_the_posix_surface():
    out = _windowsish("-c", IMPORT_ALL, *HELPERS, *BENCH)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["failed"] == []
    assert set(HELPERS + BENCH) <= set(got["names"])
    assert len(got["names"]) > len(HELPERS + BENCH) + 50  # the test files were found too


def test_figures_not_measured_here_are_said_in_the_table_and_the_json():
    """What the interpreter could not measure (bench.measure.run's `not_measured`) is a row that
    says so, with no number and no ratio; the wall time beside it is still compared."""
    unmeasured = {"cpu": measure.NOT_MEASURED, "maxrss_mb": measure.NOT_MEASURED}
    raw = {"grade": {"cross_check": {"baseline": [{"bench_wall": 2.0, "code": 0,
                                                   "not_measured": "not measured here (x)"}]},
                     "runs": {name: [{"wall": wall, "cpu": None, "maxrss_mb": None,
                                      "first_verdict": wall, "screen": "pipe",
                                      "not_measured": unmeasured}]
                              for name, wall in (("baseline", 2.0), ("current", 3.0))}}}
    rows = {r["metric"]: r for r in perf.rows(raw)}
    assert rows["full grade: wall"]["ratio"] == 1.5
    assert "not_measured" not in rows["full grade: wall"]
    piped = rows["full grade: first verdict on a pipe (no pty)"]
    assert piped["ratio"] == 1.5
    for metric in ("full grade: CPU, whole tree", "full grade: largest process (ru_maxrss)"):
        row = rows[metric]
        assert row["not_measured"] == measure.NOT_MEASURED
        assert row["baseline"] is None and row["current"] is None and row["ratio"] is None
    machine = {**measure.machine(), "load": None, "system": "Windows"}
    text = perf.table({"designs": {"baseline": "a", "current": "b"}, "raw": raw,
                       "rows": list(rows.values()), "machine": machine})
    lines = {line.split("  ")[0]: line for line in text.splitlines()}
    for metric in ("full grade: CPU, whole tree", "full grade: largest process (ru_maxrss)"):
        assert "not measured here" in lines[metric]
    assert "not measured here" not in lines["full grade: wall"]
    assert "CPU cross-check, baseline: not measured here (x)" in text
    assert "load average before: not measured here" in text and ", Windows " in text
    assert json.loads(json.dumps(list(rows.values())))  # what --json writes: plain JSON


def test_on_posix_a_row_measured_has_no_such_note():
    raw = {"grade": {"cross_check": {}, "runs": {
        name: [{"wall": 1.0, "cpu": 0.5, "maxrss_mb": 30.0, "first_verdict": 0.5,
                "screen": "terminal"}] for name in ("baseline", "current")}}}
    rows = {r["metric"]: r for r in perf.rows(raw)}
    assert list(rows) == ["full grade: wall", "full grade: CPU, whole tree",
                          "full grade: first verdict on a terminal",
                          "full grade: largest process (ru_maxrss)"]
    assert all("not_measured" not in r and r["ratio"] == 1.0 for r in rows.values())
