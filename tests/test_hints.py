"""Hints that fit (issue 15): a failure's hint shows only under the failure it is about: a
wrong return type gets the type's hint, a detail that meets another rule gets that rule's hint,
and a failure that never reached the rule (not implemented, not loadable, crashed) gets none."""

from __future__ import annotations

from grader.report import messages
from grader.report.view import check_view, fitting_hint
from grader.results import CheckResult, Failure, Kind, Outcome

import pytest

HINT = messages.text("check.finish-at-expiry.hint", "en")


def said(key: str, lang: str = "en", **params) -> str:
    return messages.text(key, lang, **params)


# -- hints that fit ------------------------------------------------------------------------------
def _view(failure: Failure, check: str = "finish-at-expiry"):
    return check_view(CheckResult(check, 4, failure.outcome, failure), "en")


@pytest.mark.parametrize("failure", [
    Failure(Outcome.NOT_IMPLEMENTED, Kind.NOT_IMPLEMENTED, function="claim"),
    Failure.load_error(Kind.IMPORT_ERROR, {"error": "ModuleNotFoundError: No module named 'x'"}),
    Failure.load_error(Kind.SYNTAX_ERROR, {"file": "queue.py", "line": 3, "msg": "invalid"}),
    Failure(Outcome.ERRORED, Kind.RAISED, function="finish", error="NameError: nope",
            where="queue.py:9"),
    Failure(Outcome.ERRORED, Kind.EXITED, code=3, step={"op": "import", "target": "q.py"}),
    Failure(Outcome.TIMED_OUT, None, timeout=5.0, step={"op": "import", "target": "q.py"}),
    Failure(Outcome.FAILED, Kind.OWN_CONNECTION, function="claim", params={"files": "q.db"}),
    Failure.grader_bug("Traceback ..."),
], ids=lambda f: f.kind or f.outcome)
def test_no_rule_hint_when_the_code_never_reached_the_rule(failure):
    assert _view(failure).hint is None


def test_a_wrong_type_gets_the_type_hint_of_its_function():
    failure = Failure(Outcome.FAILED, Kind.WRONG_TYPE, function="finish", came_back="0",
                      type="int", wanted="bool")
    view = _view(failure)
    assert view.hint == said("hint.wrong-type.finish") and HINT not in view.hint
    field = Failure(Outcome.FAILED, Kind.WRONG_FIELD_TYPE, function="claim", came_back="Claim",
                    type="float", wanted="int", params={"field": "lease_until", "value": "1.0"})
    assert "lease_until must be of type int" in _view(field).hint


def test_a_detail_with_a_hint_of_its_own_gets_that_hint_even_in_setup():
    failure = Failure(Outcome.FAILED, Kind.MISMATCH, came_back="None", expected="None",
                      detail="tokens.not-quarantined-for-requeue", setup=True)
    view = _view(failure, "requeue-token-increases")
    assert view.hint == said("hint.detail.tokens.not-quarantined-for-requeue")
    assert said("check.requeue-token-increases.hint") != view.hint


def test_a_right_row_with_a_wrong_value_gets_the_functions_value_hint():
    failure = Failure(Outcome.FAILED, Kind.WRONG_VALUE, function="work_once", came_back="None",
                      expected="False")
    view = _view(failure, "work-once-fresh-clock")
    assert view.hint == said("hint.wrong-value.work_once")


@pytest.mark.parametrize("check, detail, key", [
    ("race-one-winner", "race-journal-mode", "check.journal-mode-stays-delete.hint"),
    ("integration-run", "integration-worker-rounds", "check.work-once-empty-queue.hint"),
    ("work-once-send-raises", "work-once-send-uncommitted", "check.lock-free-during-send.hint"),
    ("lock-free-during-send", "lock-probe-claim", "check.lowest-id-first.hint"),
    ("integration-run", "integration-worker-exited", None),
    ("random-timelines", "timeline-unreproduced", None),
])
def test_a_detail_about_another_rule_gets_that_rules_hint_or_none(check, detail, key):
    failure = Failure(Outcome.FAILED, Kind.DETAIL, detail=detail)
    assert fitting_hint(check, failure, "en") == (said(key) if key else None)


def test_the_rule_failure_keeps_the_checks_hint():
    failure = Failure(Outcome.FAILED, Kind.MISMATCH, came_back="True", expected="False")
    assert _view(failure).hint == HINT
