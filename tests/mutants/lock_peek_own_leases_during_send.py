"""work_once checks that its owner holds a leased job before it sends, with a SELECT of the
owner's leases read by fetchone() only: when the owner holds two leases or more (restarted under
the same name while its earlier lease runs, the lesson's case), that statement is still running
while send runs, and keeps its read lock across the network call though no transaction is open.

Found by a blind set written from the contract alone: every check passed, because no check sent
while the owner held a second lease. The lock probe's second round (A restarted under the same
name, its earlier lease still running) meets it; work_once's rule at every send (no transaction
open, no statement running: invariants.Rules.sends) names it wherever it happens."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"lock-free-during-send"}
MAY_FAIL = {"random-timelines", "integration-run"}  # where a worker happens to hold two leases
EXPECT_TEXT = {"lock-free-during-send": "No transaction was open: a statement of its connection"
                                        " was still running"}
EXPECT_NO_TEXT = {"lock-free-during-send": "A transaction held across a network call"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    mine = conn.execute("SELECT id FROM jobs WHERE owner = ? AND status = 'leased' ORDER BY id",
                        (owner,))
    if mine.fetchone() is None:  # one row read: with two leases or more, the statement runs on
        raise RuntimeError("the claimed job is not leased to us")
    send(c)
    return finish(conn, c, clock())
