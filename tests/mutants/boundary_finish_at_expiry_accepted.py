"""finish accepts now <= lease_until: at exactly lease_until the old holder still wins.

The boundary is read the other way from the lesson: the lease is valid only while
now < lease_until, so at now == lease_until both A (finishing) and B (re-claiming) would
believe they hold the job."""

from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-at-expiry"}


def finish(conn, claim, now):
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ? AND status = 'leased'"
        " AND owner = ? AND token = ? AND attempts = ? AND lease_until = ?"
        " AND ? <= lease_until AND ? < deadline",
        (now, claim.id, claim.owner, claim.token, claim.attempt, claim.lease_until, now, now),
    )
    return cur.rowcount == 1


work_once = work_once_with(claim, finish)
