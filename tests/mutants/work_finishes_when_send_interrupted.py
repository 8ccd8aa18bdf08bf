"""work_once finishes the job when send is interrupted (KeyboardInterrupt), then re-raises.

A blind instructor's bug: "the delivery was probably done, record it before we stop". The
contract: if send raises, the exception propagates and the job stays leased as claimed, never
marked done; a KeyboardInterrupt is an exception of send's like any other, though no Exception.
work-once-send-raises interrupts a second send (it scored 100 while every send failure of the
grader's was an Exception)."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"work-once-send-raises"}
EXPECT_TEXT = {"work-once-send-raises": "KeyboardInterrupt"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    try:
        send(c)
    except (KeyboardInterrupt, SystemExit):
        finish(conn, c, clock())
        raise
    return finish(conn, c, clock())
