"""claim quarantines only the spent jobs it passes on the way to the one it takes, not all of them.

Walking the jobs in id order and quarantining each spent one until a claimable job turns up leaves
spent jobs with higher ids untouched."""

from _claim_parts import NOT_VALID, UPDATE, in_write_transaction
from _kit import reference_finish as finish
from _kit import work_once_with

from lab.store import Claim

EXPECT_FAIL = {"quarantine-past-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline


def claim(conn, owner, now, lease_ms):
    params = {"owner": owner, "now": now, "lease_ms": lease_ms}

    def body():
        candidates = conn.execute(f"SELECT id, attempts, max_attempts, deadline FROM jobs"
                                  f" WHERE {NOT_VALID} ORDER BY id", params).fetchall()
        for job, attempts, max_attempts, deadline in candidates:
            if attempts >= max_attempts or deadline <= now:
                conn.execute("UPDATE jobs SET status = 'quarantined' WHERE id = ?", (job,))
                continue
            return Claim(*conn.execute(UPDATE, {**params, "id": job}).fetchone())
        return None

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
