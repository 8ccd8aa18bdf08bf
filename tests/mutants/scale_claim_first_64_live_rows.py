"""claim's SELECT keeps the 64 lowest ids that are not done or quarantined (LIMIT 64), and the
lease's expiry is checked in Python over those.

When the first 64 live jobs are all held on valid leases, a claimable job after them is never
found: any number of jobs may be held at once."""

from _claim_parts import LIVE_ROWS, first_claimable, lease, quarantine, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

# the class blind_claim_first_nine_live_jobs carries through every suite, at the domain's size
LIGHT = True
EXPECT_FAIL = {"lowest-id-first", "random-timelines"}
EXPECT_TEXT = {"lowest-id-first": "a LIMIT before the lease is checked"}


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        job = first_claimable(conn.execute(f"{LIVE_ROWS} LIMIT 64").fetchall(), now)
        return None if job is None else lease(conn, job, owner, now, lease_ms)

    return transaction(conn, "BEGIN IMMEDIATE", body)


work_once = work_once_with(claim, finish)
