"""work_once ignores its lease_ms argument and claims with the lesson's 1000 ms.

A hard-coded lease: callers that ask for a shorter or longer lease get 1000 ms anyway, so the
Claim and the row hold a lease_until nobody asked for."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "the contract sends [Claim(id=1, qty=1, owner='A', token=1, attempt=1, lease_until=1000000)]"}

LEASE_MS = 1000


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), LEASE_MS)
    if c is None:
        return None
    send(c)
    return finish(conn, c, clock())
