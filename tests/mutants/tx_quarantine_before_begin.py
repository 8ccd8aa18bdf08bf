"""claim runs its quarantine UPDATE before BEGIN IMMEDIATE, in autocommit.

The selection and the lease are inside one BEGIN IMMEDIATE transaction, but the quarantine is a
write of its own, committed at once: when the claim then fails, its rollback cannot undo the
quarantine (the claim is not all-or-nothing). This is a write outside the transaction, not a read
before it: the diagnosis must say so. Alone and without errors it behaves like the reference."""

from _claim_parts import QUARANTINE, lease, select, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction", "claim-rolls-back-on-error"}
EXPECT_TEXT = {"claim-in-one-immediate-transaction": "wrote to jobs outside its transaction"}
EXPECT_NO_TEXT = {"claim-in-one-immediate-transaction": "a read before BEGIN IMMEDIATE"}


def claim(conn, owner, now, lease_ms):
    conn.execute(QUARANTINE, {"now": now})  # autocommit: committed before the transaction

    def body():
        job = select(conn, now)
        return None if job is None else lease(conn, job, owner, now, lease_ms)

    return transaction(conn, "BEGIN IMMEDIATE", body)


work_once = work_once_with(claim, finish)
