"""`-k` picks checks by the id the reports show (or by test name), and says so when none match."""

from __future__ import annotations

from conftest import by_check, grade, run_grader


def test_k_selects_checks_by_their_id(tmp_path):
    proc, results = grade("solutions.queue", tmp_path, "-k",
                          "finish-at-expiry or reclaim-before-expiry")
    assert proc.returncode == 0
    assert set(by_check(results)) == {"finish-at-expiry", "reclaim-before-expiry"}


def test_k_still_selects_by_test_name(tmp_path):
    proc, results = grade("solutions.queue", tmp_path, "-k", "finish_exactly_at_expiry")
    assert proc.returncode == 0 and set(by_check(results)) == {"finish-at-expiry"}


def test_k_that_matches_nothing_is_a_clear_usage_error():
    proc = run_grader("--impl", "solutions.queue", "-k", "no-such-check")
    assert proc.returncode == 2
    assert "no check matches -k 'no-such-check'" in proc.stderr
    assert "Traceback" not in proc.stderr and "pytest exit" not in proc.stderr
