"""Purpose-built hang: finish spins forever when called exactly at lease_until.

It stands for a retry loop that waits for a condition that can never come true ("wait until the
lease is over, then retry"): the grader must report it as *timed out*, naming the finish call that
was running, and go on with the other checks."""

from _kit import reference_claim as claim
from _kit import reference_finish, work_once_with

EXPECT_FAIL = {"finish-at-expiry", "finish-at-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_OUTCOME = {"finish-at-expiry": "timed_out", "finish-at-deadline": "timed_out"}
EXPECT_TEXT = {"finish-at-expiry": "finish does not return: every call timed out"}  # the cause


def finish(conn, claim, now):
    while now == claim.lease_until:
        pass
    return reference_finish(conn, claim, now)


work_once = work_once_with(claim, finish)
