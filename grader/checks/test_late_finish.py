"""work_once while another worker acts inside its send: the late worker's finish must not land.

The lesson's courier A claims, then waits on the network inside `send`; meanwhile the queue moves
on: A's lease runs out and B claims the job, or B finishes it, or A restarts under the same name
and claims it again, or the job reaches its deadline. When A's send finally returns, work_once
finishes with the stamp its own claim returned, and only that one: its finish is rejected, and
the new holder's row stays exactly as B left it. A work_once that builds the stamp it finishes
with any other way (read back from the row after send, a token re-read, an UPDATE by id) marks
the new holder's lease done: the overwrite the lesson exists to prevent.

The grader's `send` (a `Courier` whose `meanwhile` acts) runs the other worker's steps itself,
from inside A's send, on the same logical clock (`ManualClock`): B calls your `claim` and
`finish` on a connection of its own, the operator edits the row on the grader's. Nothing waits
for anything: the interleaving is forced, never timed. A last check is the control: B works on
another job meanwhile, and A's finish, in time, must land.

Each check grades what work_once returns, that send ran exactly once, with the committed stamp,
and every row after the call, as the contract says. What B and the operator do inside send is
the check's setup (B's claim must hand out what the contract says, or the check cannot go on).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from lab.store import Claim

from grader.checkdef import check
from grader.harness.judge.outcomes import show
from grader.harness.judge.scenario import Conn, Lab, ManualClock
from .situations import done, leased
from .steps import claims, expect_rows, finishes
from .test_work_once import Courier, expect_a_claim, expect_sent_once

#: The busy timeout of the other worker's connection. Nothing can let a lock go while B's call
#: waits (the grader answers every statement of both connections on one thread, and A is
#: waiting inside send), so a wait could only end in "database is locked": none is made.
B_BUSY_TIMEOUT = 0


class Meanwhile(Courier):
    """A's `send`: records what it was given (as the work_once checks' Courier does), then, on
    the first call, runs `acts(claim)`: the other worker's and the operator's steps, each at
    its own instant (given to claim and finish as `now`); then A's clock reaches `returns_at`
    and send returns."""

    def __init__(self, lab: Lab, clock: ManualClock, acts: Callable[[object], None],
                 returns_at: int):
        super().__init__(lab, clock)
        self.acts, self.returns_at = acts, returns_at

    def meanwhile(self, claim) -> None:
        self.acts(claim)
        self.clock.now = max(self.clock.now, self.returns_at)


def expect_a_sent(lab: Lab, claim, job: int, before: dict, until: int) -> None:
    """Inside A's send: what it was given must be the stamp A's claim committed (token 1, its
    lease to `until`): else the check cannot go on (the work_once checks grade that)."""
    w = lab.world
    with lab.setup():
        expect_a_claim(lab, claim)
        lab.expect(claim, Claim(id=job, qty=before["qty"], owner=w.name("A"), token=1,
                                attempt=1, lease_until=until),
                   job=job, row=leased(before, w.name("A"), token=1, attempts=1,
                                       lease_until=until))


def other_worker(lab: Lab) -> Conn:
    """The connection the other worker (B, or A restarted) calls claim and finish on."""
    return lab.connect(busy_timeout_ms=B_BUSY_TIMEOUT)


def claims_meanwhile(lab: Lab, role: str, conn: Conn, now: int, job: int, *, token: int,
                     attempt: int, lease_ms: int | None = None) -> tuple[Claim, dict]:
    """Inside A's send, the worker cast as `role` claims on `conn` and must get `job` as its
    `token`-th generation (`steps.claims`), leaving no transaction open: the check's setup.
    Returns the claim and the new row."""
    with lab.setup():
        got = claims(lab, role, now=now, job=job, token=token, attempt=attempt,
                     lease_ms=lease_ms, conn=conn)
    no_transaction_left(lab, conn, "claim")
    return got


def no_transaction_left(lab: Lab, conn: Conn, function: str) -> None:
    """After the other worker's call inside send: its connection has no transaction open (one
    left open would hold the lock A's finish needs: the setup cannot go on)."""
    if conn.in_transaction:
        with lab.setup():
            lab.fail("late-finish.other-left-transaction", function=function)


