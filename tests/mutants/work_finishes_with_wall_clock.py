"""work_once finishes with the wall clock, int(time.time() * 1000), instead of calling clock().

The queue's times are the logical clock the caller passes in; the wall clock in milliseconds is
some 1.7e12, far past any lease on that clock, so every honest finish is rejected (and on a
clock that does run on wall time, the two disagree)."""

import time

from _kit import reference_claim as claim
from _kit import reference_finish as finish

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"work-once-fresh-clock", "lock-free-during-send", "integration-run",
               "late-finish-in-time"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"work-once-fresh-clock": "1 time(s) before send and 0 time(s) after it"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {
    'late-finish-job-done', 'late-finish-lease-taken', 'late-finish-past-deadline',
    'late-finish-same-name', 'work-once-empty-queue'}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, int(time.time() * 1000))
