"""claim updates the row inside BEGIN IMMEDIATE, commits, then reads the Claim back with a SELECT.

The lease is taken atomically, but the stamp returned is read after the lock was released: by
then another worker (or an operator) may have changed the row. The read belongs before COMMIT
(or in the UPDATE's RETURNING). The diagnosis is a read after COMMIT, not "a read before BEGIN
IMMEDIATE"."""

from lab.store import Claim

from _claim_parts import UPDATE, quarantine, select, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction"}
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "read jobs after its transaction ended"}
EXPECT_NO_TEXT = {"claim-in-one-immediate-transaction": "a read before BEGIN IMMEDIATE"}


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        job = select(conn, now)
        if job is not None:
            conn.execute(UPDATE, {"owner": owner, "now": now, "lease_ms": lease_ms,
                                  "id": job}).fetchall()
        return job

    job = transaction(conn, "BEGIN IMMEDIATE", body)
    if job is None:
        return None
    row = conn.execute("SELECT id, qty, owner, token, attempts, lease_until FROM jobs"
                       " WHERE id = ?", (job,)).fetchone()  # the bug: read after COMMIT
    return Claim(*row)


work_once = work_once_with(claim, finish)
