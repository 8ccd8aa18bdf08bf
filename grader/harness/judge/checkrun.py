"""The judge's side of one check's run (`run_check`: start the target process, run the check's
body on a `Lab`, turn every ending into a failure) and the grade's probe before any check
(`probe`). This process never imports the code under grade.
"""

from __future__ import annotations

import itertools
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from lab.store import Claim

from grader.results import Cause, Failure, Kind, Outcome

from .outcomes import (CheckFailed, TargetRaised, WriteLocked, error_line, limit_hit,
                       start_failure)
from .invariants import RowModel
from .scenario import Lab, ManualClock
from .target_client import START_TIMEOUT
from .target_errors import FunctionHung, TargetProcessError
from .world import LESSON_SEED

def run_check(body: Callable[["Lab"], None], target_spec: str, workdir: str,
              seed: int = LESSON_SEED, call_timeout: float = 10.0,
              check: str = "", hung: dict | None = None, detailed: bool = True,
              alone: bool = False, model: type[RowModel] | None = None) -> Failure | None:
    """Judge side of one check: start the target process, run the body, turn every ending into
    a failure (None: passed). This process never imports the code under grade. `hung`: the
    functions the grade's probe saw hang (`Lab.hung`). `detailed`: False for a run whose
    failure only its outcome is kept of (`Lab.detailed`). `alone`: the check starts no
    processes of its own (`judge_wait_ms`). `model`: the contract's model of the rows, which
    the Lab holds every call of a check that starts no processes to (`invariants.RowModel`;
    None: the connection and clock rules only)."""
    try:
        lab = Lab(target_spec, workdir, seed, call_timeout, check, hung, alone=alone,
                  model=model)
        lab.detailed = detailed
    except TargetProcessError as exc:
        return start_failure(exc, target_spec, START_TIMEOUT)
    try:
        failure = _verdict(lab, body)
    finally:
        lab.close()
        sys.stdout.flush()
    if failure is not None:
        lab.name_roles(failure)
        cause = lab.cause or seen_cause(lab, failure)
        if cause is not None and failure.cause is None and failure.kind != Kind.GRADER_BUG:
            failure.cause = cause
        mark_left_open(lab, failure)
    return failure


#: The failures a lock the code still holds explains: the grader's own read or write found the
#: database locked after a call returned.
LOCKED_DETAILS = ("grader-write-locked", "grader-read-locked")


def seen_cause(lab: Lab, failure: Failure) -> str | None:
    """The mistake the check saw behind `failure`, where the failure itself would tell another
    story (results.Cause): a call that changed its connection's isolation_level (every plain
    write after it opens a transaction nobody commits), or a call that returned with its
    transaction open when the check then found a row unchanged (the change is there, not
    committed: "the value is right, the row is wrong" would blame the row)."""
    if lab.isolation_changed_by is not None:
        return Cause.of(Cause.ISOLATION_LEVEL_CHANGED, lab.isolation_changed_by)
    if (lab.left_open is not None and lab.left_in_transaction
            and failure.kind == Kind.ROW_MISMATCH and failure.timeline
            and any(e is lab.left_open for e in failure.timeline)):
        return Cause.of(Cause.TRANSACTION_LEFT_OPEN, lab.left_open.get("op", "?"))
    return None


def mark_left_open(lab: Lab, failure: Failure) -> None:
    """A lock the code still held (the grader found the database locked): the step marked is
    the call that left its transaction or statement open (`Lab.left_open`), not the last call
    (view.failing_step reads `left_open`)."""
    if (failure.detail in LOCKED_DETAILS and lab.left_open is not None and failure.timeline
            and any(e is lab.left_open for e in failure.timeline)):
        lab.left_open["left_open"] = True


#: Whether `_verdict` keeps the exception a check ended with (`keep_check_exception`).
_keep_exception = False
_kept_exception: BaseException | None = None


def keep_check_exception(keep: bool) -> None:
    """Keep the exception the next checks judged in this process end with (a CheckFailed, or
    the target's error as raised in the check's body), for a debugger to stop where it was
    raised (the pytest plugin's --pdb); forget the one kept before."""
    global _keep_exception, _kept_exception
    _keep_exception, _kept_exception = keep, None


def kept_check_exception() -> BaseException | None:
    """The exception kept by the last check judged in this process, or None."""
    return _kept_exception


