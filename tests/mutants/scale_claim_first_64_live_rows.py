"""claim's SELECT keeps the 64 lowest ids that are not done or quarantined (LIMIT 64), and the
lease's expiry is checked in Python over those.

When the first 64 live jobs are all held on valid leases, a claimable job after them is never
found: any number of jobs may be held at once."""

from _claim_parts import lease, quarantine, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

# the class blind_claim_first_nine_live_jobs carries through every suite, at the domain's size
LIGHT = True
EXPECT_FAIL = {"lowest-id-first", "random-timelines"}
EXPECT_TEXT = {"lowest-id-first": "a LIMIT before the lease is checked"}


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        rows = conn.execute(
            "SELECT id, status, lease_until, attempts, max_attempts, deadline FROM jobs"
            " WHERE status IN ('pending', 'leased') ORDER BY id LIMIT 64").fetchall()
        for job, status, until, attempts, max_attempts, deadline in rows:
            free = status == "pending" or until <= now
            if free and attempts < max_attempts and deadline > now:
                return lease(conn, job, owner, now, lease_ms)
        return None

    return transaction(conn, "BEGIN IMMEDIATE", body)


work_once = work_once_with(claim, finish)
