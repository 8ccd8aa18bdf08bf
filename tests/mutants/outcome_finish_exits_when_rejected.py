"""Purpose-built crash: finish ends the whole process (os._exit) when its stamp is rejected.

It stands for a worker that "exits on conflict": the grader must report an *errored* check with
the exit code and the call that was running, never crash or hang itself."""

import os

from _kit import reference_claim as claim
from _kit import reference_finish, work_once_with

EXPECT_FAIL = {"double-finish-rejected", "finish-after-expiry", "finish-at-deadline",
               "finish-at-expiry", "finish-at-moved-deadline", "finish-leaves-no-transaction",
               "finish-on-quarantined-rejected", "forged-stamp-attempt", "forged-stamp-id",
               "forged-stamp-lease-until", "forged-stamp-owner", "forged-stamp-token",
               "lesson-timeline", "same-name-restart", "work-once-fresh-clock"}
MAY_FAIL = {"integration-run", "random-timelines",
            "late-finish-job-done", "late-finish-lease-taken", "late-finish-past-deadline",
            "late-finish-same-name"}  # work_once meets the rejected finish's exit
OUTCOME = "errored"
EXPECT_TEXT = {"finish-at-expiry": "exit code 75"}


def finish(conn, claim, now):
    if not reference_finish(conn, claim, now):
        os._exit(75)
    return True


work_once = work_once_with(claim, finish)
