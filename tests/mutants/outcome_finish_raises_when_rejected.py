"""finish raises when the stamp no longer holds, instead of returning False.

A rejected finish is an ordinary answer ("your lease is gone"), not an error: the worker must be
able to read it as False and move on. Raising turns every late finish into a crash of the worker."""

from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"double-finish-rejected", "finish-after-expiry", "finish-at-deadline",
               "finish-at-expiry", "finish-leaves-no-transaction", "forged-stamp-attempt",
               "forged-stamp-id", "forged-stamp-lease-until", "forged-stamp-owner",
               "forged-stamp-token", "lesson-timeline", "same-name-restart",
               "work-once-fresh-clock"}
MAY_FAIL = {"integration-run"}
OUTCOME = "errored"
EXPECT_TEXT = {"finish-at-expiry": "RuntimeError: lease lost for job 1"}




def finish(conn, claim, now):
    cur = conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ? AND status = 'leased'"
        " AND owner = ? AND token = ? AND attempts = ? AND lease_until = ?"
        " AND ? < lease_until AND ? < deadline",
        (now, claim.id, claim.owner, claim.token, claim.attempt, claim.lease_until, now, now),
    )
    if cur.rowcount != 1:
        raise RuntimeError(f"lease lost for job {claim.id}")
    return True


work_once = work_once_with(claim, finish)
