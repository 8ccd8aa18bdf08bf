"""work_once: claim with one clock reading, send the committed stamp once, finish with a fresh one.

The checks hand work_once a `ManualClock` and a `send` of the grader's own (a `Courier`) that
moves the clock (sending takes time) or raises (the network failed), and records what it was
given and what the committed row held at that moment.
"""

from __future__ import annotations

import sqlite3

from lab.store import Claim

from grader.checkdef import check
from .faults import expect_others_can_write
from .situations import done, leased
from grader.harness.judge import target_errors
from grader.harness.judge.outcomes import CheckFailed, TargetRaised, error_line, expected_row, show
from grader.harness.judge.scenario import Lab, ManualClock
from grader.results import Kind, RowDiff


class SendFailed(target_errors.SendFailed):
    """The grader's send failing, the way a lost connection to the receiver would (the target's
    send raises the target process's own SendFailed with this message)."""


class Courier:
    """The `send` callback: takes `takes_ms` of clock time, then raises `error` if given."""

    def __init__(self, lab: Lab, clock: ManualClock, takes_ms: int = 0,
                 error: BaseException | None = None):
        self.lab, self.clock, self.takes_ms, self.error = lab, clock, takes_ms, error
        self.sent: list = []  # what send was given, one entry a call
        self.rows: list[dict | None] = []  # the committed row of that job at that moment
        self.readings_before = 0  # clock readings work_once took before the (first) send
        self.ran_before = 0  # statements work_once had run when its (last) send returned
        self.unreadable: dict | None = None  # the row could not be read: reported afterwards

    def __call__(self, claim) -> None:
        if not self.sent:
            self.readings_before = len(self.clock.readings)
        self.sent.append(claim)
        self.rows.append(self._row(claim))
        if len(self.sent) == 1:
            self.meanwhile(claim)
        self.clock.advance(self.takes_ms)
        self.ran_before = self.lab.target.statements_so_far()
        if self.error is not None:
            raise self.error

    def meanwhile(self, claim) -> None:
        """What happens while the first send waits for the receiver (nothing, here: another
        worker acts in the checks of grader.checks.test_late_finish)."""

    def _row(self, claim) -> dict | None:
        # A row that cannot be read is reported once work_once has returned (a failure
        # raised inside send would stop the check there, at send, not at what work_once did).
        if not isinstance(claim, Claim):
            return None
        try:
            return self.lab.row(claim.id)
        except CheckFailed as failed:
            self.unreadable = self.unreadable or failed.failure
            return None

    @property
    def readings_after(self) -> int:
        return len(self.clock.readings) - self.readings_before

    def ran_after(self) -> int:
        """The statements work_once ran after send returned (asked once it has returned)."""
        return self.lab.last_ran - self.ran_before


# -- what the checks expect ------------------------------------------------------------------------
def expect_a_claim(lab: Lab, sent) -> None:
    """What send was given is a Claim with fields of the contract's types (it came back from the
    target process as data: a Claim with a wrong field type is a Foreign naming that field)."""
    wrong = getattr(sent, "wrong_field", None)
    if wrong:
        lab.fail_wrong_field_type("claim", show(sent), **wrong)
    if type(sent) is not Claim:
        lab.fail("work-once-send-not-claim", sent=show(sent))


def expect_sent_once(lab: Lab, courier: Courier) -> None:
    """send was called exactly once, with a stamp the committed row holds."""
    if courier.unreadable:
        raise CheckFailed(courier.unreadable)
    if len(courier.sent) != 1:
        lab.fail("work-once-send-count", times=len(courier.sent))
    sent, row = courier.sent[0], courier.rows[0]
    expect_a_claim(lab, sent)
    holds = expected_row(row, status="leased", owner=sent.owner, token=sent.token,
                         attempts=sent.attempt, lease_until=sent.lease_until,
                         qty=sent.qty) if row else None
    if row != holds:
        lab.fail_row(RowDiff(sent.id, row, holds), detail="work-once-send-uncommitted",
                     sent=show(sent), job=sent.id)


def expect_clock_read_around_send(lab: Lab, courier: Courier, result=None) -> None:
    """The clock was read for the claim (before send) and again for the finish (after it); a
    work_once that ran no statement at all after send never called finish: told as that."""
    if courier.readings_after < 1 and courier.ran_after() == 0:
        lab.fail("work-once-no-finish", result=show(result))
    if courier.readings_before < 1 or courier.readings_after < 1:
        lab.fail("work-once-clock-reads", before=courier.readings_before,
                 after=courier.readings_after)


# -- the checks ------------------------------------------------------------------------------------
class SlowClaimClock(ManualClock):
    """The clock of a claim that takes its whole lease: read once the job's row holds the
    claim's token (the claim committed), it is already `late`, whatever reads it then."""

    def __init__(self, lab: Lab, start: int, job: int, token: int, late: int):
        super().__init__(start)
        self.lab, self.job, self.token, self.late = lab, job, token, late

    def __call__(self) -> int:
        if self.now < self.late and self._claimed():
            self.now = self.late
        return super().__call__()

    def _claimed(self) -> bool:
        try:
            row = self.lab.observer.execute("SELECT status, token FROM jobs WHERE id = ?",
                                            (self.job,)).fetchone()
        except sqlite3.Error:  # locked by what the code holds: not committed
            return False
        return row is not None and tuple(row) == ("leased", self.token)


