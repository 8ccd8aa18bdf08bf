"""bench/perf.py, the A/B benchmark against a baseline revision: its pieces on tiny settings.
Only the structure of what it returns is asserted (metrics present, ratios from the medians,
the baseline materialised and removed), never a timing."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

from bench import measure, perf

STRACE_LINES = """\
100 execve("/usr/bin/python", ["python", "-m", "grader"], 0x7ffe /* 37 vars */) = 0
100 vfork( <unfinished ...>
101 execve("/usr/bin/python", ["python", "-m", "grader.harness.target.zygote_server"], 0x55 /* 42 vars */ <unfinished ...>
100 <... vfork resumed>)              = 101
101 <... execve resumed>)             = 0
100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 102
101 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, exit_signal=0} => {parent_tid=[103]}, 88) = 103
102 fdatasync(3 <unfinished ...>
101 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD <unfinished ...>
102 <... fdatasync resumed>)          = 0
101 <... clone resumed>, child_tidptr=0x7f) = 104
104 fsync(4)                          = 0
104 fdatasync(4)                      = 0
100 clone(child_stack=NULL, flags=SIGCHLD) = -1 EAGAIN (Resource temporarily unavailable)
102 execve("/nope", ["/nope"], 0x55 /* 1 var */) = -1 ENOENT (No such file or directory)
104 +++ killed by SIGKILL +++
100 wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], WNOHANG, NULL) = 102
"""


def test_strace_counts_forks_threads_execs_and_syncs():
    counts = measure.strace_counts(STRACE_LINES.splitlines(keepends=True))
    # the command itself, the vfork, two clones (one resumed); a failed clone is no process
    assert counts == {"processes": 4, "threads": 1, "execs": 2, "fsync": 1, "fdatasync": 2}


def test_verdict_lines():
    assert measure.is_verdict("✓ Finishing before lease_until is accepted  finish-before-expiry")
    assert measure.is_verdict("\x1b[31m✗\x1b[0m A check")
    assert measure.is_verdict("  ⏱ hung")
    assert not measure.is_verdict("Lease lab — grading solutions/queue.py")
    assert not measure.is_verdict("Score: 100 / 100")
    assert not measure.is_verdict("")


def test_a_live_line_is_a_verdict_on_the_screen_before_anything_ends_it():
    """The first verdict on a terminal is the live line's first drawing ("\\r\\033[K✓ ...",
    a carriage return read as a line's end), not the next drawing that ends it; a pipe's
    text counts once its line is complete."""
    drawn = "\r\033[K✓ finish-before-expiry  1/45".encode().replace(b"\r", b"\n")
    *complete, pending = drawn.split(b"\n")
    assert measure.shows_verdict(complete, pending, terminal=True)
    assert not measure.shows_verdict(complete, pending, terminal=False)
    assert measure.shows_verdict([b"\xe2\x9c\x93 a check"], b"", terminal=False)
    assert not measure.shows_verdict([b"Lease lab"], b"Score: 1", terminal=True)


def test_one_measured_run_with_its_tree_sampled(tmp_path):
    """A parent printing a header then a verdict, and a child holding 40 MB: the run's figures
    are all there, and the sampler saw both processes."""
    script = ("import os, sys, time\n"
              "print('Lease lab: header', flush=True)\n"
              "pid = os.fork()\n"
              "if pid == 0:\n"
              "    block = bytearray(40 * 1024 * 1024)\n"
              "    time.sleep(0.3)\n"
              "    os._exit(0)\n"
              "os.waitpid(pid, 0)\n"
              "print('✓ a check  some-id', flush=True)\n")
    run = measure.run([sys.executable, "-c", script], tmp_path, {"PYTHONIOENCODING": "utf-8"},
                      memory=True)
    assert run["code"] == 0 and run["stdout"].endswith("✓ a check  some-id\n")
    assert run["first_output"] is not None and run["first_verdict"] is not None
    assert run["first_output"] <= run["first_verdict"] <= run["wall"]
    assert run["cpu"] > 0 and run["maxrss_mb"] >= 40  # the child's, reaped by the parent
    assert run["processes_seen"] >= 2 and run["samples"] >= 1
    assert run["peak_rss_mb"] >= 40 and run["peak_pss_mb"] > 0


def test_the_baseline_is_materialised_and_removed():
    with perf.materialise("HEAD") as design:
        root = design.root
        assert design.name == "baseline" and root != perf.ROOT
        assert (root / "grader" / "__init__.py").exists()
        assert (root / "solutions" / "queue.py").exists()
        assert design.env()["PYTHONPATH"].split(":")[0] == str(root)
        assert design.grade_command()[1:] == ["-m", "grader", "--impl", "solutions.queue",
                                              "--no-history"]
    assert not root.exists()
    with pytest.raises(ValueError):
        perf.resolve("no-such-revision-anywhere")


def _runs(**figures):
    """Runs of each design: {"baseline": [{key: v}, ...], "current": [...]} from lists."""
    out = {}
    for i, name in enumerate(("baseline", "current")):
        count = len(next(iter(figures.values()))[i])
        out[name] = [{k: v[i][j] for k, v in figures.items()} for j in range(count)]
    return out


def test_rows_take_ratios_from_the_medians():
    raw = {
        "grade": {"cross_check": {}, "runs": _runs(wall=([2.0, 4.0, 3.0], [1.0, 9.0, 1.5]),
                                                   cpu=([1.0, 1.0, 1.0], [2.0, 2.0, 2.0]),
                                                   first_verdict=([2.0, 4.0, 3.0], [0.5, 0.5, 0.5]),
                                                   maxrss_mb=([40, 40, 40], [30, 30, 30]))},
        "memory": _runs(peak_rss_mb=([100, 120], [100, 100]), peak_pss_mb=([60, 60], [30, 30])),
        "traced": _runs(processes=([90], [45]), threads=([16], [16]), execs=([2], [2]),
                        fsync=([0], [0]), fdatasync=([936], [468])),
        "repeat": {"repeat": 10, "runs": _runs(wall=([30.0], [10.0]), cpu=([10.0], [20.0]))},
        "batch": {"submissions": 16, "runs": _runs(jobs=([1, 2], [1, 2]),
                                                   wall=([40.0, 20.0], [20.0, 20.0]),
                                                   cpu=([30.0, 31.0], [30.0, 31.0]),
                                                   statuses=([{"graded": 16}] * 2,
                                                             [{"graded": 16}] * 2))},
        "watch": {"baseline": [{"firsts": [3.0, 5.0], "finals": [4.0, 6.0],
                                "right_verdicts": True}],
                  "current": [{"error": "RuntimeError('no watch')"}]},
        "growth": {"one": _runs(peak_pss_mb=([60], [40]), maxrss_mb=([38], [30])),
                   "fifty": _runs(peak_pss_mb=([66], [40]), maxrss_mb=([40], [30]))},
    }
    raw["grade"]["runs"]["current"].append({"error": "RuntimeError('exit 1')"})  # left out
    rows = {r["metric"]: r for r in perf.rows(raw)}
    wall = rows["full grade: wall"]
    assert (wall["baseline"], wall["current"], wall["current_n"]) == (3.0, 1.5, 3)
    assert wall["ratio"] == pytest.approx(0.5) and wall["baseline_p90"] is not None
    for row in rows.values():
        if row["ratio"] is not None:
            assert row["ratio"] == pytest.approx(row["current"] / row["baseline"])
    assert rows["full grade: CPU, whole tree"]["ratio"] == pytest.approx(2.0)
    assert rows["full grade: first verdict on a terminal"]["current"] == 0.5
    assert rows["full grade: peak PSS, sum over processes"]["ratio"] == pytest.approx(0.5)
    assert rows["full grade: processes started (with the grader)"]["ratio"] == pytest.approx(0.5)
    assert rows["full grade: fsync calls"]["ratio"] is None  # 0 in the baseline: no ratio
    each = rows["--repeat: wall of each repetition past the first"]
    assert each["baseline"] == pytest.approx((30.0 - 3.0) / 9)
    assert each["current"] == pytest.approx((10.0 - 1.5) / 9)
    each = rows["--repeat: CPU of each repetition past the first"]
    assert (each["baseline"], each["current"]) == (pytest.approx(1.0), pytest.approx(2.0))
    assert rows["batch of 16: --jobs 2 CPU, whole tree"]["ratio"] == pytest.approx(1.0)
    speedup = rows["batch of 16: speed-up, jobs 1 / jobs 2"]
    assert (speedup["baseline"], speedup["current"]) == (2.0, 1.0)
    watched = rows["watch: save -> first verdict"]
    assert watched["baseline"] == 4.0 and watched["current"] is None and watched["ratio"] is None
    growth = rows["memory growth: PSS peak, repeat 50 / repeat 1"]
    assert (growth["baseline"], growth["current"]) == (pytest.approx(1.1), 1.0)
    assert rows["--repeat 50: peak PSS, sum over processes"]["baseline"] == 66
    report = {"designs": {"baseline": "old", "current": "new"}, "raw": raw,
              "rows": list(rows.values()), "machine": measure.machine()}
    text = perf.table(report)
    assert "full grade: wall" in text and "machine: " in text
    assert "errors (left out of the figures)" in text
    assert "batch gradebooks, current: 16 graded" in text


def test_a_tiny_run_end_to_end(tmp_path, capsys):
    """Baseline HEAD against this checkout: one grade each (and one traced), no other part."""
    before = set(Path(tempfile.gettempdir()).glob("leaselab-baseline-*"))
    out = tmp_path / "perf.json"
    code = perf.main(["--baseline", "HEAD", "--runs", "1",
                      "--skip", "memory,repeat,batch,watch", "--json", str(out)])
    assert code == 0
    assert set(Path(tempfile.gettempdir()).glob("leaselab-baseline-*")) == before
    report = json.loads(out.read_text())
    assert set(report["designs"]) == {"baseline", "current"}
    assert {"nproc", "cpu_model", "load", "python"} <= set(report["machine"])
    metrics = {r["metric"]: r for r in report["rows"]}
    wanted = ["full grade: wall", "full grade: CPU, whole tree",
              "full grade: first verdict on a terminal", "full grade: largest process (ru_maxrss)"]
    if measure.strace_available():
        wanted += ["full grade: processes started (with the grader)", "full grade: fdatasync calls"]
    for metric in wanted:
        row = metrics[metric]
        assert row["baseline"] is not None and row["current"] is not None
        assert row["ratio"] == pytest.approx(row["current"] / row["baseline"])
    for name in ("baseline", "current"):
        (check,) = report["raw"]["grade"]["cross_check"][name]
        assert check["bench_cpu"] > 0 and check["time_cpu"] > 0
        (run,) = report["raw"]["grade"]["runs"][name]
        assert run["score"] == "100/100"
    printed = capsys.readouterr().out
    assert "full grade: wall" in printed and "ratio" in printed


def test_a_baseline_that_cannot_start_here_is_one_line_and_exit_2(capsys, monkeypatch):
    """A baseline whose grader imports what this interpreter lacks (44133b1: pytest-json-report)
    is refused at once, naming the missing module, before any figure is taken."""
    def broken(design):
        return ("ModuleNotFoundError: No module named 'pytest_jsonreport'"
                if design.name == "baseline" else None)
    monkeypatch.setattr(perf, "cannot_run", broken)
    monkeypatch.setattr(perf, "measure_all", lambda *a: pytest.fail("measured anyway"))
    assert perf.main(["--baseline", "HEAD", "--runs", "1"]) == 2
    err = [line for line in capsys.readouterr().err.strip().splitlines()
           if not line.startswith("[perf]")]  # the progress log says which baseline it made
    assert len(err) == 1 and "baseline" in err[0] and "pytest_jsonreport" in err[0]


def test_the_checkout_itself_can_start(tmp_path):
    assert perf.cannot_run(perf.current()) is None
    (tmp_path / "grader").mkdir()
    (tmp_path / "grader" / "__init__.py").write_text("")
    (tmp_path / "grader" / "cli.py").write_text("import no_such_module_anywhere\n")
    design = perf.Design("baseline", tmp_path, "broken")
    assert "no_such_module_anywhere" in perf.cannot_run(design)


def test_unknown_parts_are_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        perf.main(["--skip", "grade,nothing"])
    assert exit_.value.code == 2
    assert "nothing" in capsys.readouterr().err
