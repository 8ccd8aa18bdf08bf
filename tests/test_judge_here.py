"""A check's judge run in its lane (grader.harness.processes.sandbox, `inline`) gives what a forked judge
gives: the same verdict and the same failure, a timeout with the step that hung, a bug of the
check's own as a grader bug; its targets get the CPU limit a forked judge's would; a lane whose
judge cannot be stopped costs only its own check."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from conftest import MUTANTS, ROOT
from grader import runner
from grader.checkdef import PROCESS_FAMILIES, family
from grader.harness.judge.target_client import TargetProcess
from grader.harness.judge.target_errors import TargetClosed
from grader.harness.judge.world import LESSON_SEED
from grader.harness.processes import sandbox
from grader.results import Kind, Outcome, result_to_json
from grader.runner import Settings, Unit, lanes

#: Programs whose single-process checks end every way: passed, failed (a wrong value, a wrong
#: row, a forged stamp accepted), not implemented, exited, timed out, and a program that leaves
#: processes behind.
PROGRAMS = {
    "reference": ("solutions.queue", "boundaries or stamps or selection"),
    "stubs": ("lab.queue", "boundaries or work_once"),
    "wrong": (str(MUTANTS / "blind_finish_owner_like.py"), "tokens or stamps"),
    "boundary": (str(MUTANTS / "boundary_finish_at_expiry_accepted.py"), "boundaries"),
    "exits": (str(MUTANTS / "outcome_finish_exits_when_rejected.py"), "boundaries"),
    "hang": (str(MUTANTS / "outcome_finish_hangs_at_lease_end.py"), "finish-at-expiry"),
    "detaches": (str(ROOT / "tests" / "attacks" / "detach_and_linger.py"), "boundaries"),
}


def _single_process(select: str):
    return [info for info in runner.selected(select)
            if info.parts == 1 and family(info.module) not in PROCESS_FAMILIES]


def _no_fork():
    raise AssertionError("a judge run here forked")


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_judge_here_gives_what_a_forked_judge_gives(name, monkeypatch):
    impl, select = PROGRAMS[name]
    settings = Settings(impl, 1.0, (LESSON_SEED,), False)
    outcomes = set()
    for info in _single_process(select):
        (forked,), _ = runner.run_unit(Unit(info, None), settings)
        with monkeypatch.context() as patch:
            patch.setattr(os, "fork", _no_fork)  # it runs in this process
            (here,), _ = runner.run_unit(Unit(info, None), settings, in_lane=True)
        assert json.dumps(result_to_json(here), sort_keys=True) == \
            json.dumps(result_to_json(forked), sort_keys=True), info.id
        outcomes.add(here.outcome if here is not None else Outcome.PASSED)
    assert outcomes  # the comparison compared something
    if name == "hang":  # timed out here as in a fork, with the call that hung
        assert outcomes == {Outcome.TIMED_OUT}
        assert here.step and here.step["op"] == "finish"


def test_a_judge_here_past_its_timeout_is_timed_out_at_its_last_step():
    def body():
        sandbox.report_step({"op": "claim", "actor": "A"})
        time.sleep(30)  # the alarm interrupts it

    start = time.monotonic()
    failure = sandbox.run(body, timeout=0.3, inline=True)
    assert time.monotonic() - start < 10
    assert failure.outcome == Outcome.TIMED_OUT and failure.step == {"op": "claim", "actor": "A"}
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_bug_of_the_check_here_is_a_grader_bug_and_leaves_the_process_as_it_was():
    before = signal.getsignal(signal.SIGALRM)
    failure = sandbox.run(lambda: 1 / 0, timeout=5, inline=True)
    assert failure.outcome == Outcome.ERRORED and failure.kind == Kind.GRADER_BUG
    assert "ZeroDivisionError" in failure.error
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert sandbox.run(lambda: None, timeout=5, inline=True) is None  # and the next one runs


def _cpu_limit(pid: int) -> str:
    with open(f"/proc/{pid}/limits") as f:
        return next(line for line in f if line.startswith("Max cpu time")).split()[3:5]


def test_targets_of_a_judge_here_get_the_cpu_limit_a_forked_judge_would_give_them():
    def body():  # a forked judge's memory is its own (nor may it write here): it answers data
        target = TargetProcess("solutions.queue")
        try:
            return {"limit": _cpu_limit(target.pid)}
        finally:
            target.close()

    seen = {"here": sandbox.run(body, timeout=7, inline=True)["limit"],
            "forked": sandbox.run(body, timeout=7)["limit"],
            "after": body()["limit"]}  # outside a judge: this process's own limits again
    expected = [str(7 + sandbox.CPU_SLACK), str(7 + sandbox.CPU_SLACK + 5)]
    assert seen["here"] == seen["forked"] == expected
    assert seen["after"] == _cpu_limit(os.getpid())


def test_a_lane_whose_judge_cannot_be_stopped_costs_only_its_own_check(monkeypatch):
    real = runner.run_unit

    def stuck_on_one(unit, settings, **kwargs):
        if unit.check.id == "finish-at-expiry":
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
            time.sleep(3600)  # as a judge stuck where no signal reaches it
        return real(unit, settings, **kwargs)

    monkeypatch.setattr(runner, "run_unit", stuck_on_one)  # the lanes are forks: they see it
    monkeypatch.setattr(lanes, "backstop", lambda unit, settings:
                        1.0 if unit.check.id == "finish-at-expiry" else 120.0)
    start = time.monotonic()
    results = runner.run_checks("solutions.queue", jobs=1, select="boundaries")
    assert time.monotonic() - start < 60
    by_id = {r.id: r for r in results}
    assert by_id["finish-at-expiry"].result.kind == Kind.GRADER_BUG
    assert "did not answer in time" in by_id["finish-at-expiry"].result.error
    assert all(r.passed for r in results if r.id != "finish-at-expiry")
    assert len(results) == 6


def test_a_judge_here_whose_clean_up_breaks_after_the_alarm_is_timed_out_not_a_grader_bug():
    # A check whose `finally` asks the target once more (faults.injected_fault drops its
    # trigger): the alarm's unwinding closed the proxy, so that clean-up raises TargetClosed.
    # The code under grade hung; the grader did not fail (issue 28, "The grader blames itself").
    def body():
        sandbox.report_step({"op": "claim", "actor": "A"})
        try:
            time.sleep(30)  # the alarm interrupts it
        finally:
            raise TargetClosed("the target process is closed (a judge callback raised)")

    failure = sandbox.run(body, timeout=0.3, inline=True)
    assert failure.outcome == Outcome.TIMED_OUT and failure.kind is None
    assert failure.step == {"op": "claim", "actor": "A"}
    assert sandbox.run(lambda: 1 / 0, timeout=5, inline=True).kind == Kind.GRADER_BUG  # reset
