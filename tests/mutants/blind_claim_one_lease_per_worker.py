"""claim gives a worker nothing while it still holds a valid lease on another job.

"One job per worker at a time" is a rule of the student's own: the contract lets a worker hold
several leases, and hands it the lowest claimable job whatever else it holds."""

from _claim_parts import lease, quarantine, select, in_write_transaction
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}
MAY_FAIL = {"lock-free-during-send"}  # the probe's restarted A still holds its earlier lease
EXPECT_TEXT = {"random-timelines": "Came back: None"}

HOLDS_A_LEASE = ("SELECT 1 FROM jobs WHERE owner = :owner AND status = 'leased'"
                 " AND lease_until > :now")


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        if conn.execute(HOLDS_A_LEASE, {"owner": owner, "now": now}).fetchone():
            return None  # finish the job you have first
        job = select(conn, now)
        return None if job is None else lease(conn, job, owner, now, lease_ms)

    return in_write_transaction(conn, body)


work_once = work_once_with(claim, finish)
