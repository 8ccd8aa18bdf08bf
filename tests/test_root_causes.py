"""Root causes first (grader.report.causes.root_causes): one mistake that makes several checks fail
is shown once, ahead of the checks, and each check it explains is one line; results.json keeps
every test's output and names the cause in extra_data; without a shared cause the report opens
with the first failing check and how many more fail.

The results are built by hand from typed Failures (no grading), except the one end-to-end run
on the stubs."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, run_grader

from grader.checkdef import all_checks
from grader.report import html as report_html, results_json, terminal
from grader.report.messages import text
from grader.report.causes import SHARED, cause_key
from grader.report.view import report_view
from grader.results import CheckResult, Failure, Kind, Outcome

CHECKS = list(all_checks().values())  # lesson order
IDS = [c.id for c in CHECKS]


def result(i: int, failure: Failure | None) -> CheckResult:
    check = CHECKS[i]
    if failure is None:
        return CheckResult(check.id, check.points, Outcome.PASSED)
    return CheckResult(check.id, check.points, failure.outcome, failure)


def not_implemented(function: str = "claim") -> Failure:
    return Failure(Outcome.NOT_IMPLEMENTED, Kind.NOT_IMPLEMENTED, function=function)


def wrong_type(came_back: str = "0") -> Failure:
    return Failure(Outcome.FAILED, Kind.WRONG_TYPE, function="finish", came_back=came_back,
                   type="int", wanted="bool")


def mismatch() -> Failure:
    return Failure(Outcome.FAILED, Kind.MISMATCH, function="claim", came_back="None",
                   expected="Claim(id=1, ...)")


def raised(error: str = "RuntimeError: boom", where: str = "queue.py:12") -> Failure:
    return Failure(Outcome.ERRORED, Kind.RAISED, function="finish", error=error, where=where)


def hung_in_work_once() -> Failure:
    step = {"op": "work_once", "actor": "W", "lease_ms": 1000, "t": 0}
    return Failure(Outcome.TIMED_OUT, step=step, timeout=2.0)


def lines(results, lang="en", detail="full") -> list[str]:
    """The terminal report telling every story (--all), a line never wrapped: the layout under
    test here (the width: tests/test_report_length.py)."""
    view = report_view(results, lang, target="queue.py", detail=detail)
    return terminal.from_view(view, width=terminal.UNWRAPPED).splitlines()


def blocks(out: list[str]) -> list[str]:
    return [line for line in out if line.startswith("▶ ")]


def one_line(out: list[str], check_id: str) -> list[str]:
    return [line for line in out if f"{check_id} ·" in line]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_all_stubs_are_one_block(lang):
    results = [result(i, not_implemented()) for i in range(len(CHECKS))]
    report = report_view(results, lang, target="queue.py")
    assert len(report.causes) == 1
    cause = report.causes[0]
    assert (cause.kind, cause.function, cause.ids) == ("not-implemented", "claim", IDS)
    out = terminal.from_view(report, width=terminal.UNWRAPPED).splitlines()
    assert len(blocks(out)) == 1
    assert sum("NotImplementedError" in line for line in out) == 1
    assert str(len(CHECKS)) in blocks(out)[0]
    for check_id in IDS:  # every check named, each on one line
        assert len(one_line(out, check_id)) == 1
    assert len(out) < len(CHECKS) + 15
    assert report.lead is None  # nothing else fails


def test_a_wrong_return_type_in_many_checks_and_one_logic_failure():
    results = [result(i, wrong_type(str(i % 2))) for i in range(8)]
    results += [result(8, mismatch())] + [result(i, None) for i in range(9, 12)]
    report = report_view(results, "en", target="queue.py")
    [cause] = report.causes
    assert (cause.kind, cause.function, cause.type, len(cause.checks)) == \
        ("wrong-type", "finish", "int", 8)
    out = lines(results)
    assert len(blocks(out)) == 1
    assert "    finish returns a value of type int; it must return bool." in out
    for check_id in IDS[:8]:
        [line] = one_line(out, check_id)
        assert "see cause 1 above" in line
    assert not any("finish returned" in line for line in out)  # no block per check
    # the unrelated failure: named in the lead, and in full under its check
    assert report.lead is not None and IDS[8] in report.lead
    at = out.index(one_line(out, IDS[8])[0])
    assert "[failed]" in out[at]
    assert out[at + 1].strip().startswith("Came back: None")
    assert sum(line.strip().startswith("Why it matters:") for line in out) == 1
    # the type hint once, in the cause's block (every check of it shares it), and the logic
    # failure's own
    hints = [line.strip() for line in out if line.strip().startswith("Hint:")]
    assert hints[0] == "Hint: " + text("hint.wrong-type.finish") and len(hints) == 2
    assert out.index(hints[0].join(["    ", ""])) < out.index(one_line(out, IDS[0])[0])


def test_a_syntax_error_is_one_block():
    failure = Failure.load_error(Kind.SYNTAX_ERROR, {"file": "queue.py", "line": 3,
                                                     "msg": "invalid syntax"})
    results = [result(i, failure) for i in range(len(CHECKS))]
    report = report_view(results, "en", target="queue.py")
    [cause] = report.causes
    assert cause.kind == Kind.SYNTAX_ERROR and len(cause.checks) == len(CHECKS)
    out = lines(results)
    assert len(blocks(out)) == 1
    assert sum("does not compile" in line for line in out) == 1
    assert "queue.py, line 3: invalid syntax" in "\n".join(out)
    assert len(out) < len(CHECKS) + 15


def test_without_a_shared_cause_the_first_failing_check_leads():
    results = [result(0, None), result(1, mismatch()), result(2, None),
               result(3, raised("ValueError: a")), result(4, raised("ValueError: b")),
               result(5, not_implemented("work_once")), result(6, wrong_type())]
    report = report_view(results, "en", target="queue.py")
    assert report.causes == []
    out = lines(results)
    assert not blocks(out)
    lead = out[2]
    assert IDS[1] in lead and "(failing checks after it: 4)" in lead
    assert out.index(lead) < out.index(one_line(out, IDS[0])[0])
    assert all("see cause" not in line for line in out)
    assert sum(line.strip().startswith("Why it matters:") for line in out) == 5


def test_one_failing_check_is_said_once():
    report = report_view([result(0, None), result(1, mismatch())], "ja", target="q.py")
    assert report.causes == [] and IDS[1] in report.lead


def test_causes_go_by_how_many_checks_they_affect():
    results = ([result(i, not_implemented("work_once")) for i in range(2)]
               + [result(i, raised()) for i in range(2, 5)]
               + [result(5, raised(where="queue.py:99"))])  # another line: not the same cause
    report = report_view(results, "en", target="queue.py")
    assert [(c.kind, len(c.checks)) for c in report.causes] == [("raised", 3),
                                                                 ("not-implemented", 2)]
    assert report.causes[0].where == "queue.py:12"
    assert [c.id for c in report.uncaused] == [IDS[5]]
    out = lines(results)
    assert [b.split(":")[0] for b in blocks(out)] == ["▶ Fix this first (1/2)",
                                                       "▶ Fix this first (2/2)"]
    assert "see cause 2 above" in one_line(out, IDS[0])[0]


def test_what_makes_a_cause_the_same():
    assert SHARED == 2
    assert cause_key(wrong_type("0")) == cause_key(wrong_type("1"))
    assert cause_key(raised("E: a")) != cause_key(raised("E: b"))
    assert cause_key(mismatch()) is None
    hung = hung_in_work_once()
    assert cause_key(hung) == ("timed-out", "work_once")
    importing = Failure(Outcome.TIMED_OUT, step={"op": "import", "target": "q.py"}, timeout=1)
    assert cause_key(importing) == ("timed-out-import", None)
    field = Failure(Outcome.FAILED, Kind.WRONG_FIELD_TYPE, function="claim", type="str",
                    wanted="int", came_back="Claim(...)",
                    params={"field": "token", "value": "'1'"})
    assert cause_key(field) == ("wrong-field-type", "claim", "str", "token")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_timeouts_and_field_types_have_words(lang):
    hung = hung_in_work_once()
    field = Failure(Outcome.FAILED, Kind.WRONG_FIELD_TYPE, function="claim", type="str",
                    wanted="int", came_back="Claim(...)",
                    params={"field": "token", "value": "'1'"})
    importing = Failure(Outcome.TIMED_OUT, step={"op": "import", "target": "q.py"}, timeout=1)
    results = ([result(i, hung) for i in range(3)] + [result(i, field) for i in range(3, 5)]
               + [result(i, importing) for i in range(5, 9)])
    report = report_view(results, lang, target="queue.py")
    assert [c.kind for c in report.causes] == ["timed-out-import", "timed-out",
                                               "wrong-field-type"]
    assert all("{" not in c.sentence and c.sentence for c in report.causes)
    report_html.from_view(report)


def test_results_json_leads_with_the_cause_and_names_it_under_each_check():
    """Issue 29: every test repeated the cause's whole story, and the top-level output was
    only the counts. The output leads with the cause; a test it explains says so in one line."""
    results = [result(i, wrong_type()) for i in range(4)] + [result(4, mismatch())]
    data = results_json.from_view(report_view(results, "en", target="queue.py"))
    [cause] = data["extra_data"]["causes"]
    assert cause["kind"] == "wrong-type" and cause["ids"] == IDS[:4] and cause["checks"] == 4
    assert {"function": "finish", "type": "int"}.items() <= cause.items()
    first, sentence = data["output"].splitlines()[:2]
    assert first.startswith("Fix this first: one cause makes 4 checks fail")
    assert sentence == "finish returns a value of type int; it must return bool."
    assert IDS[4] in data["output"] and "Score: 0" in data["output"]  # then the rest, the score
    for test in data["tests"][:4]:
        assert test["extra_data"]["cause"] == 1  # extra_data.causes[0]
        assert test["output"] == "See: finish returns a value of type int; it must return bool."
    assert "cause" not in data["tests"][4]["extra_data"]
    assert "Why it matters:" in data["tests"][4]["output"]  # its own story, whole


def test_html_leads_with_the_cause_and_shows_its_checks_as_one_line():
    results = [result(i, not_implemented()) for i in range(5)] + [result(5, mismatch())]
    page = report_html.from_view(report_view(results, "en", target="queue.py"))
    cause = re.search(r'<section class="cause" id="cause-1">.*?</section>', page, re.S).group(0)
    assert "claim is not implemented yet" in cause
    assert all(f'href="#check-{i}"' in cause for i in IDS[:5])
    for check_id in IDS[:5]:
        assert re.search(rf'<div class="check caused[^"]*" id="check-{check_id}"', page)
        assert f'<details class="check' not in page.split(f'id="check-{check_id}"')[0][-200:]
    assert re.search(rf'<details[^>]*id="check-{IDS[5]}"[^>]* open', page)
    assert page.index('id="cause-1"') < page.index(f'id="check-{IDS[0]}"')


def test_the_stubs_report_is_short_and_all_names_every_check():
    """Nothing the stubs hold runs: the report is the two causes and the score (55 lines
    before, 204 before causes were grouped); --all names every check on its line."""
    proc = run_grader("--impl", "lab/queue.py", env={"COLUMNS": "200"})
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.splitlines()
    assert len(out) <= 15, proc.stdout
    assert len(blocks(out)) == 2  # claim, then work_once
    assert out[-1].startswith("Score: 0 / 100")
    assert not any(one_line(out, check_id) for check_id in IDS)
    proc = run_grader("--impl", "lab/queue.py", "--all", env={"COLUMNS": "200"})
    out = proc.stdout.splitlines()
    assert len(blocks(out)) == 2
    for check_id in IDS:
        assert len(one_line(out, check_id)) == 1, check_id


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_connection_of_its_own_is_one_cause_per_function(lang):
    """claim opening a connection of its own to the database fails every check that calls it
    (whatever file the check's database is): one cause, which names no one check's file (each
    check names its own)."""
    def own(function: str, files: str = "queue.db") -> Failure:
        return Failure(Outcome.FAILED, Kind.OWN_CONNECTION, function=function,
                       params={"files": files})

    assert cause_key(own("claim")) == cause_key(own("claim", "rehearsal.db"))
    assert cause_key(own("claim")) != cause_key(own("work_once"))
    results = ([result(i, own("claim")) for i in range(4)] + [result(4, own("claim", "r.db"))]
               + [result(5, own("work_once")), result(6, mismatch())])
    report = report_view(results, lang, target="queue.py")
    assert [(c.kind, c.function, len(c.checks)) for c in report.causes] == [
        ("own-connection", "claim", 5)]
    sentence = report.causes[0].sentence
    assert "claim" in sentence and "queue.db" not in sentence and "r.db" not in sentence
    report_html.from_view(report)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_mistake_the_checks_saw_is_one_cause_whatever_each_check_failed_on(lang):
    """work_once sending inside a transaction (results.Cause, seen by the target process as send
    was called): the checks fail on different things (a row, a blocked probe, a raise), none of
    them a problem line the report groups by; the mistake they all saw is one cause, worded by
    its own sentence. With --detail none it is not said (nothing is)."""
    from grader.results import Cause, RowDiff

    row = RowDiff(1, {"status": "pending"}, {"status": "leased"})
    seen = [Failure(Outcome.FAILED, Kind.ROW_MISMATCH, row=row, detail="work-once-send-uncommitted",
                    params={"sent": "Claim(...)", "job": 1}, cause=Cause.SEND_IN_TRANSACTION),
            Failure(Outcome.FAILED, Kind.ROW_MISMATCH, row=row, cause=Cause.SEND_IN_TRANSACTION),
            raised("OperationalError: database is locked")]
    seen[2].cause = Cause.SEND_IN_TRANSACTION
    assert {cause_key(f) for f in seen} == {("send-in-transaction", None)}
    unseen = Failure(Outcome.FAILED, Kind.ROW_MISMATCH, row=row)
    results = [result(i, f) for i, f in enumerate(seen)] + [result(3, unseen)]
    report = report_view(results, lang, target="queue.py")
    [cause] = report.causes
    assert (cause.kind, cause.ids) == ("send-in-transaction", IDS[:3])
    assert "in_transaction" in cause.sentence and "{" not in cause.sentence
    assert [c.id for c in report.uncaused] == [IDS[3]]
    report_html.from_view(report)
    assert report_view(results, lang, target="queue.py", detail="none").causes == []


def uncommitted_row(function: str, cause: str | None) -> Failure:
    """finish (or work_once) returned True and the row, read as other connections see it,
    still shows the job leased: "the value is right, the row is wrong" unless `cause` says why."""
    from grader.results import RowDiff

    row = RowDiff(1, {"status": "leased"}, {"status": "done"})
    return Failure(Outcome.FAILED, Kind.ROW_MISMATCH, function=function, came_back="True",
                   row=row, cause=cause)


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("cause, word", [("isolation-level-changed", "isolation_level"),
                                         ("transaction-left-open", "COMMIT")])
def test_a_change_left_uncommitted_is_headlined_by_its_cause_not_by_the_row(lang, cause, word):
    """issue 38.5: claim changed isolation_level (or finish left its transaction open), so a
    finish's change was never committed and its row looks unchanged. The checks that met it in
    claim, finish or work_once (which runs them) are one cause, worded by the function of its
    first check, headlining the report; a check's own problem line says the change was not
    committed, never "the value is right, the row is wrong"."""
    from grader.results import Cause as Seen

    failures = [uncommitted_row("finish", Seen.of(cause, "claim")),
                uncommitted_row("finish", Seen.of(cause, "claim")),
                uncommitted_row("work_once", Seen.of(cause, "work_once"))]
    results = [result(i, f) for i, f in enumerate(failures)] + [result(3, mismatch())]
    report = report_view(results, lang, target="queue.py")
    [found] = report.causes
    assert (found.kind, found.function, found.ids) == (cause, "claim", IDS[:3])
    assert found.sentence.startswith("claim") and word in found.sentence
    assert text("kind.row-mismatch-uncommitted", lang, function="finish", came_back="True",
                job=1) == report.checks[0].problem
    out = "\n".join(lines(results, lang))
    assert text("kind.row-mismatch-value-right", lang, function="finish", came_back="True",
                job=1) not in out
    assert out.index(found.heading) < out.index(report.lead)
    report_html.from_view(report)
    # without the cause, the row is the story, as before
    plain = report_view([result(0, uncommitted_row("finish", None))], lang, target="queue.py")
    assert plain.causes == [] and plain.checks[0].problem == text(
        "kind.row-mismatch-value-right", lang, function="finish", came_back="True", job=1)


def test_the_mark_is_on_the_call_that_left_the_statement_open_not_the_last():
    """issue 38.5: the grader found the database locked by what the code still held; the ▶ is
    on the call that left its statement (or transaction) open, which the judge marks
    `left_open`, not on the last call; without the mark, on the last call."""
    from grader.report.sentences import failing_step

    events = [{"op": "enqueue", "job": 1}, {"op": "claim", "actor": "A"},
              {"op": "finish", "actor": "A"}, {"op": "claim", "actor": "B"}]
    assert failing_step(events) == 3
    events[1]["left_open"] = True
    assert failing_step(events) == 1


def test_a_lock_the_code_still_holds_marks_the_call_that_left_its_cursor_open(tmp_path):
    """End to end (lock_cursor_left_open: claim keeps a cursor unfinished in a global, from its
    first call on): the check fails when the grader's own write finds the database locked, after
    A's finish; the step marked ▶ is A's claim, which left the cursor open."""
    import json

    out = tmp_path / "results.json"
    run_grader("--impl", str(ROOT / "tests" / "mutants" / "lock_cursor_left_open.py"),
               "-k", "skips-done-and-quarantined", "--json", str(out))
    [test] = json.loads(out.read_text(encoding="utf-8"))["tests"]
    marked = [line for line in test["output"].splitlines() if line.lstrip().startswith("▶")]
    assert len(marked) == 1 and " A claims " in marked[0], test["output"]
