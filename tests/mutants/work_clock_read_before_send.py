"""work_once reads the clock a second time, but before send, and finishes with that reading.

It looks like a fresh reading, yet it is taken before the delivery: if sending outlasts the
lease, finish still believes the lease holds. The reading finish needs is the one after send
returns."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"work-once-fresh-clock",
               "late-finish-in-time", "late-finish-past-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"work-once-fresh-clock": "2 time(s) before send and 0 time(s) after it"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {
    'late-finish-job-done', 'late-finish-lease-taken', 'late-finish-same-name',
    'lock-free-during-send', 'work-once-empty-queue'}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    before_send = clock()
    send(c)
    return finish(conn, c, before_send)
