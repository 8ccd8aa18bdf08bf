"""work_once catches ConnectionError and TimeoutError from send and returns False.

"The network failed, so the job was not done" reads naturally, but the contract lets every
exception from send propagate: the caller must learn that the delivery is in doubt."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": 'send raised TimeoutError, but work_once returned False'}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    try:
        send(c)
    except (ConnectionError, TimeoutError):
        return False
    return finish(conn, c, clock())
