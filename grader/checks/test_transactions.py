"""claim and finish are short, whole transactions on the connection they are given.

Observed through the SQL the target runs on `lab.conn` (the grader's trace callback), through
`conn.in_transaction`, and through a second connection that must be able to write at once.
These checks grade only the shape of the transactions and what is left behind; what claim and
finish return is graded elsewhere, so a wrong value does not fail these checks twice.
"""

from __future__ import annotations

import contextlib
import sqlite3

from lab.store import Claim

from grader.checkdef import check
from . import txshape
from .faults import (ABORT, ERROR, KINDS, attempt, expect_no_transaction_left,
                     expect_others_can_write, fault_error, hidden_fault, hidden_locked_error,
                     injected_fault, is_locked_error, is_the_fault, masked_locked_error,
                     read_lock_held, write_lock_held)
from .steps import expect_rows, snapshot
from grader.harness.judge.outcomes import WriteLocked, error_line, expected_row, judge_write, show
from grader.harness.judge.scenario import Lab, ManualClock
from grader.results import RowDiff

#: txshape problem code -> the catalogue sentence that explains it, for claim.
CLAIM_DETAIL = {
    "no-sql": "tx-no-sql",
    "no-transaction": "tx-none",
    "outside": "tx-outside",
    "read-after": "tx-read-after",
    "write-outside": "tx-write-outside",
    "not-immediate": "tx-deferred",
    "exclusive": "tx-exclusive",
    "several": "tx-several",
    "left-open": "tx-left-open",
}

#: txshape problem code -> the catalogue sentence that explains it, for finish: claim's where
#: the consequence is the same; where claim's sentence speaks of two workers taking one pending
#: row, the race finish meets (a read, then a write the lock no longer covers: the new holder's
#: job marked done), and for a deferred BEGIN what SQLite does to a read lock that must become a
#: write lock while another worker writes ('database is locked' at once, no wait).
FINISH_DETAIL = {
    "no-sql": "tx-no-sql",
    "no-transaction": "tx-finish-not-atomic",
    "outside": "tx-finish-not-atomic",
    "read-after": "tx-read-after",
    "write-outside": "tx-finish-not-atomic",
    "not-immediate": "tx-finish-deferred",
    "exclusive": "tx-exclusive",
    "several": "tx-finish-not-atomic",
    "left-open": "tx-left-open",
}


# -- what the checks expect ------------------------------------------------------------------------
def expect_atomic(lab: Lab, function: str) -> None:
    """The last call ran one statement on jobs, or all of them inside one BEGIN IMMEDIATE ...
    COMMIT, and left no transaction open. claim must run at least one (finish may decide
    without SQL, e.g. a stamp whose lease has visibly ended). Which statements are on jobs is
    what SQLite's authorizer told (txshape.on_jobs)."""
    statements = lab.traced_of(lab.calls)
    found = txshape.problem(statements, need_sql=function == "claim")
    if found:
        detail = CLAIM_DETAIL[found.code] if function == "claim" else FINISH_DETAIL[found.code]
        lab.fail(detail, function=function, begin=found.begin,
                 statements=txshape.listing(statements, found.at))
    expect_no_transaction_left(lab, function)


#: A plain write that changes nothing: in autocommit it commits by itself; on a connection
#: whose isolation_level a call set and did not restore, Python's sqlite3 opens a transaction
#: before it (its implicit BEGIN before INSERT/UPDATE/DELETE).
PLAIN_WRITE = "UPDATE jobs SET qty = qty WHERE 0"


def expect_connection_as_handed(lab: Lab, function: str) -> None:
    """After `function` returned, conn is as lab.store.connect opened it: in autocommit, so a
    plain statement of the next user of conn (the store's enqueue, another call) commits by
    itself and leaves no transaction open."""
    lab.conn.execute(PLAIN_WRITE)
    if lab.conn.in_transaction:
        lab.conn.execute("ROLLBACK")
        lab.fail("tx-autocommit-changed", function=function, statement=PLAIN_WRITE)