def work_once_meanwhile(lab: Lab, acts: Callable[[object], None], returns_at: int):
    """A runs work_once at t0; inside its send `acts` runs, and send returns at `returns_at`.
    send must have run exactly once, with the committed stamp (how often the clock is read is
    work-once-fresh-clock's to grade: here what work_once returns and the rows say whether a
    finish landed). Returns what work_once returned."""
    w = lab.world
    clock = ManualClock(w.t0)
    courier = Meanwhile(lab, clock, acts, returns_at)
    result = lab.work_once(w.name("A"), courier, clock, w.lease_ms)
    expect_sent_once(lab, courier)
    return result


def side_by_side(late: Claim, holder: Claim) -> dict:
    """Both holders' stamps for the failure's sentence: the late worker's, the new holder's,
    and the fields in which they differ, each as `field late / holder` (language-neutral)."""
    differ = ", ".join(f"{f.name} {getattr(late, f.name)!r} / {getattr(holder, f.name)!r}"
                       for f in dataclasses.fields(Claim)
                       if getattr(late, f.name) != getattr(holder, f.name))
    return {"a_stamp": show(late), "b_stamp": show(holder), "differ": differ}


def expect_late_finish_rejected(lab: Lab, result, job: int, row: dict, detail: str,
                                **params) -> None:
    """work_once returned False and the job's row (the check's only one) is `row`, as the
    other worker or the operator left it."""
    lab.expect(result, False, job=job, row=row, detail=detail, **params)


@check("late-finish-lease-taken", points=2)
def test_late_finish_lease_taken(lab):
    """The lesson's timeline inside work_once: A's send outlasts its lease; at 1000 ms, inside
    it, B claims the job (token=2); A's send returns at 1001 ms. work_once returns False, send
    ran once, and the row stays as B's claim left it."""
    w = lab.world
    b_conn = other_worker(lab)
    job = lab.enqueue(qty=5)
    before = lab.row(job)
    until = w.t0 + w.lease_ms
    back = until + w.pick("a-back", 1, 1, w.lease_ms - 1)
    seen: dict = {}

    def acts(claim) -> None:
        expect_a_sent(lab, claim, job, before, until)
        lab.note("timeline.note.late-finish.lease-ran-out", owner=w.name("A"), now=until,
                 lease_until=until)
        seen["b"], seen["row"] = claims_meanwhile(lab, "B", b_conn, until, job, token=2,
                                                  attempt=2)
        lab.note("timeline.note.late-finish.send-returns", owner=w.name("A"), now=back)
        seen["a"] = claim

    result = work_once_meanwhile(lab, acts, back)
    expect_late_finish_rejected(lab, result, job, seen["row"], "late-finish.lease-taken",
                                now=back, **side_by_side(seen["a"], seen["b"]))


