"""claim quarantines at most 500 jobs per call (one batch: `... WHERE id IN (SELECT ... LIMIT
500)`), "to keep the transaction short".

With more than 500 jobs due at once, the rest stay pending past their deadline until later
claims get to them: any number of jobs may be due at once."""

from _claim_parts import NOT_VALID, all_steps, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"quarantine-past-deadline", "random-timelines"}
EXPECT_TEXT = {"quarantine-past-deadline": "not a first batch"}

BATCH = (f"UPDATE jobs SET status = 'quarantined' WHERE id IN (SELECT id FROM jobs WHERE"
         f" {NOT_VALID} AND (attempts >= max_attempts OR deadline <= :now) ORDER BY id"
         " LIMIT 500)")


def claim(conn, owner, now, lease_ms):
    import _claim_parts

    def body():
        conn.execute(BATCH, {"now": now})
        job = _claim_parts.select(conn, now)
        return None if job is None else _claim_parts.lease(conn, job, owner, now, lease_ms)

    return transaction(conn, "BEGIN IMMEDIATE", body)


work_once = work_once_with(claim, finish)
