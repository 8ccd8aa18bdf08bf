"""work_once reads the clock once and finishes with the reading it took before send.

If sending outlasted the lease, finish still believes the lease holds: a job another worker may
already have re-claimed gets marked done, with a finished_at from before the send."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"work-once-fresh-clock",
               "late-finish-in-time", "late-finish-past-deadline"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"work-once-fresh-clock": "0 time(s) after it"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {
    'late-finish-job-done', 'late-finish-lease-taken', 'late-finish-same-name',
    'lock-free-during-send', 'work-once-empty-queue'}


def work_once(conn, owner, send, clock, lease_ms):
    now = clock()
    c = claim(conn, owner, now, lease_ms)
    if c is None:
        return None
    send(c)
    return finish(conn, c, now)