#: The sentence of a call that returned after the ERROR fault (a database error, not a lock).
ERROR_SWALLOWED = {"claim": "tx-error-swallowed", "finish": "tx-error-swallowed",
                   "work_once": "tx-claim-error-swallowed-in-work-once"}


def expect_failed_cleanly(lab: Lab, function: str, error: BaseException | None,
                          rows_before: dict[int, dict], came_back: object = None,
                          kind: str = ABORT) -> None:
    """A statement inside `function` failed (the injected fault of `kind`): it re-raised, rolled
    back, and released the lock."""
    if error is None and kind == ERROR:
        lab.fail(ERROR_SWALLOWED[function], function=function, came_back=show(came_back),
                 error=fault_error(lab, kind))
    if error is None:
        lab.fail("tx-did-not-raise", function=function, came_back=show(came_back))
    described = error_line(error)
    if not is_the_fault(lab, error, kind):
        hidden = hidden_fault(lab, error, kind)
        if hidden is not None:
            lab.fail("tx-error-hidden", function=function, error=described, hidden=hidden)
        lab.fail("tx-other-error", function=function, error=described)
    if lab.conn.in_transaction:
        lab.fail("tx-open-after-error", function=function, error=described)
    expect_others_can_write(lab, function)
    for job, row in rows_before.items():
        lab.expect_row(job, row, detail="tx-not-rolled-back", function=function)


def expect_locked_raised(lab: Lab, function: str, conn, call, rows: dict[int, dict],
                         held=write_lock_held, left_open: str = "tx-open-after-error",
                         swallowed: str = "tx-locked-swallowed") -> None:
    """`call` runs while another connection holds a lock for all of it (`held`: the write
    lock, or a read lock that only a COMMIT meets), on `conn` (busy timeout LOCKED_BUSY_MS):
    it must raise SQLite's error (or one that wraps it), leave no transaction open on `conn`,
    and change no row."""
    with held(lab, LOCKED_BUSY_MS):
        came_back, error = attempt(lab, call)
        still_open = conn.in_transaction
    expect_locked_error(lab, function, came_back, error, still_open, swallowed=swallowed,
                        left_open=left_open)
    expect_rows(lab, rows, detail="tx-not-rolled-back", function=function)


def expect_locked_error(lab: Lab, function: str, came_back, error: BaseException | None,
                        still_open: bool, swallowed: str = "tx-locked-swallowed",
                        left_open: str = "tx-open-after-error") -> None:
    """What came out of a call that met "database is locked": that error (or one wrapping it),
    nothing masking it, and no transaction left open."""
    if error is None:
        lab.fail(swallowed, function=function, came_back=show(came_back),
                 busy_ms=LOCKED_BUSY_MS)
    masked = masked_locked_error(error)
    if masked is not None:
        lab.fail("tx-locked-masked", function=function, error=error_line(error), masked=masked)
    if not is_locked_error(error):
        hidden = hidden_locked_error(error)
        if hidden is not None:
            lab.fail("tx-error-hidden", function=function, error=error_line(error),
                     hidden=hidden)
        lab.fail("tx-locked-other-error", function=function, error=error_line(error))
    if still_open:
        lab.fail(left_open, function=function, error=error_line(error))


def file_journal_mode(lab: Lab) -> str:
    """The journal mode of the database file, lower case, as a fresh connection finds it
    (plain: store.connect would set the mode itself; it waits as the Lab's own connection does,
    `Lab.wait_ms`, and a file locked even for reading is a lock the target still holds:
    judge_write)."""
    fresh = sqlite3.connect(str(lab.path), timeout=lab.wait_ms / 1000)
    try:
        with judge_write(reading=True):
            return fresh.execute("PRAGMA journal_mode").fetchone()[0].lower()
    finally:
        fresh.close()


def expect_rollback_journal(lab: Lab, after: str) -> None:
    """The database file, and lab.conn, still use the rollback journal (journal_mode=delete)."""
    on_file = file_journal_mode(lab)
    if on_file != "delete":
        lab.fail("tx-journal-file", mode=on_file, after=after)
    on_conn = lab.conn.journal_mode()
    if on_conn.lower() != "delete":
        lab.fail("tx-journal-conn", mode=on_conn, after=after)


