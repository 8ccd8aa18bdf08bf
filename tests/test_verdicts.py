"""Verdicts instructors can trust: --repeat and unstable checks, --detail levels, the config file."""

from __future__ import annotations

import textwrap

from conftest import MUTANTS, by_check, grade, run_grader

TWO_CHECKS = "finish_before_expiry or finish_exactly_at_expiry"
BOUNDARY_MUTANT = str(MUTANTS / "boundary_finish_at_expiry_accepted.py")

FLAKY = textwrap.dedent('''
    """Purpose-built flaky target: finish answers wrongly on every other call a check makes,
    the first included (the preflight's call is not counted: it runs beside the first check,
    in a target of its own whose scratch folder is not a lane's)."""
    import os
    from pathlib import Path
    from solutions.queue import claim, work_once
    from solutions.queue import finish as _finish

    def finish(conn, claim, now):
        if "/lane-" not in os.environ.get("TMPDIR", ""):  # the preflight's probe
            return _finish(conn, claim, now)
        counter = Path(os.environ["LEASELAB_ATTACK_COUNTER"])
        calls = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(calls))
        ok = _finish(conn, claim, now)
        return (not ok) if calls % 2 == 1 else ok
''')


def test_repeat_reports_passed_k_of_n(tmp_path):
    proc, results = grade("solutions.queue", tmp_path, "-k", TWO_CHECKS, "--repeat", "4")
    assert proc.returncode == 0
    assert results["extra_data"]["repeat"] == 4 and results["extra_data"]["unstable"] == []
    for test in results["tests"]:
        assert test["extra_data"]["passed_runs"] == 4 and test["extra_data"]["runs"] == 4
        assert test["extra_data"]["unstable"] is False
    assert "passed 4/4" in proc.stdout


def test_unstable_check_is_flagged_with_its_runs_and_fails(tmp_path):
    target = tmp_path / "flaky.py"
    target.write_text(FLAKY)
    out = tmp_path / "r.json"
    proc = run_grader("--impl", str(target), "--json", str(out), "-k", "finish_before_expiry",
                      "--repeat", "4",
                      # the jailed target keeps its count where the test allows it to write
                      env={"LEASELAB_ATTACK_COUNTER": str(tmp_path / "counter"),
                           "LEASELAB_EXTRA_WRITABLE": str(tmp_path)})
    import json

    results = json.loads(out.read_text())
    test = by_check(results)["finish-before-expiry"]
    assert proc.returncode == 1
    assert test["extra_data"]["unstable"] is True
    # The four runs make the calls counted, 1 to 4 (the preflight's probe, which runs beside
    # the first one, is not counted), and the odd ones answer wrong: runs 1 and 3.
    assert test["extra_data"]["failed_runs"] == [1, 3]
    assert test["extra_data"]["passed_runs"] == 2
    assert test["status"] == "failed" and test["score"] == 0
    assert results["extra_data"]["unstable"] == ["finish-before-expiry"]
    assert "UNSTABLE: did not pass in run(s) 1, 3" in test["output"]
    assert "UNSTABLE" in proc.stdout and "Unstable checks" in proc.stdout


def _failure_output(tmp_path, *extra):
    proc, results = grade(BOUNDARY_MUTANT, tmp_path, "-k", TWO_CHECKS, *extra)
    return proc, by_check(results)["finish-at-expiry"]["output"]


def test_detail_full_shows_expected_row_and_hint(tmp_path):
    proc, output = _failure_output(tmp_path, "--hints")  # a local run shows hints when asked
    for part in ("Came back: True", "Expected: False", "expected", "≠ status", "Why it matters",
                 "Hint:"):
        assert part in output
    proc, output = _failure_output(tmp_path)  # tests/test_hints.py: the hint policy
    assert "Expected: False" in output and "Hint:" not in output


def test_detail_actual_only_hides_expected_values(tmp_path):
    proc, output = _failure_output(tmp_path, "--detail", "actual-only")
    assert "Came back: True" in output and "What happened" in output
    assert "Expected:" not in output and "Hint:" not in output and "≠" not in output
    assert "Expected:" not in proc.stdout


def test_detail_none_shows_only_why(tmp_path):
    proc, output = _failure_output(tmp_path, "--detail", "none")
    assert output.startswith("Why it matters:") and output.count("\n") == 0
    assert "Came back" not in proc.stdout


def test_config_sets_visibility_and_detail(tmp_path):
    config = tmp_path / "grader.toml"
    config.write_text('detail = "actual-only"\nvisibility = "after_due_date"\n'
                      '[checks.finish-at-expiry]\nvisibility = "hidden"\n')
    proc, results = grade(BOUNDARY_MUTANT, tmp_path, "-k", TWO_CHECKS, "--config", str(config))
    checks = by_check(results)
    assert checks["finish-at-expiry"]["visibility"] == "hidden"
    assert checks["finish-before-expiry"]["visibility"] == "after_due_date"
    assert "Expected:" not in checks["finish-at-expiry"]["output"]
    # the command line wins over the file
    proc, results = grade(BOUNDARY_MUTANT, tmp_path, "-k", TWO_CHECKS, "--config", str(config),
                          "--detail", "full")
    assert "Expected: False" in by_check(results)["finish-at-expiry"]["output"]


def test_bad_config_is_exit_2_with_the_reason(tmp_path):
    for text, reason in [('visibility = "secret"\n', "choose one of"),
                         ('[checks.no-such-check]\nvisibility = "hidden"\n', "no such check"),
                         ('colour = "red"\n', "unknown setting"),
                         ('detail = \n', "grader.toml")]:
        config = tmp_path / "grader.toml"
        config.write_text(text)
        proc = run_grader("--impl", "solutions.queue", "--config", str(config))
        assert proc.returncode == 2, text
        assert reason in proc.stderr, (text, proc.stderr)
