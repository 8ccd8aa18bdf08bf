"""work_once takes send returning False for "not delivered" and returns False without
finishing.

What send returns means nothing: a real callable returns None, False, 0 or any object, and
work_once calls finish after send returns, whatever it returned; only an exception stops it."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"work-once-fresh-clock", "late-finish-in-time"}
MAY_FAIL = {"late-finish-job-done", "late-finish-lease-taken", "late-finish-past-deadline",
            "late-finish-same-name", "lock-free-during-send", "locked-database-raises",
            "work-once-empty-queue", "random-timelines"}
EXPECT_TEXT = {"work-once-fresh-clock": "finish was never called"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    if send(c) is False:
        return False
    return finish(conn, c, clock())
