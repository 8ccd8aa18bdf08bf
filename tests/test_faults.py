"""The injected fault (grader/checks/faults.py) hits a job moved to a status however it is
written: an UPDATE, or a row rewritten whole with INSERT OR REPLACE; nothing else, and only
while injected. And what counts as the injected (or a lock's) error coming out of the code: the
chain a traceback shows, never an error hidden with `raise ... from None`."""

from __future__ import annotations

import sqlite3

import pytest

from lab import store

from grader.checks.faults import ABORT, ERROR, fault_error, fault_message, injected_fault
from grader.harness.judge.scenario import Lab
from grader.harness.wire.values import RaisedInTarget


@pytest.fixture(params=[1, 987_654_321], ids=["lesson-world", "drawn-world"])
def lab(tmp_path, request):
    """A check's Lab with the reference in its target process; the statements below run on
    the target's connection (`lab.conn`), where the TEMP triggers live. In a drawn world the
    triggers, their counter and their message have names that say nothing."""
    lab = Lab("solutions.queue", str(tmp_path), seed=request.param, check="any-check")
    store.enqueue(lab.observer, 5, 1_000)
    yield lab
    lab.close()


REPLACE = ("INSERT OR REPLACE INTO jobs (id, qty, status, token, attempts, max_attempts, deadline)"
           " VALUES (1, 5, ?, 1, 1, 3, 1000)")


@pytest.mark.parametrize("kind, error", [(ABORT, "IntegrityError"), (ERROR, "OperationalError")])
@pytest.mark.parametrize("sql, params", [
    ("UPDATE jobs SET status = ? WHERE id = 1", ("leased",)),
    (REPLACE, ("leased",)),
])
def test_the_fault_hits_the_write_that_moves_the_job(lab, sql, params, kind, error):
    with injected_fault(lab, "leased", kind) as fault:
        with pytest.raises(RaisedInTarget, match=fault_error(lab, kind)) as raised:
            lab.conn.execute(sql, params)
    assert raised.value.sqlite_error == error
    assert fault.fired == 1
    assert store.get_job(lab.observer, 1)["status"] == "pending"


def test_the_error_fault_is_no_lock_and_leaves_the_transaction_open(lab):
    """The ERROR fault is an OperationalError that does not say "locked" (a target that
    re-raises only a lock must meet it), and, as ABORT, undoes only its statement."""
    lab.conn.execute("BEGIN IMMEDIATE")
    lab.conn.execute("UPDATE jobs SET qty = 6 WHERE id = 1")
    with injected_fault(lab, "leased", ERROR) as fault:
        with pytest.raises(RaisedInTarget) as raised:
            lab.conn.execute("UPDATE jobs SET status = 'leased' WHERE id = 1")
        assert lab.conn.in_transaction
        lab.conn.execute("ROLLBACK")
    assert raised.value.message == "OperationalError: user-defined function raised exception"
    assert "locked" not in raised.value.message and fault_message(lab) not in raised.value.message
    assert fault.fired == 1
    assert store.get_job(lab.observer, 1)["qty"] == 5


@pytest.mark.parametrize("kind", [ABORT, ERROR])
def test_other_writes_pass_and_the_fault_is_gone_afterwards(lab, kind):
    with injected_fault(lab, "done", kind) as fault:
        lab.conn.execute("UPDATE jobs SET status = 'leased' WHERE id = 1")
        lab.conn.execute(REPLACE, ("leased",))
    assert fault.fired == 0
    lab.conn.execute(REPLACE, ("done",))
    assert store.get_job(lab.observer, 1)["status"] == "done"
    injected = "note.fault-injected-error" if kind == ERROR else "note.fault-injected"
    assert [e["key"] for e in lab.timeline] == [injected, "note.fault-removed"]


# -- what counts as the database error coming out (the chain as a traceback shows it) ----------
def _raised_from(error: Exception, how: str) -> Exception:
    """`error` re-raised as RuntimeError `how`: "from" (raise ... from err), "context" (a plain
    raise inside the except), "none" (raise ... from None), or "bare" (itself, re-raised)."""
    try:
        try:
            raise error
        except Exception as err:
            if how == "bare":
                raise
            if how == "from":
                raise RuntimeError("claim failed") from err
            if how == "none":
                raise RuntimeError("claim failed") from None
            raise RuntimeError("claim failed")
    except Exception as out:
        return out


@pytest.mark.parametrize("how, shown", [("bare", True), ("from", True), ("context", True),
                                        ("none", False)])
