"""A failure while a check sets up its situation is told as such: the step, what came back and
what the contract gives, that the rule under test was never reached, and no hint about it."""

from __future__ import annotations

from grader.harness.judge.outcomes import CheckFailed
from grader.harness.judge.scenario import Lab
from grader.report.view import check_view
from grader.results import CheckResult, Failure, Kind, Outcome

CLAIM_EVENT = {"op": "claim", "actor": "A", "t": 0, "lease_ms": 1000, "result": None}


def _failure(setup: bool) -> Failure:
    return Failure(Outcome.FAILED, Kind.MISMATCH, came_back="None", expected="Claim(id=1)",
                   timeline=[CLAIM_EVENT], setup=setup or None)


def _view(failure: Failure, detail: str = "full"):
    return check_view(CheckResult("finish-at-expiry", 4, failure.outcome, failure), "en", detail)


def test_setup_failure_names_the_step_and_hides_the_hint():
    view = _view(_failure(setup=True))
    assert view.hint is None
    assert view.problem.startswith("Setting up this check: A claims")
    assert "came back None, the contract gives Claim(id=1)" in view.problem
    assert "cannot go on" in view.problem and view.title in view.problem
    assert view.returned is None  # the sentence says both values already


def test_setup_failure_without_expected_values_at_actual_only():
    view = _view(_failure(setup=True), detail="actual-only")
    assert "Claim(id=1)" not in view.problem and "cannot go on" in view.problem
    assert view.returned.came_back == "None" and view.returned.expected is None


def test_failure_of_the_rule_keeps_its_hint():
    view = _view(_failure(setup=False))
    assert view.hint and view.problem is None and view.returned.expected == "Claim(id=1)"


def test_setup_flag_set_only_inside_lab_setup(tmp_path):
    lab = Lab(None, str(tmp_path))
    try:
        for inside in (True, False):
            try:
                if inside:
                    with lab.setup():
                        lab.expect(None, 1)
                else:
                    lab.expect(None, 1)
            except CheckFailed as failed:
                assert failed.failure.setup is (True if inside else None)
        assert Failure.from_json(_failure(True).to_json()).setup is True
    finally:
        lab.close()


def _lab_failure(lab: Lab, got, expected, row: dict, *, setup: bool) -> Failure:
    """What lab.expect(got, expected, job=1, row=row) fails with (job 1 is pending)."""
    try:
        if setup:
            with lab.setup():
                lab.expect(got, expected, job=1, row=row)
        else:
            lab.expect(got, expected, job=1, row=row)
    except CheckFailed as failed:
        return failed.failure
    raise AssertionError("lab.expect did not fail")


def test_a_right_value_with_a_wrong_row_names_the_row_not_the_value(tmp_path):
    """issue 28: "came back None, the contract gives None" (setup) and "Came back: False /
    Expected: False" (the rule): the value was right, the row was not; say so."""
    lab = Lab(None, str(tmp_path))
    try:
        job = lab.enqueue(qty=5)
        wrong = {**lab.row(job), "status": "leased"}  # what the check expected: not the row
        lab.timeline.append(CLAIM_EVENT)
        failure = _lab_failure(lab, None, None, wrong, setup=True)
        assert failure.kind == Kind.ROW_MISMATCH and failure.came_back == "None"
        view = _view(Failure.from_json(failure.to_json()))
        assert view.problem.startswith("Setting up this check: A claims")
        assert "came back None, as the contract gives, but the row of job 1 is not" in view.problem
        assert "the contract gives None" not in view.problem and view.returned is None
        assert view.row is not None
        failure = _lab_failure(lab, False, False, wrong, setup=False)
        view = _view(Failure.from_json(failure.to_json()))
        assert view.returned is None  # no "Came back: False / Expected: False"
        assert view.problem.startswith("claim returned False, as the contract says, but the row")
        assert view.row is not None and view.hint
    finally:
        lab.close()
