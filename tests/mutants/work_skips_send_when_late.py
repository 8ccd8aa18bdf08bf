"""work_once reads the clock again before send and, if the lease has already run out, returns
False without sending.

A blind instructor's bug, which looks prudent: but the contract calls send once for every job
claim returned, and only finish (with a reading taken after send) decides; a job claimed and
never delivered is lost for a lease. work-once-fresh-clock's third work_once has a claim that
takes its whole lease (it scored 100 while the clock stood still until a send had ended)."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"work-once-fresh-clock"}
EXPECT_TEXT = {"work-once-fresh-clock": "send was called 0 time(s)"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    if clock() >= c.lease_until:
        return False
    send(c)
    return finish(conn, c, clock())
