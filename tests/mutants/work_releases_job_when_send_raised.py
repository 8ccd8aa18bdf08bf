"""work_once gives the job back when send raises (status 'pending', owner and lease_until NULL),
then re-raises: "another worker can retry it at once".

When send raises the job stays leased as claimed: the delivery may have reached the other side
before the error, and the lease is what keeps a second worker from sending it again before it
runs out."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"work-once-send-raises"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"work-once-send-raises": "the job must stay exactly as claim left it"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    try:
        send(c)
    except Exception:
        conn.execute("UPDATE jobs SET status = 'pending', owner = NULL, lease_until = NULL"
                     " WHERE id = ? AND token = ?", (c.id, c.token))
        raise
    return finish(conn, c, clock())
