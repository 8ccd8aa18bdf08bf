"""work_once runs ROLLBACK when send raises ("undo the claim"), then re-raises.

The claim is committed and no transaction is open during send, so the ROLLBACK itself fails with
"cannot rollback - no transaction is active", and that error replaces send's: the caller learns
of a database problem that is not there instead of the failed delivery."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"work-once-send-raises"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"work-once-send-raises": "cannot rollback - no transaction is active: let send's"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    try:
        send(c)
    except Exception:
        conn.execute("ROLLBACK")
        raise
    return finish(conn, c, clock())
