"""work_once opens a transaction before send and commits it after finish.

Meant to make "check the job is still ours, send, finish" one unit, the transaction's first read
takes a shared lock that stays held across the network call: in the rollback journal no other
connection can commit a write (an enqueue, another worker's claim) until the reply comes back."""

from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"lock-free-during-send", "integration-run",
               # a rule of every call: work_once calls send with no transaction open
               "work-once-fresh-clock", "work-once-send-raises", "work-once-empty-queue",
               "locked-database-raises"}
# the same lock, met by the other worker inside send (in a random timeline's too)
MAY_FAIL = {"late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
            "late-finish-past-deadline", "late-finish-same-name", "random-timelines"}
EXPECT_TEXT = {"lock-free-during-send": "calls send while its connection has a transaction open",
               "integration-run": "calls send while its connection has a transaction open"}


def work_once(conn, owner, send, clock, lease_ms):
    c = claim(conn, owner, clock(), lease_ms)
    if c is None:
        return None
    conn.execute("BEGIN")  # the bug: a transaction around send and finish
    try:
        token = conn.execute("SELECT token FROM jobs WHERE id = ?", (c.id,)).fetchone()[0]
        send(c)
        done = token == c.token and finish(conn, c, clock())
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return done
