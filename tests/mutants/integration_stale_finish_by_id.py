"""finish marks the job done by id only: the worker that lost its lease still completes the job.

The lesson's courier A comes back with a success reply after B re-claimed the job; matching only
the id (no owner, token, attempts or lease condition), A's stale finish is accepted and
overwrites B's record. The token is in the stamp precisely so that this finish is rejected."""

from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"double-finish-rejected", "finish-after-expiry", "finish-at-deadline",
               "finish-at-expiry", "finish-at-moved-deadline", "finish-leaves-no-transaction",
               "finish-on-quarantined-rejected", "forged-stamp-attempt", "forged-stamp-id",
               "forged-stamp-lease-until", "forged-stamp-owner", "forged-stamp-token",
               "integration-run", "lesson-timeline", "same-name-restart", "work-once-fresh-clock",
               "late-finish-job-done", "late-finish-lease-taken", "late-finish-past-deadline",
               "late-finish-same-name"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"integration-run": "came back True"}


def finish(conn, claim, now):
    cur = conn.execute("UPDATE jobs SET status = 'done', finished_at = ? WHERE id = ?",
                       (now, claim.id))
    return cur.rowcount == 1


work_once = work_once_with(claim, finish)
