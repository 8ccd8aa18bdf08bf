"""claim quarantines at most 1,000 jobs per call (one batch: `... WHERE id IN (SELECT ... LIMIT
1000)`), "to keep the transaction short".

With more than 1,000 jobs due at once, the rest stay pending past their deadline until later
claims get to them: any number of jobs may be due at once. The hand-written check's crowd is
1,000 jobs in the lesson's world (a batch takes it whole); the random timeline at the domain's
size has more."""

from _claim_parts import NOT_VALID, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
MAY_FAIL = {"quarantine-past-deadline"}  # in a drawn world whose crowd is over 1,000
EXPECT_TEXT = {"random-timelines": "status=pending"}

BATCH = (f"UPDATE jobs SET status = 'quarantined' WHERE id IN (SELECT id FROM jobs WHERE"
         f" {NOT_VALID} AND (attempts >= max_attempts OR deadline <= :now) ORDER BY id"
         " LIMIT 1000)")


def claim(conn, owner, now, lease_ms):
    import _claim_parts

    def body():
        conn.execute(BATCH, {"now": now})
        job = _claim_parts.select(conn, now)
        return None if job is None else _claim_parts.lease(conn, job, owner, now, lease_ms)

    return transaction(conn, "BEGIN IMMEDIATE", body)


work_once = work_once_with(claim, finish)