def some_claim(lab: Lab, role: str, now: int, job: int):
    """Setup: the worker cast as `role` claims at `now` and must get a Claim to finish with
    (what it holds is graded by the claim checks)."""
    with lab.setup():
        got = lab.claim(lab.world.name(role), now=now, lease_ms=lab.world.lease_ms)
        if got is None:
            lab.fail("tx-no-claim", job=job)
    return got


def current_stamp(lab: Lab, role: str, job: int) -> Claim:
    """Setup: `job`'s row is leased to the worker cast as `role` (its claim took it); the stamp
    that row holds, which a finish must accept while the lease runs (what claim returned is
    graded by the claim checks)."""
    with lab.setup():
        row = lab.row(job)
        if row is None or row["status"] != "leased" or row["owner"] != lab.world.name(role):
            lab.fail("tx-no-claim", job=job)
        return Claim(id=job, qty=row["qty"], owner=row["owner"], token=row["token"],
                     attempt=row["attempts"], lease_until=row["lease_until"])


#: The sentence of a function that wrote nothing where it had to.
WROTE_NOTHING = {"claim": "tx-claim-wrote-nothing", "finish": "tx-finish-wrote-nothing"}


def expect_wrote(lab: Lab, function: str, job: int, came_back, error) -> None:
    """The situation needed `function` to write `job`'s row (it was claimable; its stamp was
    current), the grader's fault waited on that write, and it never fired: the function wrote
    nothing where it had to, and there was nothing to roll back. A failure, never a pass."""
    lab.fail(WROTE_NOTHING[function], function=function, job=job,
             came_back=show(came_back), error="" if error is None else "; " + error_line(error),
             statements=txshape.listing(lab.statements_of(lab.calls)))


# -- the checks ------------------------------------------------------------------------------------
@check("claim-in-one-immediate-transaction", points=3)
def test_claim_in_one_immediate_transaction(lab):
    """A claim that takes a job, and one that finds nothing (the job is held), each run their
    statements on jobs inside one BEGIN IMMEDIATE ... COMMIT and leave no transaction open, and
    conn in autocommit (a plain statement after it commits by itself)."""
    w = lab.world
    lab.enqueue(qty=5)
    lab.claim(w.name("A"), now=w.t0, lease_ms=w.lease_ms)  # takes the job
    expect_atomic(lab, "claim")
    expect_connection_as_handed(lab, "claim")
    # A's lease is valid: nothing to take
    lab.claim(w.name("B"), now=w.t0 + w.lease_ms - 1, lease_ms=w.lease_ms)
    expect_atomic(lab, "claim")
    expect_connection_as_handed(lab, "claim")


@check("claim-rolls-back-on-error", points=2)
def test_claim_rolls_back_on_error(lab):
    """A statement inside claim fails (first its UPDATE that leases the job, then its quarantine
    UPDATE), with an IntegrityError and then with an OperationalError that is not a lock (a
    full disk, an I/O error): claim re-raises, rolls back everything, releases the lock; the
    same error comes out of work_once, whose claim fails; then claim works again. The job is
    claimable, so a claim that never makes the UPDATE to leased fails (a claim with no
    quarantine step has nothing to inject into there: the quarantine checks grade it)."""
    w = lab.world
    now = w.t0 + w.pick("now", 10, 1, w.lease_ms)
    stale = lab.enqueue(qty=1, deadline=now)  # its deadline has come: claim quarantines it first
    job = lab.enqueue(qty=5)
    for status in ("leased", "quarantined"):
        for kind in KINDS:
            # (a claim with no quarantine step took the job in the round before this one)
            before = {j: lab.row(j) for j in (stale, job)}
            with injected_fault(lab, status, kind) as fault:
                came_back, error = attempt(lab, lambda: lab.claim(w.name("A"), now=now,
                                                                  lease_ms=w.lease_ms))
            if not fault.fired and status == "leased":  # the job is claimable: claim must lease
                expect_wrote(lab, "claim", job, came_back, error)
            if not fault.fired:
                continue  # a claim with no quarantine step: graded by the quarantine checks
            expect_failed_cleanly(lab, "claim", error, before, came_back, kind)
        if status == "leased":  # (before a claim with no quarantine step takes the job)
            expect_work_once_raises(lab, now, before)
    lab.enqueue(qty=7)  # so that something is claimable even if a step above took a job
    claimed, error = attempt(lab, lambda: lab.claim(w.name("A"), now=now, lease_ms=w.lease_ms))
    if error is not None or claimed is None:
        lab.fail("tx-works-again", function="claim", came_back=show(claimed),
                 error="" if error is None else "; " + error_line(error))
    expect_no_transaction_left(lab, "claim")


