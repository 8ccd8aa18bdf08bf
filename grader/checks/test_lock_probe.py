"""After the claim commits, the lock is released and only then is the job sent: while A's send is
waiting on the network, new intake and other workers' claims must go ahead.

The probe runs inside A's `send`: another connection enqueues a new job and B claims a different
pending job on a connection of its own, each with a short busy timeout. If A's connection holds a
lock, the busy timeout surely expires ("database is locked"), so the verdict does not depend on
timing; the waits are measured only to tell the student how long they were blocked.
"""

from __future__ import annotations

import sqlite3
import time

from lab import store
from lab.store import Claim

from grader.checkdef import check
from .situations import done, leased
from grader.harness.judge.outcomes import CheckFailed
from grader.harness.judge.scenario import ManualClock, insert_job
from grader.harness.wire.values import RaisedInTarget
from .test_work_once import expect_a_claim

PROBE_BUSY_MS = 150  # how long the probe's connections wait for a lock before giving up
#: The message for what A's lock blocked (new intake, another worker's claim, both), by what held
#: it: an open transaction, or, with none open, a statement still running (a cursor kept).
BLOCKED = {
    ("both", False): "lock-blocked-both", ("both", True): "lock-blocked-both-statement",
    ("enqueue", False): "lock-blocked-enqueue",
    ("enqueue", True): "lock-blocked-enqueue-statement",
    ("claim", False): "lock-blocked-claim", ("claim", True): "lock-blocked-claim-statement",
}


@check("lock-free-during-send", points=4)
def test_lock_free_during_send(lab):
    """Inside A's send, a new job is enqueued and B claims another pending job (busy timeout
    150 ms each): both succeed, and A's connection has no open transaction. Then once more with
    A restarted under the same name while its earlier lease still runs (the lesson's same-name
    restart): what A's connection holds while it sends must not depend on how many leases A
    holds (a query of A's leases read in part keeps its statement, and its lock, running)."""
    w = lab.world
    job = lab.enqueue(qty=5)
    other = lab.enqueue(qty=7)
    before, other_before = lab.row(job), lab.row(other)
    clock = ManualClock(w.t0)
    until = w.t0 + w.lease_ms
    result, seen = _work_once_probed(lab, clock)
    if "in_transaction" not in seen:
        with lab.setup():  # A never got to send: nothing to probe
            lab.fail("lock-send-not-called", job=job, result=result)
    _judge_probe(lab, seen, job, other)
    lab.expect(seen["claim"]["result"],
               Claim(id=other, qty=other_before["qty"], owner=w.name("B"), token=1, attempt=1,
                     lease_until=until),
               job=other, row=leased(other_before, w.name("B"), token=1, attempts=1,
                                     lease_until=until),
               detail="lock-probe-claim", other=other)
    lab.expect(result, True, job=job,
               row=done(leased(before, w.name("A"), token=1, attempts=1, lease_until=until),
                        clock.now))
    # Round two: A restarts under the same name and claims the pending job the probe enqueued;
    # before that lease runs out, its work_once takes the next job and sends it.
    earlier = lab.claim(w.name("A"), now=clock.now, lease_ms=w.lease_ms)
    if type(earlier) is not Claim:  # the checks of claim tell what it did instead
        return
    lab.note("timeline.lock-probe.restarted", job=earlier.id, until=earlier.lease_until)
    job, other = lab.enqueue(qty=4), lab.enqueue(qty=6)
    result, seen = _work_once_probed(lab, clock)
    if "in_transaction" in seen:
        _judge_probe(lab, seen, job, other)


def _work_once_probed(lab, clock: ManualClock) -> tuple[object, dict]:
    """A's work_once, the probe run inside its send: (what it returned, what the probe saw;
    nothing if send was not called)."""
    seen: dict = {}

    def send(claim):
        try:
            expect_a_claim(lab, claim)
            seen.update(probe_while_sending(lab, claim, clock.now))
        except CheckFailed as failed:  # the verdict is given after work_once, not through it
            seen["failed"] = failed

    result = lab.work_once(lab.world.name("A"), send, clock, lab.world.lease_ms)
    if "failed" in seen:
        raise seen["failed"]
    return result, seen


