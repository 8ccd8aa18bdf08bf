"""work_once keeps one BEGIN IMMEDIATE open from the claim through send to the finish.

"Nobody can interfere while I hold the lock": but the job is sent before its claim is
committed, every other worker and new intake waits for the network, and if send raises the
rollback also undoes the claim."""

from _claim_parts import all_steps
from _kit import reference_claim as claim
from _kit import reference_finish as finish

EXPECT_FAIL = {"integration-run", "lock-free-during-send", "work-once-fresh-clock",
               "work-once-send-raises"}
MAY_FAIL = {"locked-database-raises", "random-timelines",  # the same bug, met again on a random timeline
            # the same lock, met by the other worker inside send
            "late-finish-in-time", "late-finish-job-done", "late-finish-lease-taken",
            "late-finish-past-deadline", "late-finish-same-name"}
EXPECT_TEXT = {"work-once-fresh-clock": "calls send while its connection has a transaction open"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'work-once-empty-queue'}


def work_once(conn, owner, send, clock, lease_ms):
    conn.execute("BEGIN IMMEDIATE")
    try:
        c = all_steps(conn, owner, clock(), lease_ms)
        if c is None:
            conn.execute("COMMIT")
            return None
        send(c)
        done = finish(conn, c, clock())  # one UPDATE: runs inside the open transaction
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return done
