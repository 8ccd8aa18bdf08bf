"""The judge waits for a lock only where waiting can end (grader.harness.judge.scenario.judge_wait_ms).

A check of a family that starts no processes has one target process, whose every statement runs
in the judge's process on the thread that also runs the judge's own: a lock the code under grade
left behind when the judge's own statement meets it cannot be let go of before that statement
ends. There the judge's connections wait for none (the same "database is locked", at once; a
student whose claim leaves a transaction open had waited a second per check for it, and 21 s
for a grade). A check that starts processes keeps its wait: another process may let go."""

from __future__ import annotations

import sqlite3

import pytest

from conftest import MUTANTS
from grader import runner
from grader.checkdef import REGISTRY, all_checks
from grader.harness.judge.outcomes import SHARED_WAIT_MS, judge_wait_ms
from grader.harness.judge.scenario import Lab
from grader.results import Failure, Kind, Outcome

LOCKS = str(MUTANTS / "lock_exclusive_never_committed.py")  # claim: BEGIN EXCLUSIVE, no COMMIT


def busy_timeout(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA busy_timeout").fetchone()[0]


def test_a_lab_alone_with_the_code_does_not_wait_and_one_beside_other_processes_does(tmp_path):
    assert judge_wait_ms(alone=True) == 0 and judge_wait_ms(alone=False) == SHARED_WAIT_MS > 0
    for alone, waits in ((True, 0), (False, SHARED_WAIT_MS)):
        folder = tmp_path / str(alone)
        folder.mkdir()
        lab = Lab(None, str(folder), alone=alone)
        try:
            assert lab.wait_ms == waits and busy_timeout(lab.observer) == waits
        finally:
            lab.close()


def test_the_runner_says_alone_for_the_checks_that_start_no_processes(monkeypatch):
    """... and hands those checks' Labs the contract's one model of the rows
    (grader.checks.model.QueueModel, by name: the failure crosses from a forked judge)."""
    all_checks()

    def run_check(body, spec, workdir, seed, call_timeout, check, hung, detailed, alone, model):
        # said in its failure: a judge is forked (and jailed: it writes no file of the test's)
        return Failure(Outcome.FAILED, Kind.DETAIL, detail="x",
                       params={"alone": alone,
                               "model": model and f"{model.__module__}.{model.__qualname__}"})

    monkeypatch.setattr(runner.checkrun, "run_check", run_check)
    settings = runner.Settings("solutions.queue", 1.0, (1,), False)
    told = {info.id: runner.grade_check(info, settings).result.params
            for info in REGISTRY.values()}
    assert {check: params["alone"] for check, params in told.items()} == {
        info.id: not info.family.starts_processes for info in REGISTRY.values()}
    assert {params["alone"] for params in told.values()} == {True, False}
    assert {check: params["model"] for check, params in told.items()} == {
        info.id: None if info.family.starts_processes else "grader.checks.model.QueueModel"
        for info in REGISTRY.values()}


@pytest.mark.parametrize("alone", [True, False], ids=["alone", "beside-processes"])
def test_a_lock_the_code_left_is_the_codes_either_way(tmp_path, alone):
    """The judge's read meets the lock claim left (BEGIN EXCLUSIVE, never committed) and says
    so: the failure the wait gave, without it where nothing could end it."""
    lab = Lab(LOCKS, str(tmp_path), check="any-check", alone=alone)
    try:
        job = lab.enqueue()
        lab.claim(lab.world.name("A"), now=lab.world.t0, lease_ms=lab.world.lease_ms)
        assert lab.conn.in_transaction  # the lock is the code's, left behind
        with pytest.raises(sqlite3.OperationalError, match="database is locked"):
            lab.observer.execute("SELECT * FROM jobs WHERE id = ?", (job,)).fetchall()
        assert busy_timeout(lab.observer) == (0 if alone else SHARED_WAIT_MS)
    finally:
        lab.close()
