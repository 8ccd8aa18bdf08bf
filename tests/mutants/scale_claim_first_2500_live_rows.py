"""claim reads the live rows a page at a time (`fetchmany(2500)`) and looks for a claimable job
in the first page only, checking the lease's expiry in Python.

When the first 2,500 live jobs are all held on valid leases, a claimable job after them is never
found: any number of jobs may be held at once. Found by a blind set written from the contract
alone, when lowest-id-first held 2,000 jobs: it now holds over 4,200."""

from _claim_parts import LIVE_ROWS, first_claimable, lease, quarantine, transaction
from _kit import reference_finish as finish
from _kit import work_once_with

# the class scale_claim_first_64_live_rows carries through every suite, at a larger size
LIGHT = True
EXPECT_FAIL = {"lowest-id-first"}
MAY_FAIL = {"random-timelines"}  # where a drawn crowd is over 2,500
EXPECT_TEXT = {"lowest-id-first": "Came back: None"}


def claim(conn, owner, now, lease_ms):
    def body():
        quarantine(conn, now)
        cursor = conn.execute(LIVE_ROWS)
        page = cursor.fetchmany(2500)
        cursor.close()
        job = first_claimable(page, now)
        return None if job is None else lease(conn, job, owner, now, lease_ms)

    return transaction(conn, "BEGIN IMMEDIATE", body)


work_once = work_once_with(claim, finish)