@check("late-finish-job-done", points=1)
def test_late_finish_job_done(lab):
    """A's lease runs out inside its send; B claims the job at 1000 ms and finishes it at
    1200 ms (done); A's send returns at 1500 ms. work_once returns False, and the row stays
    done as B left it (B's finished_at)."""
    w = lab.world
    b_conn = other_worker(lab)
    job = lab.enqueue(qty=5)
    before = lab.row(job)
    until = w.t0 + w.lease_ms
    b_done = until + w.pick("b-finishes", 200, 1, w.lease_ms // 2)
    back = b_done + w.pick("a-back", 300, 1, w.lease_ms // 2)
    seen: dict = {}

    def acts(claim) -> None:
        expect_a_sent(lab, claim, job, before, until)
        lab.note("timeline.note.late-finish.lease-ran-out", owner=w.name("A"), now=until,
                 lease_until=until)
        seen["b"], _ = claims_meanwhile(lab, "B", b_conn, until, job, token=2, attempt=2)
        with lab.setup():
            seen["row"] = finishes(lab, seen["b"], now=b_done, accepted=True, conn=b_conn)
        no_transaction_left(lab, b_conn, "finish")
        lab.note("timeline.note.late-finish.send-returns", owner=w.name("A"), now=back)
        seen["a"] = claim

    result = work_once_meanwhile(lab, acts, back)
    expect_late_finish_rejected(lab, result, job, seen["row"], "late-finish.job-done",
                                now=back, finished_at=b_done,
                                **side_by_side(seen["a"], seen["b"]))


@check("late-finish-same-name", points=2)
def test_late_finish_same_name(lab):
    """Inside A's send, at 300 ms, the operator takes A's job back (quarantines it by hand and
    requeues it: attempts back to 0) and A, restarted under the same name, claims it again
    with a lease to the same instant (lease_ms=700): the same owner, attempt 1 again, the same
    lease_until. Only the token (2, not 1) tells the new run's stamp from the old. The old
    run's send returns at 700 ms: work_once returns False, and the row stays as the new run's
    claim left it."""
    w = lab.world
    a_conn = other_worker(lab)
    job = lab.enqueue(qty=5)
    before = lab.row(job)
    until = w.t0 + w.lease_ms
    taken = w.t0 + w.pick("taken-back", 300, 1, w.lease_ms // 2)
    back = taken + w.pick("a-back", 400, 1, until - taken - 1)
    seen: dict = {}

    def acts(claim) -> None:
        expect_a_sent(lab, claim, job, before, until)
        lab.note("timeline.note.late-finish.taken-back", owner=w.name("A"), job=job, now=taken)
        with lab.setup():
            lab.set_row(job, status="quarantined")
            lab.requeue(job)
        lab.note("timeline.note.late-finish.restart", owner=w.name("A"), lease_until=until)
        seen["new"], seen["row"] = claims_meanwhile(lab, "A", a_conn, taken, job, token=2,
                                                    attempt=1, lease_ms=until - taken)
        lab.note("timeline.note.late-finish.old-run-returns", owner=w.name("A"), now=back)
        seen["old"] = claim

    result = work_once_meanwhile(lab, acts, back)
    expect_late_finish_rejected(lab, result, job, seen["row"], "late-finish.same-name",
                                now=back, **side_by_side(seen["old"], seen["new"]))


@check("late-finish-past-deadline", points=1)
def test_late_finish_past_deadline(lab):
    """Inside A's send, at 200 ms, the operator moves the job's deadline earlier, to 600 ms,
    while A's lease runs to 1000 ms; A's send returns at 600 ms, exactly at the new deadline.
    work_once returns False, and the row stays as the operator left it: leased to A as
    claimed, with the new deadline."""
    w = lab.world
    job = lab.enqueue(qty=5)
    before = lab.row(job)
    until = w.t0 + w.lease_ms
    moved = w.t0 + w.pick("moved-at", 200, 1, w.lease_ms // 4)
    deadline = moved + w.pick("deadline", 400, 1, w.lease_ms // 2)
    back = deadline  # exactly at it, in every world: at now = deadline the deadline is reached
    row = dict(leased(before, w.name("A"), token=1, attempts=1, lease_until=until),
               deadline=deadline)
    seen: dict = {}

    def acts(claim) -> None:
        expect_a_sent(lab, claim, job, before, until)
        lab.note("timeline.note.late-finish.deadline-moved", owner=w.name("A"), job=job,
                 now=moved, deadline=deadline)
        with lab.setup():
            lab.set_row(job, deadline=deadline)
        lab.note("timeline.note.late-finish.send-returns", owner=w.name("A"), now=back)
        seen["a"] = claim

    result = work_once_meanwhile(lab, acts, back)
    expect_late_finish_rejected(lab, result, job, row, "late-finish.past-deadline", now=back,
                                deadline=deadline, lease_until=until, a_stamp=show(seen["a"]))


@check("late-finish-in-time", points=1)
def test_late_finish_in_time(lab):
    """The control: inside A's send, at 200 ms, B claims the other pending job; A's own job is
    left alone, and A's send returns at 600 ms, its lease still valid. work_once returns True,
    A's job is done at 600 ms, and B's job stays as B's claim left it."""
    w = lab.world
    b_conn = other_worker(lab)
    job = lab.enqueue(qty=5)
    other = lab.enqueue(qty=7)
    before = lab.row(job)
    until = w.t0 + w.lease_ms
    b_at = w.t0 + w.pick("b-claims", 200, 0, w.lease_ms // 4)
    back = b_at + w.pick("a-back", 400, 0, w.lease_ms // 2)
    seen: dict = {}

    def acts(claim) -> None:
        expect_a_sent(lab, claim, job, before, until)
        lab.note("timeline.note.late-finish.other-job", owner=w.name("A"), other=other)
        _, seen["other"] = claims_meanwhile(lab, "B", b_conn, b_at, other, token=1, attempt=1)
        lab.note("timeline.note.late-finish.send-returns", owner=w.name("A"), now=back)

    result = work_once_meanwhile(lab, acts, back)
    lab.expect(result, True, job=job, detail="late-finish.in-time", now=back, other=other,
               row=done(leased(before, w.name("A"), token=1, attempts=1, lease_until=until),
                        back))
    expect_rows(lab, {other: seen["other"]}, detail="late-finish.in-time", now=back,
                other=other)
