"""finish raises when the stamp no longer holds, instead of returning False.

A rejected finish is an ordinary answer ("your lease is gone"), not an error: the worker must be
able to read it as False and move on. Raising turns every late finish into a crash of the worker."""

from _kit import reference_claim as claim
from _kit import reference_finish, work_once_with

EXPECT_FAIL = {"double-finish-rejected", "finish-after-expiry", "finish-at-deadline",
               "finish-at-expiry", "finish-at-moved-deadline", "finish-leaves-no-transaction",
               "finish-on-quarantined-rejected", "forged-stamp-attempt", "forged-stamp-id",
               "forged-stamp-lease-until", "forged-stamp-owner", "forged-stamp-token",
               "lesson-timeline", "same-name-restart", "work-once-fresh-clock"}
MAY_FAIL = {"integration-run", "random-timelines",
            "late-finish-job-done", "late-finish-lease-taken", "late-finish-past-deadline",
            "late-finish-same-name"}  # work_once meets the rejected finish's error
OUTCOME = "errored"
EXPECT_TEXT = {"finish-at-expiry": "RuntimeError: lease lost for job {id:1}"}




def finish(conn, claim, now):
    if not reference_finish(conn, claim, now):
        raise RuntimeError(f"lease lost for job {claim.id}")
    return True


work_once = work_once_with(claim, finish)
