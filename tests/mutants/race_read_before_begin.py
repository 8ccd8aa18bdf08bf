"""claim reads the pending job before BEGIN IMMEDIATE, then updates it by id without looking again.

The selection runs in autocommit, outside the write transaction: two workers can both read the
job as pending, then take turns at the write lock and both update it (a double claim: the
second overwrites the first). Alone, it behaves exactly like the reference."""

from _claim_parts import QUARANTINE, lease, select, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"claim-in-one-immediate-transaction", "race-one-winner"}
EXPECT_TEXT = {"race-one-winner": "Both processes got a Claim"}


def claim(conn, owner, now, lease_ms):
    job = select(conn, now)  # autocommit: nothing holds the job for us

    def body():
        conn.execute(QUARANTINE, {"now": now})
        return None if job is None else lease(conn, job, owner, now, lease_ms)

    return transaction(conn, "BEGIN IMMEDIATE", body)


work_once = work_once_with(claim, finish)
