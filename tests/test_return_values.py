"""A compared return value names its type when the type is what is wrong, and a right row with
a wrong value says exactly that."""

from __future__ import annotations

import pytest

from lab.store import Claim

from grader.harness.judge.outcomes import CheckFailed, show_typed
from grader.harness.judge.scenario import Lab
from grader.report.sentences import problem_line
from grader.results import Kind

CLAIM = Claim(id=1, qty=5, owner="A", token=1, attempt=1, lease_until=1000)


@pytest.mark.parametrize("got, expected, shown", [
    (None, False, "None (NoneType)"), (1, True, "1 (int)"), (0, None, "0 (int)"),
    (True, False, "True"), (None, CLAIM, "None"), (CLAIM, None, repr(CLAIM).split("(")[0] + "("
                                                   + "id=1, qty=5, owner='A', token=1, attempt=1,"
                                                   " lease_until=1000)"),
])
def test_type_named_only_when_it_is_the_cause(got, expected, shown):
    assert show_typed(got, expected) == shown


def test_right_row_wrong_value_says_so(tmp_path):
    lab = Lab(None, str(tmp_path))
    try:
        job = lab.enqueue(qty=5)
        lab.timeline.append({"op": "finish", "actor": "A", "t": 1, "stamp": {}})
        with pytest.raises(CheckFailed) as raised:
            lab.expect(None, False, job=job, row=lab.row(job), detail="tokens.late-finish-accepted")
        failure = raised.value.failure
        assert failure.kind == Kind.WRONG_VALUE and failure.detail is None
        assert (failure.function, failure.came_back, failure.expected) == (
            "finish", "None (NoneType)", "False")
        assert problem_line(failure, "en") == (
            "The row is right; finish returned None (NoneType): it must return False.")
        with pytest.raises(CheckFailed) as raised:  # the row is wrong: the check's own sentence
            lab.expect(False, False, job=job, row={**lab.row(job), "status": "done"},
                       detail="tokens.late-finish-accepted", token=1)
        assert raised.value.failure.detail == "tokens.late-finish-accepted"
    finally:
        lab.close()


@pytest.mark.parametrize("actor, shown", [("A", "A claims"), ("", "'' claims"),
                                          (" A", "' A' claims"), ("A ", "'A ' claims"),
                                          ("o'brien", "o'brien claims")])
def test_a_name_that_is_empty_or_ends_in_a_space_is_quoted_on_the_timeline(actor, shown):
    """Any str is an owner (the random timelines draw "" and names with spaces at an end):
    the timeline quotes those few, so that a line does not read as if nobody claimed, and
    " A" is not taken for "A"; every other name is shown as it is."""
    from grader.report.sentences import event_text

    event = {"op": "claim", "actor": actor, "t": 0, "lease_ms": 1000, "result": None}
    assert event_text(event, "en").startswith(shown)
