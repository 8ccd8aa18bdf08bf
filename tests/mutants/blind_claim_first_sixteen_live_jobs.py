"""claim's SELECT keeps the sixteen lowest ids that have attempts and time left (LIMIT 16), and
the lease's expiry is checked in Python over those.

"SQL narrows it down, Python decides": but a job held on a valid lease passes the SELECT's
filter, and when the first sixteen such jobs are all held, the seventeenth is claimable and
claim returns None."""

from _claim_parts import in_write_transaction, lease, quarantine
from _kit import reference_finish as finish
from _kit import work_once_with

# the costliest mutant (its first difference is the last timeline of each hundred): the parity
# and the sweep see its class in blind_claim_first_nine_live_jobs
LIGHT = True
EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "Came back: None"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL = {'lowest-id-first'}


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        candidates = conn.execute(
            "SELECT id, status, lease_until FROM jobs"
            " WHERE status IN ('pending', 'leased') AND attempts < max_attempts"
            " AND deadline > ? ORDER BY id LIMIT 16", (now,)).fetchall()
        for job, status, until in candidates:
            if status == "pending" or until <= now:
                return lease(conn, job, owner, now, lease_ms)
        return None

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
