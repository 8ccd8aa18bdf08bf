"""The benchmark runs end to end (one grade of the solution, one race trial each way, two saves
under `python -m grader watch`)."""

from __future__ import annotations

import json

from bench import grade as bench


def test_targets_are_the_solution_and_the_race_crash_lock_mutants():
    found = bench.targets()
    assert found[0] == "solutions.queue"
    assert all(bench.name(t).startswith(bench.PREFIXES) for t in found[1:])
    assert bench.targets(["solutions.queue"]) == ["solutions.queue"]


def test_one_run_of_the_solution(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = bench.main(["--runs", "1", "--only", "solutions.queue", "--trials", "1",
                       "--launchers", "1", "--watch", "2", "--json", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    solution = report["unloaded"]["solutions.queue"]
    assert (solution["runs"], solution["passed"], solution["failed"]) == (1, 1, 0)
    assert report["race"]["trials"] == 1 and report["race"]["forced_caught"] == 1
    launchers = report["launchers"]  # the same verdicts forked from the zygote or spawned
    assert launchers["zygote"]["same_verdicts"] and launchers["spawn"]["same_verdicts"]
    assert launchers["ratio_wall"] > 0 and launchers["zygote"]["cpu"] > 0
    watched = report["watch"]  # a save of the mutant, then of the solution: each graded right
    assert watched["saves"] == 2 and watched["right_verdicts"] and watched["exit"] in (0, 130)
    assert len(watched["firsts"]) == len(watched["finals"]) == 2
    printed = capsys.readouterr().out
    assert "solutions.queue" in printed and "spawn / zygote" in printed
    assert "save -> first verdict redrawn" in printed


def test_percentile_and_verdict():
    assert bench.percentile([2.0], 90) == 2.0
    assert bench.percentile([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0], 90) > 9.0
    assert bench.verdict("solutions.queue", {"runs": 2, "passed": 2, "failed": 0}) == "stable"
    assert bench.verdict("x_mutant.py", {"runs": 2, "passed": 1, "failed": 1}) == "UNSTABLE"


def test_the_suite_report_sums_each_files_tests(tmp_path, capsys):
    """bench.suite: a JUnit report's tests summed per file (a test class's under its file),
    longest first, with the suite's least wall time on N workers."""
    from bench import suite

    report = tmp_path / "suite.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_a" name="one" time="2.5"/>'
        '<testcase classname="tests.test_a.TestThing" name="two" time="1.5"/>'
        '<testcase classname="tests.test_b" name="three" time="1.0"/>'
        '</testsuite></testsuites>', encoding="utf-8")
    assert suite.per_file(report) == {"tests/test_a.py": (4.0, 2), "tests/test_b.py": (1.0, 1)}
    assert suite.main([str(report), "--workers", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("tests/test_a.py") and out[2].startswith("tests/test_b.py")
    assert "at least 4.0 s" in out[-1]
    assert suite.main([str(tmp_path / "missing.xml")]) == 2