def _verdict(lab: "Lab", body: Callable[["Lab"], None]) -> Failure | None:
    global _kept_exception
    try:
        body(lab)
        lab.settle()
        return lab.broken_rule()
    except CheckFailed as failed:
        if _keep_exception:
            _kept_exception = failed
        return failed.failure
    except FunctionHung as hung:  # asked for outside the Lab's calls: stopped all the same
        return lab.not_graded(hung.function, None)
    except WriteLocked as locked:  # a lock the code under grade still holds
        return Failure(Outcome.FAILED, Kind.DETAIL,
                       detail="grader-read-locked" if locked.reading else "grader-write-locked",
                       params={"error": locked.error}, timeline=lab.timeline)
    except TargetRaised as raised:
        if _keep_exception:
            _kept_exception = raised
        if raised.event is not None:
            raised.event["raised"] = error_line(raised.exc)
        limit = limit_hit(raised.exc)
        if limit is not None:
            return Failure(Outcome.RESOURCE_LIMIT, Kind.RESOURCE_LIMIT, error=limit,
                           timeline=lab.timeline)
        return Failure(Outcome.ERRORED, Kind.RAISED, function=raised.function,
                       error=error_line(raised.exc), where=raised.where, timeline=lab.timeline,
                       setup=raised.setup or None)


#: The functions the probe calls, in its order (finish only when claim returned a Claim).
PROBED = ("claim", "finish", "work_once")


def probe(target_spec: str, workdir: str, start_timeout: float,
          call_timeout: float) -> Failure | dict:
    """Before any check (grader.runner's preflight): load the target, then call each function
    once in the plainest situation, in the lesson's world, each call given `call_timeout`
    seconds: claim with one pending job and nothing else running, finish with the Claim it
    returned (before its lease_until); at the same time, in a target process and a database of
    its own, work_once with one pending job (a send that returns, a clock that stands still).
    The load failure every check gets, or {"hung": {function: call_timeout}} for the functions
    that did not return (a raise, a wrong value, an exit: the checks say; the probe looks only
    for a hang). A call that broke the target process is followed by a fresh one (in a folder
    of its own).

    Why work_once at the same time, on its own: a claim that never returns would otherwise be
    waited for twice, one wait after the other (claim's, then work_once's over it); side by
    side the probe waits once. Its situation is the same whatever claim did."""
    hung: dict[str, float] = {}
    labs: list[Lab] = []
    folders = itertools.count()  # one folder each, whichever thread asks (next() holds the GIL)

    def fresh() -> Lab:
        folder = Path(workdir) / f"probe-{next(folders)}"
        folder.mkdir()
        labs.append(Lab(target_spec, str(folder), LESSON_SEED, call_timeout, "probe",
                        start_timeout=start_timeout, alone=True))
        return labs[-1]

    def call(function: str, lab: Lab, make: Callable[[Lab], Any]) -> tuple[Any, Lab | None]:
        """make(lab)'s value, and the lab to go on with (None: its target process is gone)."""
        try:
            return make(lab), lab
        except CheckFailed as failed:
            if failed.failure.outcome == Outcome.TIMED_OUT:
                hung[function] = call_timeout
            return None, None if failed.failure.outcome != Outcome.FAILED else lab
        except TargetRaised:
            return None, lab

    raised: list[BaseException] = []  # what work_once's thread raised, raised again here

    def work_once_alone() -> None:
        try:
            lab = fresh()
            lab.enqueue()
            w = lab.world
            call("work_once", lab, lambda lab: lab.work_once(w.name("B"), lambda claim: None,
                                                             ManualClock(w.t0 + 1), w.lease_ms))
        except BaseException as exc:  # its target process would not start, or a grader bug
            raised.append(exc)

    beside: threading.Thread | None = None
    try:
        try:
            lab = fresh()  # the target loads (or not) once, before anything runs beside it
        except TargetProcessError as exc:
            return start_failure(exc, target_spec, start_timeout)
        beside = threading.Thread(target=work_once_alone, name="probe-work_once", daemon=True)
        beside.start()
        w = lab.world
        lab.enqueue()
        claimed, lab = call("claim", lab, lambda lab: lab.claim(w.name("A"), now=w.t0,
                                                                lease_ms=w.lease_ms))
        if type(claimed) is Claim:  # (so claim's target process is still there)
            call("finish", lab, lambda lab: lab.finish(claimed, now=w.t0 + 1))
        beside.join()
        if raised:
            raise raised[0]
    except TargetProcessError as exc:  # a fresh target process that would not start
        return start_failure(exc, target_spec, start_timeout)
    finally:
        if beside is not None:
            beside.join()  # (its calls are bounded: call_timeout)
        for lab in labs:
            lab.close()
    return {"hung": dict(sorted(hung.items(), key=lambda item: PROBED.index(item[0])))}