def test_the_chain_is_what_a_traceback_shows(how, shown):
    """`from None` hides the database error (__suppress_context__): it no longer counts as
    propagated, in the judge (faults) as in the target process (values, on the wire), and the
    error hidden is told apart, so the failure can say so."""
    from grader.checks import faults
    from grader.harness.wire import values

    locked = _raised_from(sqlite3.OperationalError("database is locked"), how)
    assert faults.is_locked_error(locked) is shown
    assert (faults.hidden_locked_error(locked) is None) is shown
    data = values.describe_error(locked, [], type(None))
    decoded = values.decode_error(data, "claim")
    assert faults.is_locked_error(decoded) is shown
    assert decoded.hidden == ([] if shown else ["OperationalError: database is locked"])
    assert faults.hidden_locked_error(decoded) == (None if shown else
                                                   "OperationalError: database is locked")


def test_a_hidden_error_deeper_in_the_chain_is_found():
    """raise A from None while handling B, B raised from the database error: the lines hidden
    are B's and the database error's; a context that nothing suppresses is not hidden."""
    from grader.checks import faults
    from grader.harness.wire import values

    inner = _raised_from(sqlite3.OperationalError("disk I/O error"), "from")
    outer = _raised_from(inner, "none")
    assert faults._lines(outer) == ["RuntimeError: claim failed"]
    assert faults._hidden_lines(outer) == ["RuntimeError: claim failed",
                                           "OperationalError: disk I/O error"]
    assert values.describe_error(outer, [], type(None))["hidden"] == \
        ["RuntimeError: claim failed", "OperationalError: disk I/O error"]
    kept = _raised_from(inner, "context")
    assert faults._hidden_lines(kept) == []
    assert values.describe_error(kept, [], type(None))["chain"] == \
        ["RuntimeError: claim failed", "OperationalError: disk I/O error"]


@pytest.mark.parametrize("lang, words", [("en", "(the grader's injected fault)"),
                                         ("ja", "(採点側が注入した故障)")])
def test_a_drawn_worlds_fault_message_says_it_is_the_graders_fault(tmp_path, lang, words):
    """In a drawn world the injected fault's message is letters that say nothing
    ("IntegrityError: d3k4udjx1li3"): wherever a report shows it (the problem line, the
    timeline's raised step), it says it is the grader's injected fault. The lesson's message
    ("injected fault") says so itself and is left as it is."""
    from conftest import MUTANTS, by_check, run_grader

    mutant = str(MUTANTS / "tx_no_rollback_on_error.py")  # claim raises the fault, rolls back not
    for seed, marked in (("7", True), ("1", False)):
        out = tmp_path / f"{seed}-{lang}.json"
        proc = run_grader("--impl", mutant, "--replay", seed, "-k", "claim-rolls-back-on-error",
                          "--lang", lang, "--no-history", "--json", str(out))
        assert proc.returncode == 1, proc.stderr
        import json

        output = by_check(json.loads(out.read_text()))["claim-rolls-back-on-error"]["output"]
        if marked:
            shown = [line for line in (proc.stdout + "\n" + output).splitlines()
                     if "IntegrityError:" in line and "sqlite3.IntegrityError" not in line]
            assert shown, proc.stdout
            # each line naming the error names what it is, right after its letters (the
            # terminal may wrap between them: read its lines joined)
            assert output.count(words) >= 2, output  # the problem and the raised step
            joined = " ".join(proc.stdout.split())
            assert joined.count(" ".join(words.split())) >= 2, proc.stdout
        else:
            assert "injected fault (" not in output and words not in output, output
            assert "IntegrityError: injected fault" in output


def test_the_marking_leaves_the_narration_and_other_text_alone():
    from grader.report.sentences import mark_faults

    data = {"error": "IntegrityError: abc123", "params": {"said": "abc123 and more"},
            "timeline": [{"op": "note", "key": "note.fault-injected",
                          "params": {"status": "leased", "message": "abc123"}},
                         {"op": "claim", "raised": "IntegrityError: abc123"},
                         {"op": "claim", "raised": "ValueError: other"}]}
    marked = mark_faults(data, "en")
    assert marked["error"] == "IntegrityError: abc123 (the grader's injected fault)"
    assert marked["params"]["said"] == "abc123 (the grader's injected fault) and more"
    assert marked["timeline"][0] == data["timeline"][0]
    assert marked["timeline"][1]["raised"].endswith("(the grader's injected fault)")
    assert marked["timeline"][2]["raised"] == "ValueError: other"
    assert mark_faults(marked, "en") == marked  # never marked twice
    assert mark_faults({"error": "x"}, "en") == {"error": "x"}
