"""finish returns None instead of False when it rejects a stamp (the row is left alone, rightly).

None is falsy, so a caller testing `if not finish(...)` does not notice; but the contract says
a rejected finish returns False, and work_once hands None on as "nothing to claim", so a worker
that lost its lease stops as if the queue were empty."""

from _kit import reference_claim as claim
from _finish_parts import update_where
from _kit import work_once_with

EXPECT_FAIL = {"double-finish-rejected", "finish-after-expiry", "finish-at-deadline",
               "finish-at-expiry", "finish-at-moved-deadline", "finish-leaves-no-transaction",
               "finish-on-quarantined-rejected", "forged-stamp-attempt", "forged-stamp-id",
               "forged-stamp-lease-until", "forged-stamp-owner", "forged-stamp-token",
               "lesson-timeline", "same-name-restart", "work-once-fresh-clock", "integration-run"}
MAY_FAIL = {"random-timelines",
            "late-finish-job-done", "late-finish-lease-taken", "late-finish-past-deadline",
            "late-finish-same-name"}  # work_once returns the rejected finish's None
EXPECT_TEXT = {
    # one cause for the checks where finish answers None: the file leads with it
    "finish-at-expiry": "finish returns a value of type NoneType; it must return bool",
    "work-once-fresh-clock": "The row is right; work_once returned None (NoneType): it must "
                             "return False",
    "integration-run": "came back None (NoneType) from work_once: a rejected finish must return "
                       "False",
}


def finish(conn, claim, now):
    return True if update_where(conn, claim, now).rowcount == 1 else None


work_once = work_once_with(claim, finish)
