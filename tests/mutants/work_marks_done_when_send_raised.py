"""work_once finishes in a finally block: the job is marked done even when send raised.

The exception still propagates, but a job that was never delivered is recorded as done and
will never be retried."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"work-once-send-raises"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"work-once-send-raises": "leased, not done"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    try:
        send(c)
    finally:
        done = finish(conn, c, clock())
    return done