@check("work-once-fresh-clock", points=3)
def test_work_once_fresh_clock(lab):
    """send takes 999 ms of a 1000 ms lease: finished, finished_at=999. Then the claim itself
    takes the whole lease (read once it has committed, the clock is past lease_until): send is
    called all the same, for the job was claimed, and finish is rejected. Then send takes
    1001 ms: the lease ran out while sending, so finish is rejected and the job stays leased."""
    w = lab.world
    a, lease_ms = w.name("A"), w.lease_ms
    clock = ManualClock(w.t0)
    job = lab.enqueue(qty=5)
    before = lab.row(job)
    courier = Courier(lab, clock, takes_ms=lease_ms - 1)
    result = lab.work_once(a, courier, clock, lease_ms)
    expect_sent_once(lab, courier)
    expect_clock_read_around_send(lab, courier, result)
    lab.expect(result, True, job=job, detail="work-once-in-time", now=clock.now,
               row=done(leased(before, a, token=1, attempts=1, lease_until=w.t0 + lease_ms),
                        clock.now))

    # a claim that takes its whole lease: read once it has committed, the clock is past it
    start = clock.now
    job = lab.enqueue(qty=4)
    before = lab.row(job)
    slow = SlowClaimClock(lab, start, job, token=1, late=start + lease_ms + 1)
    lab.note("timeline.note.work-once.slow-claim", late=start + lease_ms + 1)
    courier = Courier(lab, slow)
    result = lab.work_once(a, courier, slow, lease_ms)
    expect_sent_once(lab, courier)
    lab.expect(result, False, job=job, detail="work-once-too-late", now=slow.now,
               lease_until=start + lease_ms,
               row=leased(before, a, token=1, attempts=1, lease_until=start + lease_ms))

    with lab.setup():  # that job's lease still runs: out of the queue, as the first one is
        lab.remove_jobs()
    job = lab.enqueue(qty=3)
    before = lab.row(job)
    courier = Courier(lab, clock, takes_ms=lease_ms + 1)
    result = lab.work_once(a, courier, clock, lease_ms)
    expect_sent_once(lab, courier)
    expect_clock_read_around_send(lab, courier, result)
    lab.expect(result, False, job=job, detail="work-once-too-late", now=clock.now,
               lease_until=start + lease_ms,
               row=leased(before, a, token=1, attempts=1, lease_until=start + lease_ms))



class Interrupted(SendFailed, KeyboardInterrupt):
    """The grader's send interrupted (Ctrl-C while it waited for the receiver): in a target
    process, send raises a KeyboardInterrupt, which is no Exception."""


@check("work-once-send-raises", points=3)
def test_work_once_send_raises(lab):
    """send raises: the same exception comes out of work_once, the job stays leased as claimed
    (not done), and no transaction or lock is left behind. Then again, for another job, with
    send interrupted (a KeyboardInterrupt: not an Exception, and no less an error of send's)."""
    w = lab.world
    send_raises(lab, SendFailed("connection reset by the receiver"), qty=5)
    with lab.setup():  # a queue of one job again: the same claim as the first time
        lab.remove_jobs()
        job = lab.enqueue(qty=7)
    send_raises(lab, Interrupted("interrupted while waiting for the receiver"), job=job,
                at=w.t0 + 2)


def send_raises(lab: Lab, error: SendFailed, qty: int | None = None, job: int | None = None,
                at: int | None = None) -> None:
    """A's work_once at `at` (t0) claims `job` (a new one of `qty`), and its send raises
    `error`: the same exception comes out, the job stays leased as claimed, no transaction or
    lock is left behind."""
    w = lab.world
    at = w.t0 if at is None else at
    clock = ManualClock(at)
    job = lab.enqueue(qty=qty) if job is None else job
    before = lab.row(job)
    courier = Courier(lab, clock, takes_ms=1, error=error)
    try:
        came_back, raised = lab.work_once(w.name("A"), courier, clock, w.lease_ms), None
    except TargetRaised as failed:
        if not courier.sent and getattr(failed.exc, "send_failed", None) is None:
            raise  # work_once failed before it got to send: that error is the failure
        came_back, raised = None, failed.exc
        failed.event["raised"] = error_line(raised)
    expect_sent_once(lab, courier)
    if raised is None:
        lab.fail("work-once-not-raised", error=error_line(error), came_back=show(came_back))
    if raised.send_failed is None:  # neither that very exception nor another SendFailed
        lab.fail("work-once-other-error", error=error_line(error), raised=error_line(raised))
    lab.expect_row(job, leased(before, w.name("A"), token=1, attempts=1,
                               lease_until=at + w.lease_ms),
                   detail="work-once-not-leased-after-raise")
    if lab.conn.in_transaction:
        lab.fail("tx-open-after-error", function="work_once", error=error_line(raised))
    expect_others_can_write(lab, "work_once")


@check("work-once-empty-queue", points=1)
def test_work_once_empty_queue(lab):
    """Nothing to claim: work_once returns None and never calls send. First the same work_once
    must claim a claimable job and call send (what it returns there is graded by the other
    work_once checks): None from a work_once that returns None whatever the queue holds says
    nothing about an empty queue. That job is then taken out of the queue."""
    clock = ManualClock(lab.world.t0)
    courier = Courier(lab, clock)
    job = lab.enqueue(qty=5)
    with lab.setup():
        try:
            lab.work_once(lab.world.name("A"), courier, clock, lab.world.lease_ms)
        except CheckFailed as failed:  # a wrong return type: not this check's rule (a raise
            #                           is work_once's error, as in every work_once check)
            if failed.failure.kind not in (Kind.WRONG_TYPE, Kind.WRONG_FIELD_TYPE):
                raise
        if not courier.sent:
            lab.fail("work-once-never-claims", job=job)
    lab.remove_jobs()
    courier = Courier(lab, clock)
    result = lab.work_once(lab.world.name("A"), courier, clock, lab.world.lease_ms)
    if courier.sent:
        lab.fail("work-once-sent-nothing", times=len(courier.sent), sent=show(courier.sent[0]))
    lab.expect(result, None, detail="work-once-nothing-to-do")
