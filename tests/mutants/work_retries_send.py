"""work_once retries a failing send once before giving up ("the network is flaky").

One claim, two deliveries: the retry is work_once's own, invisible to the caller and to the
lease, and the receiver gets the job twice."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"work-once-send-raises"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"work-once-send-raises": "send was called 2 time(s)"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    try:
        send(c)
    except Exception:
        send(c)
    return finish(conn, c, clock())