def expect_work_once_raises(lab: Lab, now: int, before: dict[int, dict]) -> None:
    """The claim inside work_once fails with a database error that is not a lock: the error
    comes out of work_once, rolled back, and nothing is sent. A work_once whose claim never
    makes the UPDATE to leased is graded by the work_once checks."""
    w, sent = lab.world, []
    with injected_fault(lab, "leased", ERROR) as fault:
        came_back, error = attempt(lab, lambda: lab.work_once(
            w.name("A"), sent.append, ManualClock(now), w.lease_ms))
    if fault.fired:
        expect_failed_cleanly(lab, "work_once", error, before, came_back, ERROR)


@check("finish-leaves-no-transaction", points=2)
def test_finish_leaves_no_transaction(lab):
    """finish, rejected and accepted, is one statement or one BEGIN IMMEDIATE transaction and
    leaves no transaction open, and conn in autocommit; when its UPDATE fails (an IntegrityError,
    then an OperationalError that is not a lock) it re-raises and rolls back. It is given the stamp C's row holds (C's claim must have taken the job): while
    it is current, a finish that never makes the UPDATE to done fails."""
    expired = lab.world.t0 + lab.world.lease_ms  # A's lease has run out
    job = lab.enqueue(qty=5)
    a = some_claim(lab, "A", lab.world.t0, job)
    lab.finish(a, now=expired + 1)  # the lease has run out: rejected
    expect_atomic(lab, "finish")
    expect_connection_as_handed(lab, "finish")
    b = some_claim(lab, "B", expired + 1, job)
    lab.finish(b, now=expired + 2)  # B's stamp is current: accepted
    expect_atomic(lab, "finish")
    expect_connection_as_handed(lab, "finish")
    job = lab.enqueue(qty=3)
    some_claim(lab, "C", expired + 2, job)
    c = current_stamp(lab, "C", job)  # the stamp the row holds: a finish must land with it
    before = {job: lab.row(job)}
    now = expired + 3
    for kind in KINDS:  # an IntegrityError, then an OperationalError that is not a lock
        with injected_fault(lab, "done", kind) as fault:
            came_back, error = attempt(lab, lambda: lab.finish(c, now=now))
        if fault.fired:
            expect_failed_cleanly(lab, "finish", error, before, came_back, kind)
        elif now < c.lease_until and now < before[job]["deadline"]:  # the stamp is current
            expect_wrote(lab, "finish", job, came_back, error)


LOCKED_BUSY_MS = 1  # the busy timeout of the connection claim/finish/work_once get while locked
#: (the lock is held for the whole call, so any wait ends in the error: a short one costs little)