def _judge_probe(lab, seen: dict, job: int, other: int) -> None:
    """Fail if A's connection blocked the probe or had a transaction open inside send."""
    blocked = [name for name in ("enqueue", "claim") if seen[name]["error"]]
    if blocked:
        # what held the lock: an open transaction, or (none open) a statement of A's still
        # running, a cursor not read to its end and kept: each is told as what it is
        statement = not seen["in_transaction"] and any(seen["unfinished"] or ())
        lab.fail(BLOCKED["both" if len(blocked) == 2 else blocked[0], statement],
                 job=job, other=other, busy_ms=PROBE_BUSY_MS,
                 enqueue_error=seen["enqueue"]["error"], enqueue_ms=seen["enqueue"]["waited_ms"],
                 claim_error=seen["claim"]["error"], claim_ms=seen["claim"]["waited_ms"])
    if seen["in_transaction"]:
        lab.fail("lock-transaction-open", job=job)


def probe_while_sending(lab, claim: Claim, now: int) -> dict:
    """What other connections can do while A is inside send; every wait bounded by the busy
    timeout. Returns in_transaction and, for 'enqueue' and 'claim', the error and the wait."""
    in_transaction = lab.conn.in_transaction
    lab.note("timeline.lock-probe.in-send", job=claim.id, in_transaction=in_transaction)
    seen = {"in_transaction": in_transaction, "unfinished": lab.conn.unfinished()}

    # The judge's own connection, opened plainly: store.connect would also set the journal mode,
    # which waits for a lock of its own if the code under grade switched to WAL (a cause the
    # journal-mode checks name), and would fail here as if the grader were at fault.
    intake = sqlite3.connect(str(lab.path), timeout=PROBE_BUSY_MS / 1000, isolation_level=None)
    try:
        try:
            mode = intake.execute("PRAGMA journal_mode").fetchone()[0]
        except sqlite3.OperationalError:  # locked even for reading (A holds an exclusive lock):
            mode = "delete"  # the enqueue below meets the same lock and says so
        if mode.lower() != "delete":  # the cause to name: what is blocked then is another story
            lab.fail("tx-journal-file", mode=mode, after="claim")
        # the job gets the world's next id, as every job the Lab enqueues (not the table's
        # next rowid: a job enqueued after it would be given that id again)
        outcome, waited = _timed(lambda: insert_job(intake, lab.world.next_id(),
                                                    qty=lab.world.qty(1),
                                                    deadline=lab.world.far))
    finally:
        intake.close()  # a failed write must not keep a lock of its own
    seen["enqueue"] = {"error": _error(outcome), "waited_ms": waited}
    if seen["enqueue"]["error"]:
        lab.note("timeline.lock-probe.enqueue-blocked", error=_error(outcome), waited_ms=waited,
                 busy_ms=PROBE_BUSY_MS)
    else:
        lab.note("timeline.lock-probe.enqueue-ok", job=outcome, waited_ms=waited,
                 busy_ms=PROBE_BUSY_MS)

    b_conn = lab.connect(busy_timeout_ms=PROBE_BUSY_MS)
    got: list = []
    try:
        outcome, waited = _timed(lambda: lab.raises(
            lambda: got.append(lab.claim(lab.world.name("B"), now=now,
                                         lease_ms=lab.world.lease_ms, conn=b_conn))))
    finally:
        b_conn.close()
    seen["claim"] = {"error": _error(outcome), "waited_ms": waited,
                     "result": got[0] if got else None}
    return seen


def _timed(call):
    """(what call returned or raised, milliseconds it took): the time is for the report only."""
    started = time.monotonic()
    try:
        outcome = call()
    except sqlite3.OperationalError as exc:
        outcome = exc
    return outcome, round((time.monotonic() - started) * 1000)


def _error(outcome) -> str | None:
    """SQLite's message ("database is locked"), from the judge's error or the target's."""
    if isinstance(outcome, RaisedInTarget):
        return outcome.message.split(": ", 1)[-1]
    return str(outcome) if isinstance(outcome, BaseException) else None
