"""work_once looks its claimed row up by iterating a cursor over every job and breaks out at its
row, then sends while that cursor is still alive: the statement is unfinished, so it keeps its
read lock across the network call, though no transaction is open.

The lock probe then tells what held the lock: a statement still running, not a transaction
(it used to say "A transaction held across a network call" with in_transaction false)."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"lock-free-during-send", "integration-run"}
MAY_FAIL = {"random-timelines", "work-once-send-raises",  # the same lock, met after the call
            "late-finish-in-time"}  # the same lock, met by the other worker's claim inside send
EXPECT_TEXT = {"lock-free-during-send": "No transaction was open: a statement of its connection"
                                        " was still running"}
EXPECT_NO_TEXT = {"lock-free-during-send": "A transaction held across a network call"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    cur = conn.execute("SELECT id, status, owner, token FROM jobs ORDER BY id")
    for row in cur:
        if row[0] == c.id:
            break  # the rest of the rows not read: the statement still runs
    if row[0] != c.id or row[1] != "leased" or row[2] != owner or row[3] != c.token:
        return False
    send(c)
    return finish(conn, c, clock())
