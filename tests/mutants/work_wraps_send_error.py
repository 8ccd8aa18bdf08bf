"""work_once turns send's exception into RuntimeError("delivery failed") from the original.

The caller must get send's own exception (or one of its type): a worker loop that handles a lost
connection by its type (ConnectionError, the receiver's refusal) no longer recognises it."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"work-once-send-raises"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"work-once-send-raises": "let send's own exception propagate"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    try:
        send(c)
    except Exception as err:
        raise RuntimeError("delivery failed") from err
    return finish(conn, c, clock())