@check("locked-database-raises", points=2)
def test_locked_database_raises(lab):
    """Another connection holds the write lock for the whole call and the connection given to
    the target waits 1 ms: claim, finish and work_once each raise (database is locked), leave
    no transaction open and change no row; nothing is sent. Then the lock comes later: while
    another connection reads, claim's COMMIT meets it; while send runs, the write lock is
    taken and work_once's finish meets it: each raises, and leaves no transaction open."""
    # Opened first: store.connect sets the journal mode, which a claim may have changed since.
    w = lab.world
    conn = lab.connect(busy_timeout_ms=LOCKED_BUSY_MS)
    try:
        with lab.setup():
            job = lab.enqueue(qty=5)
            a = some_claim(lab, "A", w.t0, job)
            expect_no_transaction_left(lab, "claim")  # else the grader could not take the lock
        other = lab.enqueue(qty=7)  # claimable: a claim that got through would take it
        rows = snapshot(lab, job, other)
        now = w.t0 + w.pick("now", 10, 0, w.lease_ms - 1)  # A's lease is valid
        clock, sent = ManualClock(now), []
        for function, call in (
                ("claim", lambda: lab.claim(w.name("B"), now=now, lease_ms=w.lease_ms,
                                            conn=conn)),
                ("finish", lambda: lab.finish(a, now=now, conn=conn)),
                ("work_once", lambda: lab.work_once(w.name("C"), sent.append, clock, w.lease_ms,
                                                    conn=conn))):
            expect_locked_raised(lab, function, conn, call, rows,
                                 swallowed="tx-locked-swallowed")
        # claim gets the write lock, but its COMMIT waits for a reader that does not finish
        # (with the rollback journal: in WAL a reader never blocks a COMMIT, and a switch to
        # WAL is journal-mode-stays-delete's to grade)
        if file_journal_mode(lab) == "delete":
            expect_locked_raised(lab, "claim", conn, lambda: lab.claim(
                w.name("B"), now=now, lease_ms=w.lease_ms, conn=conn), rows,
                held=read_lock_held, left_open="tx-open-after-commit-failed",
                swallowed="tx-commit-locked-swallowed")
        expect_finish_locked_in_work_once(lab, conn, now, rows[other])
    finally:
        conn.close()


def expect_finish_locked_in_work_once(lab: Lab, conn, now: int, row: dict) -> None:
    """work_once claims the job whose row is `row`; while send runs another connection takes
    the write lock and holds it to the end of the call, so finish meets "database is locked":
    work_once must let it out, leave no transaction open, and the job stays leased as claimed."""
    w, sent, taken, ran = lab.world, [], [], []
    with contextlib.ExitStack() as held:
        def send(claim):
            sent.append(claim)
            try:
                held.enter_context(write_lock_held(lab, LOCKED_BUSY_MS))
                taken.append(True)
            except WriteLocked:
                pass  # the target holds a lock during send: lock-free-during-send's rule
            ran.append(lab.target.statements_so_far())

        came_back, error = attempt(lab, lambda: lab.work_once(
            w.name("C"), send, ManualClock(now), w.lease_ms, conn=conn))
        left_open = conn.in_transaction
    if not taken or len(sent) != 1 or type(sent[0]) is not Claim or sent[0].id != row["id"]:
        return  # what work_once claims and sends, and when, is graded by the work_once checks
    if error is None and lab.last_ran == ran[-1]:
        return  # no statement after send: finish never met the lock (work-once-fresh-clock's)
    expect_locked_error(lab, "work_once", came_back, error, left_open,
                        swallowed="tx-locked-finish-swallowed")
    c = sent[0]
    lab.expect_row(row["id"], {**row, "status": "leased", "owner": c.owner, "token": c.token,
                               "attempts": c.attempt, "lease_until": c.lease_until},
                   detail="tx-finish-locked-row", function="work_once")


@check("journal-mode-stays-delete", points=1)
def test_journal_mode_stays_delete(lab):
    """After claim and after finish, the database still uses the rollback journal (not WAL).
    The claim must have taken the claimable job (its row leased to A): a claim that writes
    nothing leaves any journal mode as it was, and passes nothing here."""
    w = lab.world
    job = lab.enqueue(qty=5)
    before = lab.row(job)
    a = lab.claim(w.name("A"), now=w.t0, lease_ms=w.lease_ms)
    expect_rollback_journal(lab, after="claim")
    after = lab.row(job)
    if after is None or after["status"] != "leased" or after["owner"] != w.name("A"):
        until = min(w.t0 + w.lease_ms, before["deadline"])
        lab.fail("tx-journal-nothing-written", job=job, diff=RowDiff(job, after, expected_row(
            before, status="leased", owner=w.name("A"), token=before["token"] + 1,
            attempts=before["attempts"] + 1, lease_until=until)))
    if a is not None:
        lab.finish(a, now=w.t0 + 1)
        expect_rollback_journal(lab, after="finish")

