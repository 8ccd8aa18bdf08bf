"""work_once returns False when there is nothing to claim.

False already means "the finish was rejected": a caller polling the queue cannot tell an idle
queue from a lost lease."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"work-once-empty-queue"}
MAY_FAIL = {"integration-run", "random-timelines"}
EXPECT_TEXT = {"work-once-empty-queue": "must return None"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return False
    send(c)
    return finish(conn, c, clock())
